//! optional, required, validation(optional), validation(required): controller-gen's precedence.
#![allow(deprecated, reason = "validation(optional) and validation(required) warn; their precedence still holds")]
use kubebuilder::schema::Schema;
use serde_json::json;

#[kubebuilder::schema]
pub struct Requirements {
    /// Required: not an Option.
    pub plain: String,
    /// Optional: an Option.
    pub maybe: Option<String>,
    #[kubebuilder(optional)]
    pub optional_value: i32,
    #[kubebuilder(required)]
    pub required_option: Option<String>,
    #[kubebuilder(validation(required))]
    pub validation_required: Option<String>,
    #[kubebuilder(validation(optional))]
    pub validation_optional: String,
    /// `validation(optional)` wins over `required`.
    #[kubebuilder(validation(optional), required)]
    pub both_a: String,
    /// `validation(required)` wins over `optional`.
    #[kubebuilder(validation(required), optional)]
    pub both_b: Option<String>,
    #[serde(skip)]
    pub local_only: u8,
}

fn main() {
    let schema = serde_json::to_value(Requirements::schema()).unwrap();
    assert_eq!(
        schema["required"],
        json!(["bothB", "plain", "requiredOption", "validationRequired"])
    );
    assert_eq!(schema["properties"].get("localOnly"), None);
    // An optional non-Option field is omitted when it has its default value, and read
    // back as the default when absent.
    let value = Requirements {
        plain: "p".into(),
        maybe: None,
        optional_value: 0,
        required_option: Some("r".into()),
        validation_required: Some("v".into()),
        validation_optional: String::new(),
        both_a: String::new(),
        both_b: None,
        local_only: 7,
    };
    let json = serde_json::to_value(&value).unwrap();
    assert_eq!(
        json,
        json!({"plain": "p", "requiredOption": "r", "validationRequired": "v"})
    );
    let back: Requirements = serde_json::from_value(json).unwrap();
    assert_eq!(
        back,
        Requirements {
            local_only: 0,
            ..value
        }
    );
}
