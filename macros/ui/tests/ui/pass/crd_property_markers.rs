//! `spec_field(...)` and `status_field(...)`: the markers of the root object's `spec` and
//! `status` properties (Go: those of its `Spec` and `Status` fields).
use kubebuilder::crd::CustomResource;
use serde_json::json;

/// GadgetSpec is the desired state.
#[kubebuilder::resource(
    group = "example.kubebuilder.io",
    version = "v1",
    kind = "Gadget",
    status = GadgetStatus,
    spec_field(validation(min_properties = 1, x_validation(rule = "has(self.size)", message = "size is needed"))),
    status_field(default = {"phase": "Pending"}, validation(max_properties = 3)),
)]
pub struct GadgetSpec {
    pub size: Option<i32>,
}

/// GadgetStatus is the observed state.
#[kubebuilder::schema]
#[derive(Default)]
pub struct GadgetStatus {
    pub phase: Option<String>,
}

fn main() {
    let crd = serde_json::to_value(Gadget::crd()).unwrap();
    let root = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(
        root["properties"]["spec"],
        json!({
            "description": "GadgetSpec is the desired state.",
            "minProperties": 1,
            "properties": {"size": {"format": "int32", "type": "integer"}},
            "type": "object",
            "x-kubernetes-validations": [{"message": "size is needed", "rule": "has(self.size)"}]
        })
    );
    assert_eq!(
        root["properties"]["status"],
        json!({
            "default": {"phase": "Pending"},
            "description": "GadgetStatus is the observed state.",
            "maxProperties": 3,
            "properties": {"phase": {"type": "string"}},
            "type": "object"
        })
    );
    assert_eq!(root["required"], json!(["spec"]));
}
