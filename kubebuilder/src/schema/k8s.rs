//! [`Schema`] for the Kubernetes types of k8s-openapi, exactly as controller-gen inlines their
//! Go twins into a CRD.
//!
//! k8s-openapi's own (schemars) schemas lack what the Go sources' markers add: list and map
//! types (`x-kubernetes-list-type: map` keyed by `name` is what makes server-side apply merge
//! `containers` by name), `+default`s, and they mark every optional field `nullable`. So the
//! schemas come from `k8s_schemas.json`, which `cargo xtask k8s-schemas` extracts from
//! controller-gen's output for a Go type holding one field per type below. Each entry is
//! keyed by the type's OpenAPI definition name, which is also k8s-openapi's `schema_name()`;
//! it is spelt here from the type's path ([`definition_name`]), so that this crate needs
//! k8s-openapi's `schemars` feature (a schema for every Kubernetes type, most of k8s-openapi's
//! build time) only for its own `schemars` feature.
//!
//! The table stores every struct schema once: where one type nests another, the subtree is
//! `{"$ref": "<definition name>", <keys replacing the entry's>}` (the xtask's format).

use std::cell::Cell;
use std::sync::OnceLock;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::{Map, Value};

use super::Schema;

/// The key of a table entry that points to another entry.
const REF: &str = "$ref";

/// Implements [`Schema`] for k8s-openapi types from their table entries; each is applied
/// as itself ([`crate::apply::Configure`]).
macro_rules! schemas_from_table {
    ($($ty:path),* $(,)?) => {
        $(
            crate::apply::applied_as_themselves!($ty);

            impl Schema for $ty {
                fn schema() -> JSONSchemaProps {
                    lookup(&definition_name(stringify!($ty)))
                }
            }
        )*

        /// The definition names of the types implemented here.
        #[cfg(test)]
        fn implemented() -> Vec<String> {
            vec![$(definition_name(stringify!($ty))),*]
        }

        /// The same, as k8s-openapi's schemars impls give them.
        #[cfg(all(test, feature = "schemars"))]
        fn schemars_names() -> Vec<String> {
            use k8s_openapi::schemars::JsonSchema;
            vec![$(<$ty as JsonSchema>::schema_name().into_owned()),*]
        }

        /// The type at `path` (`k8s_openapi::api::core::v1::PodSpec`), if implemented here.
        pub(super) fn by_path(path: &str) -> Option<super::by_path::Typed<'static>> {
            $(
                if path == stringify!($ty).replace(' ', "") {
                    return Some(super::by_path::Typed::of::<$ty>());
                }
            )*
            None
        }
    };
}

schemas_from_table! {
    k8s_openapi::api::batch::v1::JobSpec,
    k8s_openapi::api::batch::v1::JobTemplateSpec,
    k8s_openapi::api::core::v1::Affinity,
    k8s_openapi::api::core::v1::ConfigMapKeySelector,
    k8s_openapi::api::core::v1::Container,
    k8s_openapi::api::core::v1::ContainerPort,
    k8s_openapi::api::core::v1::EnvFromSource,
    k8s_openapi::api::core::v1::EnvVar,
    k8s_openapi::api::core::v1::LocalObjectReference,
    k8s_openapi::api::core::v1::ObjectReference,
    k8s_openapi::api::core::v1::PersistentVolumeClaimSpec,
    k8s_openapi::api::core::v1::PodSecurityContext,
    k8s_openapi::api::core::v1::PodSpec,
    k8s_openapi::api::core::v1::PodTemplateSpec,
    k8s_openapi::api::core::v1::Probe,
    k8s_openapi::api::core::v1::ResourceRequirements,
    k8s_openapi::api::core::v1::SecretKeySelector,
    k8s_openapi::api::core::v1::SecurityContext,
    k8s_openapi::api::core::v1::ServicePort,
    k8s_openapi::api::core::v1::Taint,
    k8s_openapi::api::core::v1::Toleration,
    k8s_openapi::api::core::v1::TypedLocalObjectReference,
    k8s_openapi::api::core::v1::Volume,
    k8s_openapi::api::core::v1::VolumeMount,
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON,
    k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
    k8s_openapi::apimachinery::pkg::runtime::RawExtension,
    k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
}

/// The OpenAPI definition name of the k8s-openapi type at `path` (spaces allowed, as
/// `stringify!` writes it): `k8s_openapi::api::core::v1::PodSpec` is
/// `io.k8s.api.core.v1.PodSpec`, and the first module's underscores are dashes
/// (`io.k8s.apiextensions-apiserver.pkg…`).
fn definition_name(path: &str) -> String {
    let path = path.replace(' ', "");
    let (first, rest) = path
        .strip_prefix("k8s_openapi::")
        .and_then(|path| path.split_once("::"))
        .unwrap_or_else(|| panic!("{path} is no k8s-openapi type"));
    format!(
        "io.k8s.{}.{}",
        first.replace('_', "-"),
        rest.replace("::", ".")
    )
}

