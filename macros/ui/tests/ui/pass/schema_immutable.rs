//! `immutable` (`+k8s:immutable`): a field that cannot change once set.
use kubebuilder::schema::Schema;
use serde_json::json;

#[kubebuilder::schema]
pub struct Locked {
    /// The key, fixed at creation.
    #[kubebuilder(immutable, validation(max_length = 8))]
    pub key: String,
    pub note: Option<String>,
    /// Optional, but not removable once set.
    #[kubebuilder(immutable)]
    pub pin: Option<String>,
}

fn main() {
    let schema = serde_json::to_value(Locked::schema()).unwrap();
    assert_eq!(
        schema["properties"]["key"],
        json!({
            "type": "string",
            "maxLength": 8,
            "description": "The key, fixed at creation.",
            "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "field is immutable"}]
        })
    );
    assert_eq!(schema["properties"]["note"], json!({"type": "string"}));
    // The field's rule does not run when an optional field is removed: the struct's does.
    assert_eq!(
        schema["x-kubernetes-validations"],
        json!([{"rule": "!has(oldSelf.pin) || has(self.pin)", "message": "field pin is immutable once set"}])
    );
}
