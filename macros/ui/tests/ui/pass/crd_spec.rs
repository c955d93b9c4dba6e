//! `spec = "optional"` (Go `json:"spec,omitempty"`) and `spec = "none"` (a kind whose fields
//! sit at the top level, as a ConfigMap's `data`).
use std::collections::BTreeMap;

use serde_json::json;

/// Spec.
#[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Lean", spec = "optional")]
#[derive(Default)]
pub struct LeanSpec {
    pub replicas: Option<i32>,
}

/// Settings is a bag of settings.
#[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Settings", spec = "none", printcolumn(name = "Revision", type = "integer", json_path = ".revision"))]
pub struct Settings {
    pub data: Option<BTreeMap<String, String>>,
    #[kubebuilder(validation(minimum = 1))]
    pub revision: i32,
}

fn main() {
    let lean = serde_json::to_value(Lean::crd()).unwrap();
    let root = &lean["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(root.get("required"), None, "spec is not required");
    let bare: Lean = serde_json::from_value(json!({"apiVersion": "example.kubebuilder.io/v1", "kind": "Lean", "metadata": {"name": "l"}})).unwrap();
    assert_eq!(bare.spec, LeanSpec::default());

    let crd = serde_json::to_value(Settings::crd()).unwrap();
    let root = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(root["description"], "Settings is a bag of settings.");
    assert_eq!(root["required"], json!(["revision"]));
    let mut names: Vec<&String> = root["properties"].as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(names, ["apiVersion", "data", "kind", "metadata", "revision"]);
    let settings = Settings { metadata: Default::default(), data: None, revision: 3 };
    let text = serde_json::to_string(&settings).unwrap();
    assert_eq!(text, r#"{"apiVersion":"example.kubebuilder.io/v1","kind":"Settings","metadata":{},"revision":3}"#);
    assert_eq!(serde_json::from_str::<Settings>(&text).unwrap(), settings);
}
