//! controller-gen's `flattenAllOfInto`: how a field's own schema node is merged with the
//! schema of the named type it refers to. Go compares most keys by value, but pointer-typed
//! keys (`maximum`, `maxLength`, `default`, `items`, ...) never compare equal, so any
//! second value for them is "hoisted" into a residual `allOf: [{...dst}, {...src}]`: a field
//! can tighten its type's rule, not replace it. Since v0.22 `minProperties` and
//! `maxProperties` compare by value, and a field's list type and map keys replace its
//! type's. Reproduced here key by key.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrBool,
};

/// Merges `src` into `dst` as Go's `flattenAllOfInto(dst, src)` does. Descriptions, titles,
/// examples and external docs are not merged (the caller decides which one wins).
pub(crate) fn flatten_into(dst: &mut JSONSchemaProps, mut src: JSONSchemaProps) {
    for embedded in src.all_of.take().unwrap_or_default() {
        flatten_into(dst, embedded);
    }

    let mut dst_rest = JSONSchemaProps::default();
    let mut src_rest = JSONSchemaProps::default();
    let mut hoisted = false;

    // Keys Go compares by value: an equal value is kept once, a different one is hoisted.
    macro_rules! by_value {
        ($($key:ident),*) => {$(
            if let Some(value) = src.$key.take().filter(is_set) {
                match dst.$key.take().filter(is_set) {
                    None => dst.$key = Some(value),
                    Some(existing) if existing == value => dst.$key = Some(existing),
                    Some(existing) => {
                        hoisted = true;
                        dst_rest.$key = Some(existing);
                        src_rest.$key = Some(value);
                    }
                }
            }
        )*};
    }
    // Keys that are pointers or slices in Go: never equal, so a second value is hoisted.
    macro_rules! by_identity {
        ($($key:ident),*) => {$(
            if let Some(value) = src.$key.take().filter(is_set) {
                match dst.$key.take().filter(is_set) {
                    None => dst.$key = Some(value),
                    Some(existing) => {
                        hoisted = true;
                        dst_rest.$key = Some(existing);
                        src_rest.$key = Some(value);
                    }
                }
            }
        )*};
    }
    // Keys where the later value simply wins.
    macro_rules! later_wins {
        ($($key:ident),*) => {$(
            if let Some(value) = src.$key.take().filter(is_set) {
                dst.$key = Some(value);
            }
        )*};
    }

    by_value!(
        schema,
        id,
        format,
        pattern,
        exclusive_maximum,
        exclusive_minimum,
        max_properties,
        min_properties,
        unique_items,
        nullable,
        x_kubernetes_embedded_resource,
        x_kubernetes_int_or_string
    );
    by_identity!(
        ref_path,
        additional_items,
        any_of,
        one_of,
        not,
        default,
        definitions,
        dependencies,
        items,
        maximum,
        minimum,
        multiple_of,
        max_items,
        min_items,
        max_length,
        min_length,
        pattern_properties
    );
    later_wins!(
        x_kubernetes_preserve_unknown_fields,
        x_kubernetes_map_type,
        x_kubernetes_list_type,
        x_kubernetes_list_map_keys
    );

    // The type: the destination's wins. A mismatch is an error in controller-gen; the
    // attribute macros reject the markers that could cause one at compile time.
    if dst.type_.as_deref().is_none_or(str::is_empty) {
        dst.type_ = src.type_.take().filter(is_set);
    }
    // A field's enum is kept when the type has none (controller-gen v0.21).
    if dst.enum_.as_ref().is_none_or(Vec::is_empty)
        && let Some(values) = src.enum_.take().filter(is_set)
    {
        dst.enum_ = Some(values);
    }
    if let Some(properties) = src.properties.take().filter(is_set) {
        let merged = dst.properties.get_or_insert_with(Default::default);
        for (name, property) in properties {
            match merged.remove(&name) {
                Some(mut existing) => {
                    flatten_into(&mut existing, property);
                    merged.insert(name, existing);
                }
                None => {
                    merged.insert(name, property);
                }
            }
        }
    }
    if let Some(mut required) = src.required.take().filter(is_set) {
        let merged = dst.required.get_or_insert_with(Vec::new);
        merged.append(&mut required);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(value)) = src.additional_properties.take() {
        match dst.additional_properties.as_mut() {
            Some(JSONSchemaPropsOrBool::Schema(existing)) => flatten_into(existing, *value),
            _ => dst.additional_properties = Some(JSONSchemaPropsOrBool::Schema(value)),
        }
    }
    // CEL rules: the field's (src) first, then the type's.
    if let Some(mut rules) = src.x_kubernetes_validations.take().filter(is_set) {
        if let Some(existing) = dst.x_kubernetes_validations.take() {
            rules.extend(existing);
        }
        dst.x_kubernetes_validations = Some(rules);
    }

    if hoisted {
        let all_of = dst.all_of.get_or_insert_with(Vec::new);
        all_of.push(dst_rest);
        all_of.push(src_rest);
    }
    if let Some(required) = dst.required.as_mut() {
        required.sort();
        required.dedup();
    }
}

