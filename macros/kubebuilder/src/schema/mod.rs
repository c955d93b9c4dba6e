//! OpenAPI schemas of API types, built as controller-gen builds them for Go types.
//!
//! Every type used in an API implements [`Schema`]: the attribute macros implement it for
//! the types they annotate, this crate implements it for Rust primitives and containers
//! (here) and for the Kubernetes types from `k8s-openapi` (`k8s.rs`).
//!
//! controller-gen gives a field of a named type a `$ref` node, applies the field's markers
//! to that node, and later merges it with the referenced type's schema (`flatten.rs`). A
//! [`Node`] is that pending state: the schema the field's markers apply to, plus the named
//! type's schema still to be merged under it.

mod description;
mod flatten;
mod k8s;
mod marker;
mod shape;

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

pub use description::truncate_descriptions;
pub use marker::{Literal, Marker, Rule};
pub(crate) use shape::str_eq;
pub use shape::{Message, Shape, check_items_marker, check_json_path, check_marker};

/// A type that has an OpenAPI v3 schema in a CRD.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no CRD schema",
    label = "annotate its definition with `#[kubebuilder::schema]`",
    note = "API types are structs, unit enums and newtypes with `#[kubebuilder::schema]`, Rust primitives, `Vec<T>`, `Option<T>`, `Box<T>`, maps with `String` keys, `serde_json::Value`, and the k8s-openapi types"
)]
pub trait Schema {
    /// The complete, inlined schema of the type (no $ref), type-level markers applied,
    /// descriptions included (truncation happens at render time).
    fn schema() -> JSONSchemaProps;

    /// The node a field (or list item, or map value) of this type starts from. The default
    /// is a named type's: an empty node that the field's markers apply to, merged over
    /// [`schema`](Schema::schema) afterwards.
    fn node() -> Node {
        Node::named(Self::schema())
    }

    /// What the attribute macros check markers, defaults and JSONPaths against at compile
    /// time. The default, [`Shape::UNKNOWN`], disables those checks for the type.
    const SHAPE: Shape = Shape::UNKNOWN;
}

/// A schema node before its markers apply (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    own: JSONSchemaProps,
    /// The named type's schema, merged under `own` when the node resolves.
    referenced: Option<Box<JSONSchemaProps>>,
    /// The items of an array, still pending so that `items(...)` markers apply to them.
    items: Option<Box<Node>>,
}

impl Node {
    /// A node that is its schema: primitives and containers.
    pub fn inline(schema: JSONSchemaProps) -> Node {
        Node {
            own: schema,
            ..Node::default()
        }
    }

    /// A reference to a named type.
    pub fn named(schema: JSONSchemaProps) -> Node {
        Node {
            referenced: Some(Box::new(schema)),
            ..Node::default()
        }
    }

    /// A reference to a named type over a primitive (Go: `type Port int32`): the reference
    /// carries the type and format, so that markers on the field type-check.
    pub fn named_primitive(schema: JSONSchemaProps) -> Node {
        Node {
            own: JSONSchemaProps {
                type_: schema.type_.clone(),
                format: schema.format.clone(),
                ..JSONSchemaProps::default()
            },
            referenced: Some(Box::new(schema)),
            items: None,
        }
    }

    /// A reference to a newtype over `inner`: like [`named_primitive`](Node::named_primitive)
    /// when `inner` is a primitive (or a named type over one), else like [`named`](Node::named).
    pub fn named_like(schema: JSONSchemaProps, inner: &Node) -> Node {
        let primitive = inner.items.is_none()
            && matches!(
                inner.own.type_.as_deref(),
                Some("string" | "integer" | "number" | "boolean")
            );
        if primitive {
            Node::named_primitive(schema)
        } else {
            Node::named(schema)
        }
    }

    /// An array of `items`.
    pub fn array(items: Node) -> Node {
        Node {
            own: JSONSchemaProps {
                type_: Some("array".into()),
                ..JSONSchemaProps::default()
            },
            referenced: None,
            items: Some(Box::new(items)),
        }
    }

    /// Applies markers as controller-gen does: the node's own by priority, then the
    /// `items(...)` markers to the array items.
    pub fn apply(&mut self, own: &[Marker], items: &[Marker]) {
        marker::apply_sorted(&mut self.own, own);
        if let Some(node) = self.items.as_mut() {
            marker::apply_sorted(&mut node.own, items);
        }
    }

    /// The final schema: items resolved, the named type merged in.
    pub fn resolve(self) -> JSONSchemaProps {
        let mut own = self.own;
        if let Some(items) = self.items {
            own.items = Some(JSONSchemaPropsOrArray::Schema(Box::new(items.resolve())));
        }
        match self.referenced {
            Some(referenced) => merge_reference(*referenced, own),
            None => own,
        }
    }
}

