//! The root object of a version as the generated code builds and checks it: its schema
//! (`apiVersion`, `kind`, `metadata`, the spec and the status), the shape its printer
//! columns and selectable fields are checked against, its hub, and its registration.
//! Reached through `__private::crd`.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use kubebuilder_model::as_str;

use super::Version;
use crate::schema::{self, Marker, Message, Property, Shape, str_eq};

/// A link-time registration of a version; see [`all`](super::all).
pub struct Registration(pub &'static Version);

inventory::collect!(Registration);

const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object.
Servers should convert recognized schemas to the latest internal value, and
may reject unrecognized values.
More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";

const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents.
Servers may infer this from the endpoint the client submits requests to.
Cannot be updated.
In CamelCase.
More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// What a root object holds beside `apiVersion`, `kind` and `metadata`.
pub enum Spec {
    /// `spec`, required (Go: `json:"spec"`).
    Required(JSONSchemaProps),
    /// `spec`, optional (Go: `json:"spec,omitempty"`): `spec = "optional"`.
    Optional(JSONSchemaProps),
    /// No spec: the fields of this object schema sit at the top level, as a ConfigMap's
    /// `data` does (`spec = "none"`).
    TopLevel(JSONSchemaProps),
}

/// The schema of a root object: `apiVersion` and `kind` (TypeMeta's docs), `metadata`
/// (always a bare object, as controller-gen writes it), the spec (or the top-level fields)
/// and the optional `status`, then the root-level markers.
pub fn root_schema(
    description: &str,
    spec: Spec,
    status: Option<JSONSchemaProps>,
    markers: &[Marker],
) -> JSONSchemaProps {
    let string = |description: &str| JSONSchemaProps {
        type_: Some("string".into()),
        description: Some(description.to_owned()),
        ..JSONSchemaProps::default()
    };
    let property = |name, schema, required| Property {
        name,
        schema,
        required,
        inline: false,
        markers: &[],
    };
    let mut properties = vec![
        property("apiVersion", string(API_VERSION_DESCRIPTION), false),
        property("kind", string(KIND_DESCRIPTION), false),
        property(
            "metadata",
            JSONSchemaProps {
                type_: Some("object".into()),
                ..JSONSchemaProps::default()
            },
            false,
        ),
    ];
    let top_level = match spec {
        Spec::Required(spec) => {
            properties.push(property("spec", spec, true));
            None
        }
        Spec::Optional(spec) => {
            properties.push(property("spec", spec, false));
            None
        }
        Spec::TopLevel(fields) => Some(fields),
    };
    properties.extend(status.map(|status| property("status", status, false)));
    let mut schema = schema::object(description, properties, &[]);
    if let Some(mut fields) = top_level {
        // The object's own schema (its fields, required ones and type-level markers), with
        // the type meta beside its fields and the root's description.
        let type_meta = schema.properties.take().unwrap_or_default();
        fields
            .properties
            .get_or_insert_with(BTreeMap::new)
            .extend(type_meta);
        fields.description = schema.description.take();
        schema = fields;
    }
    schema::apply_markers(&mut schema, markers);
    schema
}

const STRING: Shape = Shape::typed("String", "string");
const STRING_MAP: Shape = Shape {
    additional_properties: Some(&STRING),
    ..Shape::typed("BTreeMap<String, String>", "object")
};
const INTEGER: Shape = Shape::typed("i64", "integer");
const LIST: Shape = Shape {
    items: Some(&Shape::UNKNOWN),
    ..Shape::typed("Vec", "array")
};

/// ObjectMeta's fields, so that printer columns such as `.metadata.creationTimestamp`
/// are checked like the others.
pub const OBJECT_META: Shape = Shape {
    properties: &[
        ("annotations", &STRING_MAP),
        ("creationTimestamp", &STRING),
        ("deletionGracePeriodSeconds", &INTEGER),
        ("deletionTimestamp", &STRING),
        ("finalizers", &LIST),
        ("generateName", &STRING),
        ("generation", &INTEGER),
        ("labels", &STRING_MAP),
        ("managedFields", &LIST),
        ("name", &STRING),
        ("namespace", &STRING),
        ("ownerReferences", &LIST),
        ("resourceVersion", &STRING),
        ("selfLink", &STRING),
        ("uid", &STRING),
    ],
    ..Shape::typed("ObjectMeta", "object")
};

/// The shape of a root object, for checking printer column and selectable field paths.
pub const fn root_shape<'a>(
    kind: &'a str,
    properties: &'a [(&'a str, &'a Shape<'a>)],
) -> Shape<'a> {
    Shape {
        properties,
        ..Shape::typed(kind, "object")
    }
}

/// A version naming its hub (`hub = path::Kind`): the hub must be the storage version of
/// the same group and kind.
pub const fn check_hub(hub: Version, group: &str, kind: &str) -> Option<Message> {
    let message = hub_mismatch(&hub, group, kind);
    // The generated checks pass a constant, which a constant cannot drop.
    std::mem::forget(hub);
    message
}

const fn hub_mismatch(hub: &Version, group: &str, kind: &str) -> Option<Message> {
    let (hub_group, hub_kind, hub_name) =
        (as_str(&hub.group), as_str(&hub.kind), as_str(&hub.name));
    if !str_eq(hub_group, group) || !str_eq(hub_kind, kind) {
        return Some(
            Message::new("`hub` must be another version of the same kind; it is ")
                .push(hub_kind)
                .push(".")
                .push(hub_group),
        );
    }
    if !hub.storage {
        return Some(
            Message::new("`hub` must be the storage version, but ")
                .push(hub_kind)
                .push(" ")
                .push(hub_name)
                .push(" has no `storageversion`"),
        );
    }
    None
}

/// The shape of `apiVersion` and `kind`.
pub const STRING_FIELD: Shape = STRING;
