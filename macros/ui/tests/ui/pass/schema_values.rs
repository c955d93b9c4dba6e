//! enum, default, default_json, example, title, external_docs, nullable.
use std::collections::BTreeMap;

use kubebuilder::schema::Schema;
use serde_json::json;

#[kubebuilder::schema]
pub enum Mode {
    Fast,
    #[serde(rename = "slow-and-steady")]
    Slow,
}

#[kubebuilder::schema]
pub struct Inner {
    #[kubebuilder(optional)]
    pub choice: Option<String>,
    #[kubebuilder(optional)]
    pub replicas: Option<i32>,
}

#[kubebuilder::schema(
    title = "Settings",
    external_docs(url = "https://example.com/settings", description = "All settings.")
)]
pub struct Settings {
    #[kubebuilder(validation(enum = ["a", "b", 3]), example = "a")]
    pub choice: Option<String>,
    #[kubebuilder(default = "slow-and-steady")]
    pub mode: Option<Mode>,
    #[kubebuilder(default = 3, example = 4, title = "Replicas")]
    pub replicas: Option<i32>,
    #[kubebuilder(default = {})]
    pub args: Option<Vec<String>>,
    #[kubebuilder(default = ["x", "y"])]
    pub names: Option<Vec<String>>,
    #[kubebuilder(default = {"k": "v"}, external_docs(url = "/docs/labels"))]
    pub labels: Option<BTreeMap<String, String>>,
    #[kubebuilder(default_json = r#"{"choice": "b", "replicas": 1}"#, nullable)]
    pub nested: Option<Box<Inner>>,
    #[kubebuilder(default = true)]
    pub enabled: Option<bool>,
    #[kubebuilder(default = -1.5, allow_dangerous_types)]
    pub offset: Option<f64>,
}

fn main() {
    let schema = serde_json::to_value(Settings::schema()).unwrap();
    assert_eq!(schema["title"], json!("Settings"));
    assert_eq!(
        schema["externalDocs"],
        json!({"url": "https://example.com/settings", "description": "All settings."})
    );
    let properties = &schema["properties"];
    assert_eq!(
        properties["choice"],
        json!({"type": "string", "enum": ["a", "b", 3], "example": "a"})
    );
    assert_eq!(
        properties["mode"],
        json!({"type": "string", "enum": ["Fast", "slow-and-steady"], "default": "slow-and-steady"})
    );
    assert_eq!(
        properties["replicas"],
        json!({"type": "integer", "format": "int32", "default": 3, "example": 4, "title": "Replicas"})
    );
    assert_eq!(properties["args"]["default"], json!([]));
    assert_eq!(properties["names"]["default"], json!(["x", "y"]));
    assert_eq!(properties["labels"]["default"], json!({"k": "v"}));
    assert_eq!(
        properties["labels"]["externalDocs"],
        json!({"url": "/docs/labels"})
    );
    assert_eq!(
        properties["nested"]["default"],
        json!({"choice": "b", "replicas": 1})
    );
    assert_eq!(properties["nested"]["nullable"], json!(true));
    assert_eq!(properties["enabled"]["default"], json!(true));
    assert_eq!(properties["offset"]["default"], json!(-1.5));
    assert_eq!(schema.get("required"), None);
}