/// The definition name of `ObjectMeta`, whose schema depends on
/// [`with_embedded_object_meta`].
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

thread_local! {
    /// Whether schemas built on this thread give `ObjectMeta` its settable properties.
    static EMBEDDED_OBJECT_META: Cell<bool> = const { Cell::new(false) };
}

/// Runs `build` with every `ObjectMeta` schema built in it having the properties
/// controller-gen's `crd:generateEmbeddedObjectMeta` gives it (`generate`), or none. A
/// thread's setting rather than an argument: schemas are built by `Schema::schema()`, which
/// the generated impls call without options.
pub(crate) fn with_embedded_object_meta<R>(generate: bool, build: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            EMBEDDED_OBJECT_META.set(self.0);
        }
    }
    let _restore = Restore(EMBEDDED_OBJECT_META.replace(generate));
    build()
}

/// The parsed table, entries still holding references.
fn table() -> &'static Map<String, Value> {
    static TABLE: OnceLock<Map<String, Value>> = OnceLock::new();
    TABLE.get_or_init(|| {
        serde_json::from_str(include_str!("k8s_schemas.json"))
            .expect("k8s_schemas.json is a JSON object (regenerate: cargo xtask k8s-schemas)")
    })
}

fn lookup(name: &str) -> JSONSchemaProps {
    serde_json::from_value(expand_entry(name))
        .unwrap_or_else(|e| panic!("k8s_schemas.json entry {name} is not a schema: {e}"))
}

fn expand_entry(name: &str) -> Value {
    // The table has controller-gen's `generateEmbeddedObjectMeta` schema (the properties
    // a template's author sets); without the option, controller-gen's is a bare object.
    if name == OBJECT_META && !EMBEDDED_OBJECT_META.get() {
        return serde_json::json!({"type": "object"});
    }
    let entry = table()
        .get(name)
        .unwrap_or_else(|| panic!("k8s_schemas.json has no entry {name}"));
    expand(entry)
}

