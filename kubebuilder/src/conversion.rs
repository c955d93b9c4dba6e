//! Conversion between the versions of a kind, hub and spoke as controller-runtime has it:
//! one version (the storage version) is the hub, every other served version is a
//! [`Spoke`] that converts to and from it, so any version reaches any other in two steps.
//!
//! A version names its hub with `hub = path::Kind` in `#[kubebuilder::resource(...)]`; the
//! attribute then requires `Spoke<Hub>` (a compile error without it), registers the
//! spoke's conversion at link time ([`SpokeVersion`]) and gives the kind's CRD a
//! `spec.conversion` that sends conversions to the webhook server's [`CONVERT_PATH`].

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::crd::{CustomResource, Version};

/// The path the webhook server answers ConversionReviews on (controller-runtime's).
pub const CONVERT_PATH: &str = "/convert";

/// A version that is not the hub: it converts to the hub and back. Conversions are
/// fallible; what one version cannot express must be carried (an annotation, say) for
/// the round trip to give the same object back.
#[diagnostic::on_unimplemented(
    message = "`{Self}` names `{Hub}` as its hub, but does not convert to it",
    label = "`hub =` needs a conversion",
    note = "implement `kubebuilder::conversion::Spoke<{Hub}>` for `{Self}` (`cargo xtask create webhook --conversion --spoke <version>` writes the skeleton)"
)]
pub trait Spoke<Hub>: Sized {
    /// This version's object as the hub's.
    fn to_hub(self) -> Result<Hub, ConversionError>;

    /// The hub's object as this version's.
    fn from_hub(hub: Hub) -> Result<Self, ConversionError>;
}

/// Why an object cannot be converted: the field (`spec.schedule.minute`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionError {
    /// The path of the field that does not convert; empty when the object as a whole does
    /// not (it cannot be decoded, say).
    pub field: String,
    /// What is wrong, for humans.
    pub message: String,
}

impl ConversionError {
    /// The error for `field` (empty for the whole object).
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConversionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ConversionError {}

/// A spoke's conversion, as JSON objects, registered at link time by `hub =`.
#[derive(Clone, Debug)]
pub struct SpokeVersion {
    /// The version that converts.
    pub spoke: Version,
    /// The version it converts through: the storage version of the kind.
    pub hub: Version,
    /// [`Spoke::to_hub`] on the JSON of a spoke object: decodes it, converts it, encodes
    /// the hub object.
    pub to_hub: fn(Value) -> Result<Value, ConversionError>,
    /// [`Spoke::from_hub`] on the JSON of a hub object.
    pub from_hub: fn(Value) -> Result<Value, ConversionError>,
}

inventory::collect!(SpokeVersion);

/// The bounds of an object that converts as JSON.
pub trait ConvertibleObject: CustomResource + Serialize + DeserializeOwned {}

impl<T: CustomResource + Serialize + DeserializeOwned> ConvertibleObject for T {}

impl SpokeVersion {
    /// The registration of spoke `S` of hub `H` (what `hub =` submits).
    pub const fn of<S, H>() -> Self
    where
        S: Spoke<H> + ConvertibleObject,
        H: ConvertibleObject,
    {
        Self {
            spoke: S::VERSION,
            hub: H::VERSION,
            to_hub: to_hub::<S, H>,
            from_hub: from_hub::<S, H>,
        }
    }
}

fn to_hub<S: Spoke<H> + ConvertibleObject, H: ConvertibleObject>(
    object: Value,
) -> Result<Value, ConversionError> {
    let spoke: S = decode(object, &S::VERSION)?;
    encode(&spoke.to_hub()?)
}

fn from_hub<S: Spoke<H> + ConvertibleObject, H: ConvertibleObject>(
    object: Value,
) -> Result<Value, ConversionError> {
    let hub: H = decode(object, &H::VERSION)?;
    encode(&S::from_hub(hub)?)
}

/// From text, as kube's client decodes `T`: a manager then instantiates `T`'s `Deserialize`
/// (most of a controller crate's code when `T` embeds a pod template) for one reader only.
fn decode<T: DeserializeOwned>(object: Value, version: &Version) -> Result<T, ConversionError> {
    serde_json::from_str(&object.to_string()).map_err(|err| {
        ConversionError::new(
            "",
            format!("cannot decode {} {}: {err}", version.kind, version.name),
        )
    })
}

fn encode<T: Serialize>(object: &T) -> Result<Value, ConversionError> {
    serde_json::to_value(object).map_err(|err| ConversionError::new("", err.to_string()))
}

/// Converts between two versions whose fields have the same names and meaning: the
/// object's JSON read as `T` (with `T`'s `apiVersion`). The conversion `create webhook
/// --conversion` scaffolds while the versions still agree; fields `T` lacks are dropped,
/// so once the versions differ, convert field by field instead.
pub fn by_field_names<T, S>(object: S) -> Result<T, ConversionError>
where
    S: Serialize,
    T: ConvertibleObject,
{
    let mut json = encode(&object)?;
    json["apiVersion"] = Value::String(T::VERSION.api_version());
    decode(json, &T::VERSION)
}

/// Every registered spoke of the program.
pub fn spokes() -> impl Iterator<Item = &'static SpokeVersion> {
    inventory::iter::<SpokeVersion>.into_iter()
}

/// Converts `object` (any served version of a kind with spokes) to `api_version` through
/// the hub; `apiVersion` is rewritten, the rest is what the conversions give.
///
/// Errors name the field when the conversion does; an object of a kind or version no
/// spoke knows is an error too.
pub fn convert(object: Value, api_version: &str) -> Result<Value, ConversionError> {
    let from_api_version = string_at(&object, "apiVersion")?.to_owned();
    let (group, from) = split_api_version(&from_api_version);
    let kind = string_at(&object, "kind")?.to_owned();
    let (to_group, to) = split_api_version(api_version);
    if to_group != group {
        return Err(ConversionError::new(
            "apiVersion",
            format!("cannot convert {kind} from group {group:?} to group {to_group:?}"),
        ));
    }
    if from == to {
        return Ok(object);
    }
    let of_kind: Vec<&SpokeVersion> = spokes()
        .filter(|spoke| spoke.spoke.group == group && spoke.spoke.kind == kind)
        .collect();
    let Some(hub) = of_kind.first().map(|spoke| &spoke.hub) else {
        return Err(ConversionError::new(
            "kind",
            format!("no conversion is registered for {kind}.{group}"),
        ));
    };
    let spoke_of = |version: &str| {
        of_kind
            .iter()
            .find(|spoke| spoke.spoke.name == version)
            .ok_or_else(|| {
                ConversionError::new(
                    "apiVersion",
                    format!(
                        "{kind}.{group} has no version {version:?} that converts to its hub {}",
                        hub.name
                    ),
                )
            })
    };
    let in_hub = if from == hub.name {
        object
    } else {
        (spoke_of(from)?.to_hub)(object)?
    };
    if to == hub.name {
        Ok(in_hub)
    } else {
        (spoke_of(to)?.from_hub)(in_hub)
    }
}

fn string_at<'a>(object: &'a Value, field: &str) -> Result<&'a str, ConversionError> {
    object[field]
        .as_str()
        .ok_or_else(|| ConversionError::new(field, "missing"))
}

/// `group/version` (or a core `version`) as `(group, version)`.
fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}
