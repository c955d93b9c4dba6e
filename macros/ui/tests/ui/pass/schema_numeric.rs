//! minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of (field, type, items).
use kubebuilder::schema::Schema;
use serde_json::json;

/// A port.
#[kubebuilder::schema(validation(minimum = 1, maximum = 65535))]
pub struct Port(i32);

#[kubebuilder::schema]
pub struct Numbers {
    #[kubebuilder(validation(minimum = -5, maximum = 5, exclusive_minimum, exclusive_maximum = true, multiple_of = 5))]
    pub small: i64,
    #[kubebuilder(
        validation(minimum = 0.5, maximum = 1.5, multiple_of = 0.25),
        allow_dangerous_types
    )]
    pub ratio: f64,
    #[kubebuilder(validation(items(minimum = 0, exclusive_minimum = false)))]
    pub counts: Vec<u32>,
    pub port: Port,
}

fn main() {
    let schema = serde_json::to_value(Numbers::schema()).unwrap();
    let properties = &schema["properties"];
    assert_eq!(
        properties["small"],
        json!({"type": "integer", "format": "int64", "minimum": -5.0, "maximum": 5.0,
               "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": 5.0})
    );
    assert_eq!(
        properties["ratio"],
        json!({"type": "number", "minimum": 0.5, "maximum": 1.5, "multipleOf": 0.25})
    );
    assert_eq!(
        properties["counts"],
        json!({"type": "array", "items": {"type": "integer", "format": "int32", "minimum": 0.0}})
    );
    assert_eq!(
        properties["port"],
        json!({"type": "integer", "format": "int32", "description": "A port.", "minimum": 1.0, "maximum": 65535.0})
    );
    assert_eq!(
        schema["required"],
        json!(["counts", "port", "ratio", "small"])
    );
}
