//! The schemas the generated `Schema` impls assemble: a field's, a struct's, a unit enum's
//! and a custom type's. Reached through `__private::schema`.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

use kubebuilder_model::schema::Literals;

use super::{Marker, Node, flatten, marker};

/// The schema of one field: `node` with the field's doc and markers.
pub fn field(
    mut node: Node,
    description: &str,
    own: &[Marker],
    items: &[Marker],
) -> JSONSchemaProps {
    node.own.description = (!description.is_empty()).then(|| description.to_owned());
    node.apply(own, items);
    node.resolve()
}

/// A field of a struct, for [`object`].
pub struct Property<'a> {
    /// The JSON name.
    pub name: &'a str,
    /// The field's schema, with its doc and markers ([`field`]).
    pub schema: JSONSchemaProps,
    /// Listed in the struct's `required`: as the `required` and `optional` markers say,
    /// else unless the field is an `Option` (controller-gen's precedence).
    pub required: bool,
    /// `#[serde(flatten)]` (Go: an embedded or `,inline` field): its fields are merged
    /// into the struct's.
    pub inline: bool,
    /// The field's markers, for those that change the struct too
    /// ([`Marker::apply_to_object`]).
    pub markers: &'a [Marker],
}

/// The schema of a struct: its fields, then the type-level markers.
pub fn object(description: &str, properties: Vec<Property>, markers: &[Marker]) -> JSONSchemaProps {
    let mut schema = JSONSchemaProps {
        type_: Some("object".into()),
        description: (!description.is_empty()).then(|| description.to_owned()),
        ..JSONSchemaProps::default()
    };
    let mut fields = BTreeMap::new();
    let mut required = Vec::new();
    let mut inlined = Vec::new();
    let mut optional = Vec::new();
    for property in properties {
        if property.inline {
            inlined.push(property.schema);
            continue;
        }
        if property.required {
            required.push(property.name.to_owned());
        } else {
            optional.push((property.name, property.markers));
        }
        fields.insert(property.name.to_owned(), property.schema);
    }
    required.sort();
    schema.properties = Some(fields);
    schema.required = (!required.is_empty()).then_some(required);
    // controller-gen's struct pass, in field order, before the type's own markers.
    for (name, field_markers) in optional {
        for marker in field_markers {
            marker.apply_to_object(&mut schema, name);
        }
    }
    marker::apply_sorted(&mut schema, markers);
    // Embedded fields merge after the markers, as controller-gen flattens its `allOf`
    // late; their descriptions are not merged.
    for embedded in inlined {
        flatten::flatten_into(&mut schema, embedded);
    }
    schema
}

/// The schema of a unit enum: a string with its variants as the enum, then the type-level
/// markers.
pub fn string_enum(description: &str, values: Literals, markers: &[Marker]) -> JSONSchemaProps {
    let mut schema = JSONSchemaProps {
        type_: Some("string".into()),
        description: (!description.is_empty()).then(|| description.to_owned()),
        ..JSONSchemaProps::default()
    };
    marker::apply_sorted(&mut schema, &[Marker::Enum(values)]);
    marker::apply_sorted(&mut schema, markers);
    schema
}

/// The schema of a type with serde impls of its own (`custom_serde`): its markers alone, as
/// controller-gen writes a Go type with `MarshalJSON` (without its description).
pub fn from_markers(markers: &[Marker]) -> JSONSchemaProps {
    let mut schema = JSONSchemaProps::default();
    marker::apply_sorted(&mut schema, markers);
    schema
}
