//! `custom_serde`: a type with serde impls of its own (Go: `MarshalJSON`) keeps them, and its
//! schema comes from its markers alone; the attribute still derives Clone, Debug, PartialEq.
use kubebuilder::schema::Schema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::json;

/// Seconds written "90s".
#[kubebuilder::schema(custom_serde, validation(type = "string", pattern = "^[0-9]+s$"))]
pub struct Seconds(pub u64);

impl Serialize for Seconds {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{}s", self.0))
    }
}

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.strip_suffix('s')
            .and_then(|n| n.parse().ok())
            .map(Seconds)
            .ok_or_else(|| serde::de::Error::custom("not seconds"))
    }
}

/// Any object, with serde's own derive.
#[kubebuilder::schema(custom_serde, validation(type = "object"), pruning(preserve_unknown_fields))]
#[derive(Serialize, Deserialize, Default)]
#[serde(transparent)]
pub struct Bag(serde_json::Map<String, serde_json::Value>);

#[kubebuilder::schema]
pub struct Uses {
    /// How often.
    #[kubebuilder(validation(max_length = 6), default = "30s")]
    pub every: Option<Seconds>,
    pub extra: Option<Bag>,
}

fn main() {
    // No description: controller-gen writes a marshalling type's markers alone.
    assert_eq!(
        serde_json::to_value(Seconds::schema()).unwrap(),
        json!({"type": "string", "pattern": "^[0-9]+s$"})
    );
    let uses = serde_json::to_value(Uses::schema()).unwrap();
    assert_eq!(
        uses["properties"]["every"],
        json!({"type": "string", "pattern": "^[0-9]+s$", "maxLength": 6, "default": "30s", "description": "How often."})
    );
    assert_eq!(
        uses["properties"]["extra"],
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
    );
    let value = Uses { every: Some(Seconds(90)), extra: Some(Bag::default()) };
    let wire = serde_json::to_value(&value).unwrap();
    assert_eq!(wire, json!({"every": "90s", "extra": {}}));
    assert_eq!(serde_json::from_value::<Uses>(wire).unwrap(), value.clone());
}
