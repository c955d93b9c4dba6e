//! Items the generated code refers to; not a public API.

pub use inventory;
pub use k8s_openapi;
#[cfg(feature = "schemars")]
pub use k8s_openapi::schemars;
pub use kube_core;
pub use kubebuilder_model::webhook::DefaultPath;
pub use serde;
pub use serde_json;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::ser::SerializeStruct;

/// What the generated `Schema` impls assemble schemas with, and the compile-time checks of
/// their markers. The source reader of `cargo xtask manifests` calls the same.
pub mod schema {
    pub use crate::schema::build::{Property, field, from_markers, object, string_enum};
    pub use crate::schema::marker::Needs;
    pub use crate::schema::shape::{
        Message, check_bytes, check_items_marker, check_json_path, check_marker,
    };
    pub use crate::schema::union::{Tagging, check_union, internally_tagged, untagged};

    /// The marker of the row named `variant` (`"Minimum"`) with this value; `None` for no
    /// such row, or a value of another kind. For the source reader, which has the rows'
    /// names where the macros write the variants.
    pub fn marker(
        variant: &str,
        value: kubebuilder_model::schema::Value,
    ) -> Option<crate::schema::Marker> {
        crate::schema::Marker::from_row(variant, value)
    }

    /// Runs `build` with embedded `ObjectMeta` schemas as `crd::Options`'
    /// `generate_embedded_object_meta` says; for the source reader, which builds schemas
    /// outside `crd::merge`.
    pub fn with_embedded_object_meta<R>(generate: bool, build: impl FnOnce() -> R) -> R {
        crate::schema::with_embedded_object_meta(generate, build)
    }

    /// The types this crate implements `Schema` for, by the path a source names them with.
    pub mod by_path {
        pub use crate::schema::by_path::*;
    }
}

/// What the generated root objects and CRD versions are built and checked with.
pub mod crd {
    pub use crate::crd::root::{
        OBJECT_META, Registration, STRING_FIELD, Spec, check_hub, root_schema, root_shape,
    };
}

/// What the generated webhook declarations fall back on.
pub mod webhook {
    use std::borrow::Cow;

    use crate::webhook::Webhook;

    /// What the attribute implements `Declared` with when its arguments are wrong, next to the
    /// compile error, so that code using the type reports nothing else.
    pub const INVALID: Webhook = Webhook {
        name: Cow::Borrowed(""),
        mutating: false,
        path: None,
        url: None,
        failure_policy: Cow::Borrowed(""),
        match_policy: None,
        side_effects: Cow::Borrowed(""),
        groups: Cow::Borrowed(&[]),
        resources: Cow::Borrowed(&[]),
        verbs: Cow::Borrowed(&[]),
        versions: Cow::Borrowed(&[]),
        admission_review_versions: Cow::Borrowed(&[]),
        reinvocation_policy: None,
        timeout_seconds: None,
        service_name: Cow::Borrowed(""),
        service_namespace: Cow::Borrowed(""),
        service_port: None,
        patch: None,
    };
}

/// The `schemars::JsonSchema` of an API type: the schema a field of that type gets in our
/// CRDs (its type-level markers applied, no `$ref`), as JSON. Embedded in a kube-derive CRD,
/// it keeps our list and map types, defaults, validations and `nullable` choices.
#[cfg(feature = "schemars")]
pub fn json_schema<T: crate::schema::Schema>() -> schemars::Schema {
    let schema = T::node().resolve();
    let value = serde_json::to_value(schema).expect("a JSONSchemaProps serializes as JSON");
    schemars::Schema::try_from(value).expect("a JSONSchemaProps serializes as a JSON object")
}

/// The name of a declared version, as a constant: `hub = path::Kind` names the hub's.
pub const fn version_name(version: crate::crd::Version) -> &'static str {
    let name = match &version.name {
        std::borrow::Cow::Borrowed(name) => *name,
        std::borrow::Cow::Owned(_) => panic!("a declared version's name is a literal"),
    };
    // A constant cannot drop it; its strings are borrowed.
    std::mem::forget(version);
    name
}

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

