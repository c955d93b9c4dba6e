//! Where the source reader keeps what its shapes refer to. The compiled `Schema::SHAPE`s are
//! constants that refer to their names, markers and inner shapes by reference; the shapes the
//! reader computes refer into this arena instead, which lives as long as one reading and
//! frees everything with it.

use kubebuilder::schema::{Literal, Marker, Shape};
use typed_arena::Arena as Of;

/// The names, shapes, markers and values of one reading.
#[derive(Default)]
pub struct Arena<'a> {
    text: Of<u8>,
    shapes: Of<Shape<'a>>,
    properties: Of<(&'a str, &'a Shape<'a>)>,
    shape_lists: Of<&'a Shape<'a>>,
    names: Of<&'a str>,
    markers: Of<Marker>,
    literals: Of<Literal>,
}

impl<'a> Arena<'a> {
    /// A copy of `text`.
    pub fn text(&'a self, text: &str) -> &'a str {
        self.text.alloc_str(text)
    }

    /// `shape`, for other shapes to refer to.
    pub fn shape(&'a self, shape: Shape<'a>) -> &'a Shape<'a> {
        self.shapes.alloc(shape)
    }

    /// A struct's fields, by JSON name.
    pub fn properties(
        &'a self,
        properties: impl IntoIterator<Item = (&'a str, &'a Shape<'a>)>,
    ) -> &'a [(&'a str, &'a Shape<'a>)] {
        self.properties.alloc_extend(properties)
    }

    /// A list of shapes (an enum's variants).
    pub fn shapes(&'a self, shapes: impl IntoIterator<Item = Shape<'a>>) -> &'a [&'a Shape<'a>] {
        self.shape_lists
            .alloc_extend(shapes.into_iter().map(|shape| self.shape(shape)))
    }

    /// A list of names (a struct's required fields).
    pub fn names<'n>(&'a self, names: impl IntoIterator<Item = &'n str>) -> &'a [&'a str] {
        self.names
            .alloc_extend(names.into_iter().map(|name| self.text(name)))
    }

    /// A node's markers.
    pub fn markers(&'a self, markers: impl IntoIterator<Item = Marker>) -> &'a [Marker] {
        self.markers.alloc_extend(markers)
    }

    /// A unit enum's values, as strings.
    pub fn strings<'n>(&'a self, values: impl IntoIterator<Item = &'n str>) -> &'a [Literal] {
        self.literals.alloc_extend(
            values
                .into_iter()
                .map(|value| Literal::String(value.to_owned().into())),
        )
    }
}
