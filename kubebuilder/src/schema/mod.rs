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

pub(crate) mod build;
pub(crate) mod by_path;
mod description;
mod flatten;
mod k8s;
pub(crate) mod marker;
pub(crate) mod shape;
pub(crate) mod union;

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

pub(crate) use build::{Property, object};
pub(crate) use description::truncate_descriptions;
pub(crate) use k8s::with_embedded_object_meta;
pub use marker::{Docs, Literal, Marker, Rule};
pub use shape::Shape;
pub(crate) use shape::{Message, str_eq};

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
    const SHAPE: Shape<'static> = Shape::UNKNOWN;

    /// `u8`: a `Vec` of it is base64 bytes (Go's `[]byte`), not an array of integers.
    #[doc(hidden)]
    const IS_BYTE: bool = false;
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
    /// when `inner` is a primitive (or a named type over one), else like [`named`](Node::named),
    /// with the type when `inner` is a list or a map (controller-gen types a reference to a
    /// named slice or map, so that field markers such as `+listType` see it).
    pub fn named_like(schema: JSONSchemaProps, inner: &Node) -> Node {
        let type_ = inner.own.type_.as_deref();
        let primitive = inner.items.is_none()
            && matches!(type_, Some("string" | "integer" | "number" | "boolean"));
        if primitive {
            return Node::named_primitive(schema);
        }
        let mut node = Node::named(schema);
        if matches!(type_, Some("array" | "object")) {
            node.own.type_ = type_.map(Into::into);
        }
        node
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
        // controller-gen's `+k8s:required` on a `$ref` (a named struct type): at least one
        // field, unless the field's markers bound it.
        if self.referenced.is_some() && self.own.type_.is_none() && own.contains(&Marker::NonEmpty)
        {
            self.own.min_properties.get_or_insert(1);
        }
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

/// Applies markers to a schema in controller-gen's order.
pub(crate) fn apply_markers(schema: &mut JSONSchemaProps, markers: &[Marker]) {
    marker::apply_sorted(schema, markers);
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
    ($($ty:ty => $type_:literal $(, $format:literal)?;)*) => {
        $(
            crate::apply::applied_as_themselves!($ty);

            impl Schema for $ty {
                fn schema() -> JSONSchemaProps {
                    typed($type_, None$(.or(Some($format)))?)
                }

                fn node() -> Node {
                    Node::inline(Self::schema())
                }

                const SHAPE: Shape<'static> = Shape::typed(stringify!($ty), $type_);
            }
        )*

        /// The primitive named `name` as written above (`i32`, `String`).
        fn primitive(name: &str) -> Option<by_path::Typed<'static>> {
            match name {
                $( stringify!($ty) => Some(by_path::Typed::of::<$ty>()), )*
                "u8" => Some(by_path::Typed::of::<u8>()),
                _ => None,
            }
        }
    };
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
    u16 => "integer";
    isize => "integer";
    usize => "integer";
    f32 => "number";
    f64 => "number";
}

crate::apply::applied_as_themselves!(u8);

impl Schema for u8 {
    fn schema() -> JSONSchemaProps {
        typed("integer", None)
    }

    fn node() -> Node {
        Node::inline(Self::schema())
    }

    const SHAPE: Shape<'static> = Shape::typed("u8", "integer");
    const IS_BYTE: bool = true;
}

/// A list; `Vec<u8>` is base64 bytes wherever it is (the macros add the serde adapter).
impl<T: Schema> Schema for Vec<T> {
    fn schema() -> JSONSchemaProps {
        Self::node().resolve()
    }

    fn node() -> Node {
        vec_node(T::node(), T::IS_BYTE)
    }

    const SHAPE: Shape<'static> = vec_shape(&T::SHAPE, T::IS_BYTE);
}

/// The node of a `Vec` of `items`.
fn vec_node(items: Node, items_are_bytes: bool) -> Node {
    if items_are_bytes {
        bytes()
    } else {
        Node::array(items)
    }
}