/// Serializes a root object without a spec (`spec = "none"`) with its `apiVersion` and `kind`
/// first: `fields` serializes the object's own fields (serde's derive, `remote = "Self"`).
pub fn serialize_root<S, F>(
    serializer: S,
    api_version: &str,
    kind: &str,
    fields: F,
) -> Result<S::Ok, S::Error>
where
    S: serde::Serializer,
    F: FnOnce(serde_json::value::Serializer) -> Result<serde_json::Value, serde_json::Error>,
{
    use serde::ser::Error as _;
    let serde_json::Value::Object(fields) =
        fields(serde_json::value::Serializer).map_err(S::Error::custom)?
    else {
        return Err(S::Error::custom("a root object serializes as a map"));
    };
    let mut object = serde_json::Map::new();
    object.insert("apiVersion".into(), api_version.into());
    object.insert("kind".into(), kind.into());
    object.extend(fields);
    serde::Serialize::serialize(&object, serializer)
}

/// The spec of a kind with `spec = "optional"` reads as its default when absent.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is the spec of a kind with `spec = \"optional\"`, so it needs `Default`",
    label = "an object without `spec` reads as the default spec",
    note = "derive or implement `Default` for `{Self}`"
)]
pub trait OptionalSpec {
    fn absent() -> Self;
}

impl<T: Default> OptionalSpec for T {
    fn absent() -> Self {
        T::default()
    }
}

/// `#[serde(default = ...)]` of an optional spec.
pub fn absent_spec<T: OptionalSpec>() -> T {
    T::absent()
}

/// `Vec<u8>` as base64 strings (Go's `[]byte`), also inside `Option`, `Vec`, `Box` and maps
/// with `String` keys: `#[serde(with = "::kubebuilder::__private::bytes")]` on a field whose
/// type spells out `Vec<u8>` (the schema side is `Vec<u8>`'s `Schema` impl).
pub mod bytes {
    use std::collections::{BTreeMap, HashMap};
    use std::hash::BuildHasher;

    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// A type that holds `Vec<u8>`s written as base64.
    pub trait Base64: Sized {
        fn encode<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error>;
        fn decode<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
    }

    pub fn serialize<T: Base64, S: Serializer>(
        value: &T,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.encode(serializer)
    }

    pub fn deserialize<'de, T: Base64, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<T, D::Error> {
        T::decode(deserializer)
    }

    /// Serde through [`Base64`], for the values inside a container.
    struct Encoded<T>(T);

    impl<T: Base64> Serialize for Encoded<&T> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            self.0.encode(serializer)
        }
    }

    impl<'de, T: Base64> Deserialize<'de> for Encoded<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            T::decode(deserializer).map(Encoded)
        }
    }

    impl Base64 for Vec<u8> {
        fn encode<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_str(&STANDARD.encode(self))
        }

        fn decode<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let text = String::deserialize(deserializer)?;
            STANDARD.decode(text).map_err(serde::de::Error::custom)
        }
    }

    impl<T: Base64> Base64 for Option<T> {
        fn encode<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            match self {
                Some(value) => serializer.serialize_some(&Encoded(value)),
                None => serializer.serialize_none(),
            }
        }

        fn decode<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            Ok(Option::<Encoded<T>>::deserialize(deserializer)?.map(|encoded| encoded.0))
        }
    }

    impl<T: Base64> Base64 for Box<T> {
        fn encode<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            (**self).encode(serializer)
        }

        fn decode<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            T::decode(deserializer).map(Box::new)
        }
    }

    impl<T: Base64> Base64 for Vec<T> {
        fn encode<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_seq(self.iter().map(Encoded))
        }

        fn decode<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let items = Vec::<Encoded<T>>::deserialize(deserializer)?;
            Ok(items.into_iter().map(|encoded| encoded.0).collect())
        }
    }

    impl<T: Base64> Base64 for BTreeMap<String, T> {
        fn encode<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_map(self.iter().map(|(key, value)| (key, Encoded(value))))
        }

        fn decode<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let entries = BTreeMap::<String, Encoded<T>>::deserialize(deserializer)?;
            Ok(entries
                .into_iter()
                .map(|(key, encoded)| (key, encoded.0))
                .collect())
        }
    }

    impl<T: Base64, H: BuildHasher + Default> Base64 for HashMap<String, T, H> {
        fn encode<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_map(self.iter().map(|(key, value)| (key, Encoded(value))))
        }

        fn decode<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let entries = HashMap::<String, Encoded<T>, H>::deserialize(deserializer)?;
            Ok(entries
                .into_iter()
                .map(|(key, encoded)| (key, encoded.0))
                .collect())
        }
    }
}
