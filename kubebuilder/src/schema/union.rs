//! Rust enums with data as structural schemas. Go has no sum types, so controller-gen has
//! no answer here; each serde form maps to the schema its Go twin would have:
//!
//! - externally tagged (serde's default, `{"Variant": value}`): an object with one optional
//!   property per variant and controller-gen's `ExactlyOneOf` rule over them;
//! - internally tagged (`#[serde(tag = "type")]`): an object with the tag (a required string
//!   enum of the variant names), every variant's fields as optional properties, and per
//!   variant a CEL rule requiring its required fields when the tag names it;
//! - untagged (`#[serde(untagged)]`): an integer and a string variant are an int-or-string;
//!   struct variants are an object with every variant's fields and a CEL rule that the
//!   required fields of at least one variant are set (serde takes the first that fits).
//!
//! Each admits what serde accepts from an object whose fields have their declared types:
//! serde, like the schema, ignores the fields of the variants it does not choose.
//! [`check_union`] refuses at compile time the enums no structural schema can describe.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSON, JSONSchemaProps, ValidationRule,
};

use super::marker::{self, Marker};
use super::shape::{Message, Shape, property, str_eq};

/// How serde writes an enum with data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tagging<'a> {
    /// `{"Variant": value}`.
    External,
    /// `{"<tag>": "Variant", ...fields}`.
    Internal(&'a str),
    /// The variant's value alone.
    Untagged,
}

/// The schema of an internally tagged enum: `variants` are the names with the variant's
/// object schema (`None` for a unit variant).
pub fn internally_tagged(
    description: &str,
    tag: &str,
    variants: Vec<(&str, Option<JSONSchemaProps>)>,
    markers: &[Marker],
) -> JSONSchemaProps {
    let names = variants
        .iter()
        .map(|(name, _)| JSON((*name).into()))
        .collect();
    let mut properties = BTreeMap::from([(
        tag.to_owned(),
        JSONSchemaProps {
            type_: Some("string".into()),
            enum_: Some(names),
            ..JSONSchemaProps::default()
        },
    )]);
    let mut rules = Vec::new();
    for (name, schema) in variants {
        let Some(schema) = schema else { continue };
        let required = schema.required.clone().unwrap_or_default();
        merge_properties(&mut properties, schema);
        if !required.is_empty() {
            rules.push(ValidationRule {
                rule: format!(
                    "self.{} != {} || {}",
                    cel_field(tag),
                    cel_string(name),
                    all_set(&required)
                ),
                message: Some(format!("{tag} {name} requires: {}", required.join(", "))),
                ..ValidationRule::default()
            });
        }
    }
    union_object(
        description,
        properties,
        vec![tag.to_owned()],
        rules,
        markers,
    )
}

/// The schema of an untagged enum from its variants' schemas: an int-or-string, or an object
/// whose rule admits the objects with the required fields of at least one variant.
pub fn untagged(
    description: &str,
    variants: Vec<(&str, JSONSchemaProps)>,
    markers: &[Marker],
) -> JSONSchemaProps {
    let is_scalar = variants
        .first()
        .is_some_and(|(_, schema)| schema.type_.as_deref() != Some("object"));
    if is_scalar {
        let typed = |type_: &str| JSONSchemaProps {
            type_: Some(type_.into()),
            ..JSONSchemaProps::default()
        };
        let mut schema = JSONSchemaProps {
            description: (!description.is_empty()).then(|| description.to_owned()),
            any_of: Some(vec![typed("integer"), typed("string")]),
            x_kubernetes_int_or_string: Some(true),
            ..JSONSchemaProps::default()
        };
        marker::apply_sorted(&mut schema, markers);
        return schema;
    }
    let mut properties = BTreeMap::new();
    let mut conditions = Vec::new();
    let mut shown = Vec::new();
    for (name, schema) in variants {
        let required = schema.required.clone().unwrap_or_default();
        merge_properties(&mut properties, schema);
        let condition = all_set(&required);
        conditions.push(if required.len() > 1 {
            format!("({condition})")
        } else {
            condition
        });
        shown.push(format!("{name} ({})", required.join(", ")));
    }
    let rule = ValidationRule {
        rule: conditions.join(" || "),
        message: Some(format!(
            "must set the fields of one of: {}",
            shown.join(", ")
        )),
        ..ValidationRule::default()
    };
    union_object(description, properties, Vec::new(), vec![rule], markers)
}

