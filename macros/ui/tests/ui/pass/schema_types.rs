//! What `#[kubebuilder::schema]` accepts: structs, newtypes, unit enums, serde renames,
//! flattened structs, base64 bytes, floats with `allow_dangerous_types` on the type, and
//! doc comments as descriptions.
use std::collections::HashMap;

use kubebuilder::schema::Schema;
use serde_json::json;

/// Policy of the thing.
///
/// Second paragraph.
/// TODO: not in the description.
#[kubebuilder::schema]
#[derive(Default)]
pub enum Policy {
    #[default]
    Always,
    Never,
}

#[kubebuilder::schema(allow_dangerous_types)]
pub struct Weights {
    pub low: f32,
    pub high: Option<f64>,
}

#[kubebuilder::schema]
pub struct Common {
    /// Shared name.
    pub name: String,
}

#[kubebuilder::schema]
pub struct Everything {
    #[serde(flatten)]
    pub common: Common,
    #[serde(rename = "URL")]
    pub url: String,
    pub policy: Policy,
    pub data: Vec<u8>,
    pub maybe_data: Option<Vec<u8>>,
    pub weights: Weights,
    pub counters: HashMap<String, Box<u64>>,
    pub r#type: String,
}

fn main() {
    let schema = serde_json::to_value(Everything::schema()).unwrap();
    let properties = &schema["properties"];
    assert_eq!(
        properties["name"],
        json!({"type": "string", "description": "Shared name."})
    );
    assert_eq!(properties["URL"], json!({"type": "string"}));
    assert_eq!(
        properties["policy"],
        json!({"type": "string", "enum": ["Always", "Never"], "description": "Policy of the thing.\n\nSecond paragraph."})
    );
    assert_eq!(
        properties["data"],
        json!({"type": "string", "format": "byte"})
    );
    assert_eq!(
        properties["weights"]["properties"]["low"],
        json!({"type": "number"})
    );
    assert_eq!(
        properties["counters"]["additionalProperties"],
        json!({"type": "integer", "format": "int64"})
    );
    assert_eq!(properties["type"], json!({"type": "string"}));
    assert_eq!(
        schema["required"],
        json!([
            "URL", "counters", "data", "name", "policy", "type", "weights"
        ])
    );

    let value = Everything {
        common: Common { name: "n".into() },
        url: "u".into(),
        policy: Policy::default(),
        data: b"hi".to_vec(),
        maybe_data: None,
        weights: Weights {
            low: 0.5,
            high: None,
        },
        counters: HashMap::new(),
        r#type: "t".into(),
    };
    let json = serde_json::to_value(&value).unwrap();
    assert_eq!(
        json,
        json!({"name": "n", "URL": "u", "policy": "Always", "data": "aGk=", "weights": {"low": 0.5},
               "counters": {}, "type": "t"})
    );
    let back: Everything = serde_json::from_value(json).unwrap();
    assert_eq!(back, value);
}