/// controller-gen's `preserveFields` + `flattenAllOfInto`: the type's schema first, the
/// field's node over it; the field's description, title, example and external docs win
/// when it has them.
fn merge_reference(mut referenced: JSONSchemaProps, mut field: JSONSchemaProps) -> JSONSchemaProps {
    let mut merged = JSONSchemaProps {
        description: referenced.description.take(),
        title: referenced.title.take(),
        example: referenced.example.take(),
        external_docs: referenced.external_docs.take(),
        // A resolved schema's allOf only holds conflicts it already hoisted: keep them.
        all_of: referenced.all_of.take(),
        ..JSONSchemaProps::default()
    };
    let docs = (
        field.description.take(),
        field.title.take(),
        field.example.take(),
        field.external_docs.take(),
    );
    flatten::flatten_into(&mut merged, referenced);
    flatten::flatten_into(&mut merged, field);
    let (description, title, example, external_docs) = docs;
    merged.description = description.or(merged.description);
    merged.title = title.or(merged.title);
    merged.example = example.or(merged.example);
    merged.external_docs = external_docs.or(merged.external_docs);
    merged
}

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
pub struct Property {
    /// The JSON name.
    pub name: &'static str,
    pub schema: JSONSchemaProps,
    pub required: bool,
    /// `#[serde(flatten)]` (Go: an embedded or `,inline` field): its fields are merged
    /// into the struct's.
    pub inline: bool,
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
    for property in properties {
        if property.inline {
            inlined.push(property.schema);
            continue;
        }
        if property.required {
            required.push(property.name.to_owned());
        }
        fields.insert(property.name.to_owned(), property.schema);
    }
    required.sort();
    schema.properties = Some(fields);
    schema.required = (!required.is_empty()).then_some(required);
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
pub fn string_enum(
    description: &str,
    values: &'static [Literal],
    markers: &[Marker],
) -> JSONSchemaProps {
    let mut schema = JSONSchemaProps {
        type_: Some("string".into()),
        description: (!description.is_empty()).then(|| description.to_owned()),
        ..JSONSchemaProps::default()
    };
    marker::apply_sorted(&mut schema, &[Marker::Enum(values)]);
    marker::apply_sorted(&mut schema, markers);
    schema
}

fn typed(type_: &str, format: Option<&str>) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some(type_.into()),
        format: format.map(Into::into),
        ..JSONSchemaProps::default()
    }
}

/// Rust primitives map as controller-gen maps the Go ones: 32-bit integers are `int32`,
/// 64-bit ones `int64`, the others have no format (Go's `int`, `int8`, `uint16`, ...).
/// Floats are `number` without a format; the macros refuse them unless allowed.
macro_rules! primitive {
    ($($ty:ty => $type_:literal $(, $format:literal)?;)*) => {$(
        impl Schema for $ty {
            fn schema() -> JSONSchemaProps {
                typed($type_, None$(.or(Some($format)))?)
            }

            fn node() -> Node {
                Node::inline(Self::schema())
            }

            const SHAPE: Shape = Shape::typed(stringify!($ty), $type_);
        }
    )*};
}

primitive! {
    bool => "boolean";
    String => "string";
    i32 => "integer", "int32";
    u32 => "integer", "int32";
    i64 => "integer", "int64";
    u64 => "integer", "int64";
    i8 => "integer";
    i16 => "integer";
    u8 => "integer";
    u16 => "integer";
    isize => "integer";
    usize => "integer";
    f32 => "number";
    f64 => "number";
}

impl<T: Schema> Schema for Vec<T> {
    fn schema() -> JSONSchemaProps {
        Self::node().resolve()
    }

    fn node() -> Node {
        Node::array(T::node())
    }

    const SHAPE: Shape = Shape {
        items: Some(&T::SHAPE),
        ..Shape::typed("Vec", "array")
    };
}

/// `Option` only makes a field optional (no `nullable`, as for Go pointers).
impl<T: Schema> Schema for Option<T> {
    fn schema() -> JSONSchemaProps {
        T::schema()
    }

    fn node() -> Node {
        T::node()
    }

    const SHAPE: Shape = T::SHAPE;
}

impl<T: Schema> Schema for Box<T> {
    fn schema() -> JSONSchemaProps {
        T::schema()
    }

    fn node() -> Node {
        T::node()
    }

    const SHAPE: Shape = T::SHAPE;
}

fn map_of(values: Node) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some("object".into()),
        additional_properties: Some(JSONSchemaPropsOrBool::Schema(Box::new(values.resolve()))),
        ..JSONSchemaProps::default()
    }
}

impl<V: Schema> Schema for BTreeMap<String, V> {
    fn schema() -> JSONSchemaProps {
        map_of(V::node())
    }

    fn node() -> Node {
        Node::inline(Self::schema())
    }

    const SHAPE: Shape = Shape {
        additional_properties: Some(&V::SHAPE),
        ..Shape::typed("BTreeMap", "object")
    };
}

impl<V: Schema, S> Schema for HashMap<String, V, S> {
    fn schema() -> JSONSchemaProps {
        map_of(V::node())
    }

    fn node() -> Node {
        Node::inline(Self::schema())
    }

    const SHAPE: Shape = Shape {
        additional_properties: Some(&V::SHAPE),
        ..Shape::typed("HashMap", "object")
    };
}

/// Arbitrary JSON: kept as it is (Go: `apiextensionsv1.JSON`).
impl Schema for serde_json::Value {
    fn schema() -> JSONSchemaProps {
        JSONSchemaProps {
            x_kubernetes_preserve_unknown_fields: Some(true),
            ..JSONSchemaProps::default()
        }
    }

    const SHAPE: Shape = Shape {
        preserve_unknown_fields: true,
        ..Shape::typed("serde_json::Value", "")
    };
}

/// `Vec<u8>` fields are base64 strings on the wire (the macros add the serde adapter), as
/// Go's `[]byte`; the field's node is this one rather than `Vec<u8>`'s array of integers.
pub fn bytes() -> Node {
    Node::inline(typed("string", Some("byte")))
}

/// The compile-time shape of a base64 `Vec<u8>` field.
pub const BYTES: Shape = Shape::typed("Vec<u8>", "string");

#[cfg(test)]
mod tests;
