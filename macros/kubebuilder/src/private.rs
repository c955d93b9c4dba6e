//! Items the generated code refers to; not a public API.

pub use inventory;
pub use k8s_openapi;
pub use kube_core;
pub use serde;
pub use serde_json;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::ser::SerializeStruct;

/// `skip_serializing_if` of optional non-`Option` fields: Go's `omitempty` omits zero values.
pub fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// Serializes a root object with its `apiVersion` and `kind` first, as Kubernetes writes it.
pub fn serialize_object<S, Spec, Status>(
    serializer: S,
    api_version: &str,
    kind: &str,
    metadata: &ObjectMeta,
    spec: &Spec,
    status: Option<&Status>,
) -> Result<S::Ok, S::Error>
where
    S: serde::Serializer,
    Spec: serde::Serialize,
    Status: serde::Serialize,
{
    let mut object = serializer.serialize_struct("Object", 4 + usize::from(status.is_some()))?;
    object.serialize_field("apiVersion", api_version)?;
    object.serialize_field("kind", kind)?;
    object.serialize_field("metadata", metadata)?;
    object.serialize_field("spec", spec)?;
    if let Some(status) = status {
        object.serialize_field("status", status)?;
    }
    object.end()
}

/// `Vec<u8>` fields as base64 strings (Go's `[]byte`).
pub mod base64 {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }

    /// The same for `Option<Vec<u8>>`.
    pub mod option {
        use super::*;

        pub fn serialize<S: Serializer>(
            bytes: &Option<Vec<u8>>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            match bytes {
                Some(bytes) => super::serialize(bytes, serializer),
                None => serializer.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<Vec<u8>>, D::Error> {
            Option::<String>::deserialize(deserializer)?
                .map(|text| STANDARD.decode(text).map_err(serde::de::Error::custom))
                .transpose()
        }
    }
}