/// Resolves the references in a schema node and the schemas below it.
fn expand(node: &Value) -> Value {
    let Value::Object(fields) = node else {
        return node.clone();
    };
    let mut expanded = match fields.get(REF) {
        Some(Value::String(name)) => match expand_entry(name) {
            Value::Object(entry) => entry,
            _ => panic!("k8s_schemas.json entry {name} is not an object"),
        },
        Some(other) => panic!("k8s_schemas.json has a non-string {REF}: {other}"),
        None => Map::new(),
    };
    for (key, value) in fields {
        let value = match key.as_str() {
            REF => continue,
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, schema)| (name.clone(), expand(schema)))
                    .collect(),
            ),
            "items" | "additionalProperties" => expand(value),
            _ => value.clone(),
        };
        expanded.insert(key.clone(), value);
    }
    Value::Object(expanded)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use k8s_openapi::api::batch::v1::JobTemplateSpec;
    use k8s_openapi::api::core::v1::PodTemplateSpec;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use serde_json::json;

    use super::*;

    /// Every key anywhere below `value`, with the JSON pointer where it occurs.
    fn keys(value: &Value, at: &str, found: &mut Vec<(String, String)>) {
        match value {
            Value::Object(fields) => {
                for (key, child) in fields {
                    found.push((at.to_owned(), key.clone()));
                    keys(child, &format!("{at}/{key}"), found);
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter().enumerate() {
                    keys(child, &format!("{at}/{index}"), found);
                }
            }
            _ => {}
        }
    }

    fn numbers_as_floats(value: Value) -> Value {
        match value {
            Value::Number(n) => json!(n.as_f64().unwrap()),
            Value::Array(items) => Value::Array(items.into_iter().map(numbers_as_floats).collect()),
            Value::Object(fields) => Value::Object(
                fields
                    .into_iter()
                    .map(|(key, value)| (key, numbers_as_floats(value)))
                    .collect(),
            ),
            other => other,
        }
    }

    fn json_of<T: Schema>() -> Value {
        serde_json::to_value(T::schema()).unwrap()
    }

    #[test]
    fn the_table_and_the_impls_name_the_same_types() {
        let implemented: BTreeSet<String> = implemented().into_iter().collect();
        let tabled: BTreeSet<String> = table().keys().cloned().collect();
        assert_eq!(implemented, tabled);
    }

    #[cfg(feature = "schemars")]
    #[test]
    fn definition_names_are_k8s_openapis_schema_names() {
        assert_eq!(implemented(), schemars_names());
    }

    #[test]
    fn every_entry_expands_to_a_schema_without_references_losing_nothing() {
        for name in table().keys() {
            let expanded = expand_entry(name);
            let mut found = Vec::new();
            keys(&expanded, name, &mut found);
            assert!(
                !found.iter().any(|(_, key)| key == REF),
                "{name} keeps a reference"
            );
            // JSONSchemaProps must carry every key controller-gen wrote (it holds bounds
            // such as `minimum: 0` as floats, so numbers compare by value).
            let round_trip = serde_json::to_value(lookup(name)).unwrap();
            assert_eq!(
                numbers_as_floats(round_trip),
                numbers_as_floats(expanded),
                "{name} changes through JSONSchemaProps"
            );
        }
    }

    #[test]
    fn job_template_containers_merge_by_name_with_upstream_defaults() {
        let schema = json_of::<JobTemplateSpec>();
        let pod = &schema["properties"]["spec"]["properties"]["template"]["properties"]["spec"];
        let containers = &pod["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-list-type"], "map");
        assert_eq!(containers["x-kubernetes-list-map-keys"], json!(["name"]));
        assert_eq!(pod["required"], json!(["containers"]));
        let container = &containers["items"];
        assert_eq!(container["required"], json!(["name"]));
        let ports = &container["properties"]["ports"];
        assert_eq!(ports["x-kubernetes-list-type"], "map");
        assert_eq!(
            ports["x-kubernetes-list-map-keys"],
            json!(["containerPort", "protocol"])
        );
        assert_eq!(ports["items"]["properties"]["protocol"]["default"], "TCP");
        assert_eq!(
            container["properties"]["resources"]["properties"]["limits"]["additionalProperties"]["x-kubernetes-int-or-string"],
            true
        );
    }

    #[test]
    fn a_field_doc_replaces_the_nested_type_description() {
        let schema = json_of::<PodTemplateSpec>();
        assert_eq!(
            schema["description"],
            "PodTemplateSpec describes the data a pod should have when created from a template"
        );
        let spec = &schema["properties"]["spec"];
        assert!(
            spec["description"]
                .as_str()
                .unwrap()
                .starts_with("Specification of the desired behavior of the pod.")
        );
        assert_eq!(spec["required"], json!(["containers"]));
    }

    #[test]
    fn no_schema_is_nullable() {
        for name in table().keys() {
            let mut found = Vec::new();
            keys(&expand_entry(name), name, &mut found);
            let nullable: Vec<_> = found.iter().filter(|(_, key)| key == "nullable").collect();
            assert!(nullable.is_empty(), "nullable at {nullable:?}");
        }
    }

    #[test]
    fn embedded_object_meta_has_its_settable_properties_only_while_asked_for() {
        let template_metadata = || json_of::<PodTemplateSpec>()["properties"]["metadata"].clone();
        let bare = template_metadata();
        assert_eq!(bare["type"], "object");
        assert_eq!(bare.get("properties"), None);
        let generated = with_embedded_object_meta(true, template_metadata);
        let properties: Vec<&String> = generated["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(
            properties,
            ["annotations", "finalizers", "labels", "name", "namespace"]
        );
        // The field's own description stays: only the type's schema changes.
        assert_eq!(generated["description"], bare["description"]);
        assert_eq!(
            template_metadata(),
            bare,
            "the setting ends with the closure"
        );
    }

    #[test]
    fn scalar_types_have_controller_gens_shapes() {
        assert_eq!(
            json_of::<Time>(),
            json!({"type": "string", "format": "date-time"})
        );
        assert_eq!(json_of::<ObjectMeta>(), json!({"type": "object"}));
        assert_eq!(
            json_of::<IntOrString>(),
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}],
                   "x-kubernetes-int-or-string": true})
        );
        let quantity = json_of::<Quantity>();
        assert_eq!(quantity["x-kubernetes-int-or-string"], true);
        assert!(quantity["pattern"].as_str().unwrap().contains("[KMGTPE]i"));
    }

    #[test]
    fn a_reference_is_the_entry_with_the_given_keys_replaced() {
        let name = "io.k8s.api.core.v1.LocalObjectReference";
        let node = json!({REF: name, "description": "Mine.", "default": {}});
        let mut expected = expand_entry(name);
        expected["description"] = json!("Mine.");
        expected["default"] = json!({});
        assert_eq!(expand(&node), expected);
    }
}