/// The object of a union: its properties and required fields, the type-level markers, then
/// the union's own rules.
fn union_object(
    description: &str,
    properties: BTreeMap<String, JSONSchemaProps>,
    required: Vec<String>,
    rules: Vec<ValidationRule>,
    markers: &[Marker],
) -> JSONSchemaProps {
    let mut schema = JSONSchemaProps {
        type_: Some("object".into()),
        description: (!description.is_empty()).then(|| description.to_owned()),
        properties: Some(properties),
        required: (!required.is_empty()).then_some(required),
        ..JSONSchemaProps::default()
    };
    marker::apply_sorted(&mut schema, markers);
    for rule in rules {
        marker::push_rule(&mut schema, rule);
    }
    schema
}

/// Adds a variant's properties; one shared by several variants has the same type in each
/// ([`check_union`]), and the first variant's schema is kept.
fn merge_properties(into: &mut BTreeMap<String, JSONSchemaProps>, variant: JSONSchemaProps) {
    for (name, schema) in variant.properties.unwrap_or_default() {
        into.entry(name).or_insert(schema);
    }
}

/// `has(self.a) && has(self.b)`.
fn all_set(fields: &[String]) -> String {
    fields
        .iter()
        .map(|field| format!("has(self.{})", cel_field(field)))
        .collect::<Vec<_>>()
        .join(" && ")
}

/// A property name as the apiserver's CEL environment spells it: reserved words and the
/// characters `_`, `.`, `-` and `/` are escaped.
fn cel_field(name: &str) -> String {
    const RESERVED: &[&str] = &[
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];
    if RESERVED.contains(&name) {
        return format!("__{name}__");
    }
    name.replace("__", "__underscores__")
        .replace('.', "__dot__")
        .replace('-', "__dash__")
        .replace('/', "__slash__")
}

