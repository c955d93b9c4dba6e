//! Go's `,string` JSON option, for `#[serde(with = "kubebuilder::json_string")]`: a number
//! or a bool written as a JSON string (`"3"`, `"true"`) and read from one, as Go's
//! `encoding/json` does with a field tagged `json:"replicas,string"`.
//!
//! controller-gen writes the field's own type in the CRD (`integer`), not `string`; `cargo
//! kubebuilder import go` says so where it writes this.

use std::fmt::Display;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serializer};

/// Writes `value` as a JSON string of its text.
pub fn serialize<T: Display, S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// Whether `value` is its type's zero value, which Go's `omitempty` leaves out:
/// `skip_serializing_if = "kubebuilder::json_string::is_zero"`.
pub fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// Reads the value from a JSON string of its text.
pub fn deserialize<'de, T, D>(deserializer: D) -> Result<T, D::Error>
where
    T: FromStr,
    T::Err: Display,
    D: Deserializer<'de>,
{
    let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
    text.parse()
        .map_err(|error| serde::de::Error::custom(format!("{text:?}: {error}")))
}

#[cfg(test)]
mod tests {
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Counted {
        #[serde(with = "super")]
        replicas: i32,
        #[serde(with = "super")]
        enabled: bool,
    }

    #[test]
    fn numbers_and_bools_are_json_strings_both_ways() {
        let counted = Counted {
            replicas: 3,
            enabled: true,
        };
        let json = serde_json::to_string(&counted).unwrap();
        assert_eq!(json, r#"{"replicas":"3","enabled":"true"}"#);
        assert_eq!(serde_json::from_str::<Counted>(&json).unwrap(), counted);
        let error = serde_json::from_str::<Counted>(r#"{"replicas":3,"enabled":"true"}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("expected a string"), "{error}");
        let error = serde_json::from_str::<Counted>(r#"{"replicas":"x","enabled":"true"}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("\"x\": invalid digit"), "{error}");
    }
}
