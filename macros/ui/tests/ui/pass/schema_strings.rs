//! min_length, max_length, pattern, format, type, x_int_or_string (field, type, items).
use kubebuilder::schema::Schema;
use serde_json::json;

#[kubebuilder::schema(validation(max_length = 63, pattern = "^[a-z0-9-]+$"))]
pub struct Name(String);

#[kubebuilder::schema]
pub struct Strings {
    #[kubebuilder(validation(
        min_length = 1,
        max_length = 10,
        pattern = r"^\d+$",
        format = "password"
    ))]
    pub pin: String,
    /// Seconds, written as a string.
    #[kubebuilder(validation(type = "string", format = "duration", max_length = 20))]
    pub timeout: Option<i64>,
    #[kubebuilder(validation(x_int_or_string, max_length = 5))]
    pub port: Option<serde_json::Value>,
    #[kubebuilder(validation(items(
        min_length = 1,
        max_length = 3,
        pattern = "^[A-Z]+$",
        format = "hostname"
    )))]
    pub codes: Vec<String>,
    #[kubebuilder(validation(max_length = 10))]
    pub name: Name,
}

fn main() {
    let schema = serde_json::to_value(Strings::schema()).unwrap();
    let properties = &schema["properties"];
    assert_eq!(
        properties["pin"],
        json!({"type": "string", "minLength": 1, "maxLength": 10, "pattern": "^\\d+$", "format": "password"})
    );
    assert_eq!(
        properties["timeout"],
        json!({"type": "string", "format": "duration", "maxLength": 20, "description": "Seconds, written as a string."})
    );
    assert_eq!(
        properties["port"],
        json!({"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true, "maxLength": 5})
    );
    assert_eq!(
        properties["codes"]["items"],
        json!({"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^[A-Z]+$", "format": "hostname"})
    );
    // A field tightens its type's rule through allOf; it cannot loosen it.
    assert_eq!(
        properties["name"],
        json!({"type": "string", "pattern": "^[a-z0-9-]+$", "allOf": [{"maxLength": 63}, {"maxLength": 10}]})
    );
    assert_eq!(schema["required"], json!(["codes", "name", "pin"]));
}
