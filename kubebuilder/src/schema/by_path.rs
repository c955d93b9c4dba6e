//! The types this crate implements [`Schema`] for, by the path a source names them with, and
//! what the containers make of their items. For `cargo xtask manifests`, which reads the
//! API types from their sources (without compiling them), resolves each field's type to a
//! path, and must arrive at the node and shape the compiled `Schema` impls give; the impls
//! above build theirs with the same functions. Not for other use.

use super::{
    Node, Schema, Shape, array_node, array_shape, k8s, map_of, map_shape, primitive, vec_node,
    vec_shape,
};

/// What a type contributes to its field's schema, as its `Schema` impl gives it.
#[derive(Clone, Debug)]
pub struct Typed<'a> {
    /// [`Schema::node`].
    pub node: Node,
    /// [`Schema::SHAPE`].
    pub shape: Shape<'a>,
    /// `u8`, whose `Vec` is base64 bytes.
    pub is_byte: bool,
}

impl Typed<'static> {
    /// `T`'s, from its impl.
    pub fn of<T: Schema>() -> Typed<'static> {
        Typed {
            node: T::node(),
            shape: T::SHAPE,
            is_byte: T::IS_BYTE,
        }
    }
}

/// A type without generic arguments at its canonical path: a primitive by its name (`i32`),
/// `std::string::String`, `serde_json::Value`, `kubebuilder::Duration` or a k8s-openapi type
/// (`k8s_openapi::api::core::v1::PodSpec`).
pub fn leaf(path: &str) -> Option<Typed<'static>> {
    match path {
        "std::string::String" => primitive("String"),
        "serde_json::Value" => Some(Typed::of::<serde_json::Value>()),
        "kubebuilder::Duration" => Some(Typed::of::<crate::Duration>()),
        _ if path.starts_with("k8s_openapi::") => k8s::by_path(path),
        _ if !path.contains("::") && path != "String" => primitive(path),
        _ => None,
    }
}

/// A generic type this crate implements [`Schema`] for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    /// `std::option::Option<T>`: `T`'s schema (the field is optional).
    Option,
    /// `std::boxed::Box<T>`: `T`'s schema.
    Box,
    /// `std::vec::Vec<T>`: a list of `T`, or base64 bytes for `u8`.
    Vec,
    /// `std::collections::BTreeMap<String, V>`: a map of `V`.
    BTreeMap,
    /// `std::collections::HashMap<String, V, S>`: a map of `V`.
    HashMap,
}

impl Container {
    /// The container at a canonical path (`std::vec::Vec`).
    pub fn at(path: &str) -> Option<Container> {
        Some(match path {
            "std::option::Option" => Container::Option,
            "std::boxed::Box" => Container::Box,
            "std::vec::Vec" => Container::Vec,
            "std::collections::BTreeMap" => Container::BTreeMap,
            "std::collections::HashMap" => Container::HashMap,
            _ => return None,
        })
    }

    /// The container of `inner` (a map's values; its keys are `String`). Shapes refer to
    /// their items by reference, as the compiled ones do: `keep` keeps `inner`'s for as
    /// long as the container's is used.
    pub fn of<'a>(
        self,
        inner: Typed<'a>,
        keep: impl FnOnce(Shape<'a>) -> &'a Shape<'a>,
    ) -> Typed<'a> {
        let map = match self {
            Container::Option | Container::Box => return inner,
            Container::Vec => {
                return Typed {
                    node: vec_node(inner.node, inner.is_byte),
                    shape: vec_shape(keep(inner.shape), inner.is_byte),
                    is_byte: false,
                };
            }
            Container::BTreeMap => "BTreeMap",
            Container::HashMap => "HashMap",
        };
        Typed {
            node: Node::inline(map_of(inner.node)),
            shape: map_shape(map, keep(inner.shape)),
            is_byte: false,
        }
    }
}

/// `[T; len]` of `items`; `keep` keeps the items' shape, as [`Container::of`]'s does.
pub fn array<'a>(
    items: Typed<'a>,
    len: usize,
    keep: impl FnOnce(Shape<'a>) -> &'a Shape<'a>,
) -> Typed<'a> {
    Typed {
        node: array_node(items.node, len),
        shape: array_shape(keep(items.shape)),
        is_byte: false,
    }
}