/// The shape of a `Vec` of `items`.
const fn vec_shape<'a>(items: &'a Shape<'a>, items_are_bytes: bool) -> Shape<'a> {
    if items_are_bytes {
        BYTES
    } else {
        Shape {
            items: Some(items),
            raw_bytes: items.raw_bytes,
            ..Shape::typed("Vec", "array")
        }
    }
}

/// A fixed-size array: a list of exactly `N` items (serde reads no other length). Arrays of
/// `u8` are lists of integers, as Go's `[N]byte` are.
impl<T: Schema, const N: usize> Schema for [T; N] {
    fn schema() -> JSONSchemaProps {
        Self::node().resolve()
    }

    fn node() -> Node {
        array_node(T::node(), N)
    }

    const SHAPE: Shape<'static> = array_shape(&T::SHAPE);
}

/// The node of an array of `len` `items`.
fn array_node(items: Node, len: usize) -> Node {
    let mut node = Node::array(items);
    node.own.min_items = Some(len as i64);
    node.own.max_items = Some(len as i64);
    node
}

/// The shape of an array of `items`.
const fn array_shape<'a>(items: &'a Shape<'a>) -> Shape<'a> {
    Shape {
        items: Some(items),
        raw_bytes: items.raw_bytes,
        ..Shape::typed("array", "array")
    }
}

/// `Option` only makes a field optional (no `nullable`, as for Go pointers).
impl<T: Schema> Schema for Option<T> {
    fn schema() -> JSONSchemaProps {
        T::schema()
    }

    fn node() -> Node {
        T::node()
    }

    const SHAPE: Shape<'static> = T::SHAPE;
}

impl<T: Schema> Schema for Box<T> {
    fn schema() -> JSONSchemaProps {
        T::schema()
    }

    fn node() -> Node {
        T::node()
    }

    const SHAPE: Shape<'static> = T::SHAPE;
}

fn map_of(values: Node) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some("object".into()),
        additional_properties: Some(JSONSchemaPropsOrBool::Schema(Box::new(values.resolve()))),
        ..JSONSchemaProps::default()
    }
}

/// The shape of a map named `name` with `values`.
const fn map_shape<'a>(name: &'a str, values: &'a Shape<'a>) -> Shape<'a> {
    Shape {
        additional_properties: Some(values),
        raw_bytes: values.raw_bytes,
        ..Shape::typed(name, "object")
    }
}

impl<V: Schema> Schema for BTreeMap<String, V> {
    fn schema() -> JSONSchemaProps {
        map_of(V::node())
    }

    fn node() -> Node {
        Node::inline(Self::schema())
    }

    const SHAPE: Shape<'static> = map_shape("BTreeMap", &V::SHAPE);
}

impl<V: Schema, S> Schema for HashMap<String, V, S> {
    fn schema() -> JSONSchemaProps {
        map_of(V::node())
    }

    fn node() -> Node {
        Node::inline(Self::schema())
    }

    const SHAPE: Shape<'static> = map_shape("HashMap", &V::SHAPE);
}

/// Arbitrary JSON: kept as it is (Go: `apiextensionsv1.JSON`).
impl Schema for serde_json::Value {
    fn schema() -> JSONSchemaProps {
        JSONSchemaProps {
            x_kubernetes_preserve_unknown_fields: Some(true),
            ..JSONSchemaProps::default()
        }
    }

    const SHAPE: Shape<'static> = Shape {
        preserve_unknown_fields: true,
        ..Shape::typed("serde_json::Value", "")
    };
}

/// `Vec<u8>`: a base64 string (the macros add the serde adapter), as Go's `[]byte`.
fn bytes() -> Node {
    Node::inline(typed("string", Some("byte")))
}

/// The compile-time shape of `Vec<u8>`.
const BYTES: Shape = Shape {
    raw_bytes: true,
    ..Shape::typed("Vec<u8>", "string")
};

#[cfg(test)]
mod tests;