/// Go's zero values (empty string, `false`, empty collection) count as absent.
fn is_set<T: IsSet>(value: &T) -> bool {
    value.is_set()
}

trait IsSet {
    fn is_set(&self) -> bool;
}

impl IsSet for String {
    fn is_set(&self) -> bool {
        !self.is_empty()
    }
}

impl IsSet for bool {
    fn is_set(&self) -> bool {
        *self
    }
}

impl<T> IsSet for Vec<T> {
    fn is_set(&self) -> bool {
        !self.is_empty()
    }
}

impl<K, V> IsSet for std::collections::BTreeMap<K, V> {
    fn is_set(&self) -> bool {
        !self.is_empty()
    }
}

/// Pointer-like values are set whenever present.
macro_rules! always_set {
    ($($ty:ty),*) => {$(
        impl IsSet for $ty {
            fn is_set(&self) -> bool {
                true
            }
        }
    )*};
}
always_set!(
    f64,
    i64,
    Box<JSONSchemaProps>,
    JSONSchemaPropsOrBool,
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON,
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray
);

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::ValidationRule;

    fn rule(text: &str) -> ValidationRule {
        ValidationRule {
            rule: text.into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_second_max_length_is_hoisted_into_all_of() {
        let mut dst = JSONSchemaProps {
            type_: Some("string".into()),
            max_length: Some(10),
            ..Default::default()
        };
        let src = JSONSchemaProps {
            max_length: Some(5),
            ..Default::default()
        };
        flatten_into(&mut dst, src);
        assert_eq!(dst.max_length, None);
        assert_eq!(dst.type_.as_deref(), Some("string"));
        let all_of = dst.all_of.unwrap();
        assert_eq!(all_of[0].max_length, Some(10));
        assert_eq!(all_of[1].max_length, Some(5));
    }

    #[test]
    fn equal_patterns_are_kept_once_and_field_rules_come_first() {
        let mut dst = JSONSchemaProps {
            pattern: Some("^a$".into()),
            x_kubernetes_validations: Some(vec![rule("type")]),
            required: Some(vec!["b".into(), "a".into()]),
            ..Default::default()
        };
        let src = JSONSchemaProps {
            pattern: Some("^a$".into()),
            x_kubernetes_validations: Some(vec![rule("field")]),
            required: Some(vec!["a".into()]),
            ..Default::default()
        };
        flatten_into(&mut dst, src);
        assert_eq!(dst.all_of, None);
        assert_eq!(dst.pattern.as_deref(), Some("^a$"));
        let rules: Vec<_> = dst
            .x_kubernetes_validations
            .unwrap()
            .into_iter()
            .map(|r| r.rule)
            .collect();
        assert_eq!(rules, ["field", "type"]);
        assert_eq!(dst.required.unwrap(), ["a", "b"]);
    }

    #[test]
    fn properties_merge_recursively_and_map_type_of_the_field_wins() {
        let prop = |min: i64| JSONSchemaProps {
            min_length: Some(min),
            ..Default::default()
        };
        let mut dst = JSONSchemaProps {
            properties: Some([("a".to_owned(), prop(1))].into()),
            x_kubernetes_map_type: Some("granular".into()),
            ..Default::default()
        };
        let src = JSONSchemaProps {
            properties: Some([("a".to_owned(), prop(2)), ("b".to_owned(), prop(3))].into()),
            x_kubernetes_map_type: Some("atomic".into()),
            ..Default::default()
        };
        flatten_into(&mut dst, src);
        let properties = dst.properties.unwrap();
        assert_eq!(properties["b"].min_length, Some(3));
        assert_eq!(properties["a"].all_of.as_ref().unwrap().len(), 2);
        assert_eq!(dst.x_kubernetes_map_type.as_deref(), Some("atomic"));
    }
}