/// A CEL string literal.
fn cel_string(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Refuses an enum whose serde form no structural schema describes: an internally tagged
/// variant that is not a struct or has a field named as the tag, an untagged enum that is
/// neither an int-or-string nor made of struct variants serde can tell apart, and a field in
/// two variants with different types. `variants` are the names with their shapes (`None` for
/// a unit variant).
pub const fn check_union(
    enum_name: &str,
    tagging: Tagging<'_>,
    variants: &[(&str, Option<&Shape<'_>>)],
) -> Option<Message> {
    match tagging {
        Tagging::External => None,
        Tagging::Internal(tag) => check_internally_tagged(enum_name, tag, variants),
        Tagging::Untagged => check_untagged(enum_name, variants),
    }
}

const fn check_internally_tagged(
    enum_name: &str,
    tag: &str,
    variants: &[(&str, Option<&Shape<'_>>)],
) -> Option<Message> {
    let mut i = 0;
    while i < variants.len() {
        if let (name, Some(shape)) = variants[i] {
            if shape.known && !is_struct(shape) {
                return Some(
                    variant_message(enum_name, name)
                        .push(" holds `")
                        .push(shape.name)
                        .push("`, not a struct: serde writes the fields of an internally tagged variant beside the tag"),
                );
            }
            if property(shape, tag).is_some() {
                return Some(
                    variant_message(enum_name, name)
                        .push(" has a field `")
                        .push(tag)
                        .push("`, the name of the enum's tag"),
                );
            }
        }
        i += 1;
    }
    check_shared_fields(enum_name, variants)
}

const fn check_untagged(
    enum_name: &str,
    variants: &[(&str, Option<&Shape<'_>>)],
) -> Option<Message> {
    let (mut integers, mut strings, mut structs, mut others) = (0, 0, 0, 0);
    let mut i = 0;
    while i < variants.len() {
        let (name, shape) = variants[i];
        let Some(shape) = shape else {
            return Some(
                variant_message(enum_name, name)
                    .push(" is a unit variant, which an untagged enum writes as null: no structural schema describes it"),
            );
        };
        if !shape.known {
            return Some(
                variant_message(enum_name, name)
                    .push(" holds a type whose schema is not known at compile time; an untagged enum needs struct variants or an integer and a string"),
            );
        }
        if shape.is("integer") {
            integers += 1;
        } else if shape.is("string") {
            strings += 1;
        } else if is_struct(shape) {
            structs += 1;
            if shape.required.is_empty() {
                return Some(
                    variant_message(enum_name, name)
                        .push(" has no required field, so serde would choose it for any object; an untagged enum's variants must differ in their required fields"),
                );
            }
            if let Some(earlier) = covering_variant(variants, i) {
                return Some(
                    variant_message(enum_name, name)
                        .push(" can never be chosen: serde tries ")
                        .push(earlier)
                        .push(" first, and every object with its required fields has those of ")
                        .push(earlier),
                );
            }
        } else {
            others += 1;
        }
        i += 1;
    }
    if structs == variants.len() {
        check_shared_fields(enum_name, variants)
    } else if integers == 1 && strings == 1 && structs == 0 && others == 0 {
        None
    } else {
        Some(
            Message::new("untagged enum ")
                .push(enum_name)
                .push(" has no structural schema: its variants must all be structs, or be one integer and one string (an int-or-string)"),
        )
    }
}

/// An earlier struct variant whose required fields are all required by variant `at` too.
const fn covering_variant<'a>(
    variants: &[(&'a str, Option<&Shape<'_>>)],
    at: usize,
) -> Option<&'a str> {
    let Some(shape) = variants[at].1 else {
        return None;
    };
    let mut i = 0;
    while i < at {
        if let (name, Some(earlier)) = variants[i]
            && is_struct(earlier)
            && contains_all(shape.required, earlier.required)
        {
            return Some(name);
        }
        i += 1;
    }
    None
}

const fn contains_all(all: &[&str], some: &[&str]) -> bool {
    let mut i = 0;
    while i < some.len() {
        let mut found = false;
        let mut j = 0;
        while j < all.len() {
            if str_eq(all[j], some[i]) {
                found = true;
            }
            j += 1;
        }
        if !found {
            return false;
        }
        i += 1;
    }
    true
}

/// A field in two variants must have the same type: the union has one property for it.
const fn check_shared_fields(
    enum_name: &str,
    variants: &[(&str, Option<&Shape<'_>>)],
) -> Option<Message> {
    let mut i = 0;
    while i < variants.len() {
        if let (name, Some(shape)) = variants[i] {
            let mut p = 0;
            while p < shape.properties.len() {
                let (field, field_shape) = shape.properties[p];
                let mut j = i + 1;
                while j < variants.len() {
                    if let (other, Some(other_shape)) = variants[j]
                        && let Some(other_field) = property(other_shape, field)
                        && !(str_eq(field_shape.name, other_field.name)
                            && str_eq(field_shape.type_, other_field.type_))
                    {
                        return Some(
                            Message::new("field `")
                                .push(field)
                                .push("` of ")
                                .push(enum_name)
                                .push(" is ")
                                .push(field_shape.name)
                                .push(" in variant ")
                                .push(name)
                                .push(" and ")
                                .push(other_field.name)
                                .push(" in variant ")
                                .push(other)
                                .push(": the enum's schema has one property for it"),
                        );
                    }
                    j += 1;
                }
                p += 1;
            }
        }
        i += 1;
    }
    None
}

const fn is_struct(shape: &Shape) -> bool {
    shape.is("object") && shape.additional_properties.is_none()
}

const fn variant_message(enum_name: &str, variant: &str) -> Message {
    Message::new("variant `")
        .push(variant)
        .push("` of ")
        .push(enum_name)
}
