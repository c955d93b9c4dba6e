//! min_properties, max_properties, map_type, struct_type, pruning(preserve_unknown_fields),
//! x_preserve_unknown_fields, x_embedded_resource, embedded_resource, schemaless.
use std::collections::BTreeMap;

use kubebuilder::schema::Schema;
use serde_json::json;

#[kubebuilder::schema(struct_type = "atomic", validation(min_properties = 1))]
pub struct Selector {
    #[kubebuilder(optional)]
    pub app: Option<String>,
}

#[kubebuilder::schema(map_type = "granular", validation(max_properties = 4))]
pub struct Labels(BTreeMap<String, String>);

#[kubebuilder::schema]
pub struct Objects {
    #[kubebuilder(
        validation(min_properties = 1, max_properties = 2),
        map_type = "atomic"
    )]
    pub annotations: BTreeMap<String, String>,
    #[kubebuilder(struct_type = "granular")]
    pub selector: Selector,
    pub labels: Labels,
    #[kubebuilder(pruning(preserve_unknown_fields))]
    pub raw: BTreeMap<String, serde_json::Value>,
    #[kubebuilder(validation(x_preserve_unknown_fields, x_embedded_resource))]
    pub object: serde_json::Value,
    #[kubebuilder(
        validation(embedded_resource, schemaless),
        pruning(preserve_unknown_fields)
    )]
    pub template: serde_json::Value,
}

fn main() {
    let schema = serde_json::to_value(Objects::schema()).unwrap();
    let properties = &schema["properties"];
    assert_eq!(
        properties["annotations"],
        json!({"type": "object", "minProperties": 1, "maxProperties": 2, "x-kubernetes-map-type": "atomic",
               "additionalProperties": {"type": "string"}})
    );
    // The field's struct type replaces the type's (the later value wins).
    assert_eq!(
        properties["selector"]["x-kubernetes-map-type"],
        json!("granular")
    );
    assert_eq!(properties["selector"]["minProperties"], json!(1));
    assert_eq!(
        properties["labels"]["x-kubernetes-map-type"],
        json!("granular")
    );
    assert_eq!(properties["labels"]["maxProperties"], json!(4));
    assert_eq!(
        properties["raw"]["x-kubernetes-preserve-unknown-fields"],
        json!(true)
    );
    assert_eq!(
        properties["object"],
        json!({"x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-embedded-resource": true})
    );
    // Schemaless: the type is not looked at, only the markers apply.
    assert_eq!(
        properties["template"],
        json!({"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true})
    );
}
