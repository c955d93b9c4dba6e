//! The walk over an API type, written once: which schema, node and compile-time shape each
//! kind of type gets, and which checks run against which shape, generic over a [`Backend`]
//! that makes them. `#[kubebuilder::schema]` walks it with a backend that writes the code of
//! the `Schema` impl (`code.rs`); `cargo xtask manifests` walks it with one that computes the
//! same values from the sources (kubebuilder-cli's source reader), resolving each field's type
//! by name where the compiled code resolves it through the type's `Schema` impl.

use super::{ApiType, Field, Kind, Tagging, Union, Variant, VariantFields};
use crate::markers::Markers;

/// What the walk asks of a backend. `Schema`, `Node` and `Shape` are values (the reader) or
/// expressions of them (the generated code); `Error` is why a backend cannot go on (the
/// reader defers to a build).
pub trait Backend {
    /// A `JSONSchemaProps`.
    type Schema;
    /// A struct field for [`Backend::object`]: a `Property`.
    type Property;
    /// How the type's `Schema::node` differs from the named-type default, if it does.
    type Node;
    /// A compile-time `Shape`.
    type Shape: Clone;
    /// What a check gives: a `const` item, or nothing when it passes.
    type Check;
    /// Why the walk stops.
    type Error;

    /// The shape of a field's type (`Schema::SHAPE`; a schemaless field's has no type).
    fn field_shape(&self, field: &Field) -> Result<Self::Shape, Self::Error>;
    /// A field's schema: its type's node with `doc` and the field's markers applied.
    fn field_schema(&self, field: &Field, doc: &str) -> Result<Self::Schema, Self::Error>;
    /// A newtype's schema: its field's type's node with the type's `doc` and `markers`.
    fn newtype_schema(
        &self,
        field: &Field,
        doc: &str,
        markers: &Markers,
    ) -> Result<Self::Schema, Self::Error>;
    /// A struct field: its JSON name, schema (with its own doc), requirement and markers.
    fn property(&self, field: &Field) -> Result<Self::Property, Self::Error>;
    /// A variant of an externally tagged enum as the object's optional property `name`.
    fn variant_property(&self, name: &str, schema: Self::Schema) -> Self::Property;
    /// An object with these properties, then `markers`, then `exactly_one_of` (serde's "one
    /// key" of an externally tagged enum) when given.
    fn object(
        &self,
        doc: &str,
        properties: Vec<Self::Property>,
        markers: Option<&Markers>,
        exactly_one_of: Option<&[String]>,
    ) -> Result<Self::Schema, Self::Error>;
    /// A unit enum: a string of these values, then `markers`.
    fn string_enum(
        &self,
        doc: &str,
        values: &[String],
        markers: &Markers,
    ) -> Result<Self::Schema, Self::Error>;
    /// A type with serde of its own: its markers alone.
    fn markers_alone(&self, markers: &Markers) -> Result<Self::Schema, Self::Error>;
    /// An internally tagged enum: `tag` beside each variant's fields.
    fn internally_tagged(
        &self,
        doc: &str,
        tag: &str,
        variants: Vec<(&str, Option<Self::Schema>)>,
        markers: &Markers,
    ) -> Result<Self::Schema, Self::Error>;
    /// An untagged enum: one of the variants' schemas.
    fn untagged(
        &self,
        doc: &str,
        variants: Vec<(&str, Self::Schema)>,
        markers: &Markers,
    ) -> Result<Self::Schema, Self::Error>;

    /// The type's node, from its schema.
    fn node(&self, node: NodeOf<'_>, schema: &Self::Schema) -> Result<Self::Node, Self::Error>;

    /// A known type `name` of OpenAPI type `type_` (empty for none).
    fn typed_shape(&self, name: &str, type_: &str) -> Self::Shape;
    /// A struct whose flattened fields are not known: nothing is checked against it.
    fn unknown_shape(&self, name: &str) -> Self::Shape;
    /// An object with these properties and required ones.
    fn object_shape(
        &self,
        name: &str,
        properties: Vec<(&str, Self::Shape)>,
        required: Vec<&str>,
    ) -> Self::Shape;
    /// A newtype: its field's shape under its name (its bytes are its own serde's business).
    fn newtype_shape(&self, name: &str, inner: Self::Shape) -> Self::Shape;
    /// A string enum of `values`.
    fn enum_shape(&self, name: &str, values: &[String]) -> Self::Shape;
    /// An internally tagged enum: `tag`, a string of the variants' names, beside their
    /// fields.
    fn internally_tagged_shape(
        &self,
        name: &str,
        tag: &str,
        names: Vec<&str>,
        variants: Vec<Self::Shape>,
    ) -> Self::Shape;
    /// An untagged enum's shape from its variants'.
    fn untagged_shape(&self, name: &str, variants: Vec<Self::Shape>) -> Self::Shape;
    /// `base` after the type-changing markers among `markers`.
    fn with_markers(
        &self,
        base: Self::Shape,
        markers: &Markers,
    ) -> Result<Self::Shape, Self::Error>;
    /// The shape the type's own markers are checked against: the type's `Schema::SHAPE`.
    fn own_shape(&self, api_type: &ApiType, shape: &Self::Shape) -> Self::Shape;

    /// The checks of `markers` against `shape` (before the markers).
    fn check_markers(
        &self,
        markers: &Markers,
        shape: &Self::Shape,
    ) -> Result<Self::Check, Self::Error>;
    /// A field's bytes are the ones the base64 adapter was added for.
    fn check_bytes(&self, field: &Field, shape: &Self::Shape) -> Result<Self::Check, Self::Error>;
    /// An enum with data has a structural schema.
    fn check_union(
        &self,
        api_type: &ApiType,
        tagging: &Tagging,
        variants: Vec<(&str, Option<Self::Shape>)>,
    ) -> Result<Self::Check, Self::Error>;
}

/// The variants of an enum with data, by name, with their shapes (none for a unit variant).
type VariantShapes<'u, S> = Vec<(&'u str, Option<S>)>;

/// How a type's node relates to its schema: Go's named types, and named basic types
/// (`type Port int32`) whose node carries the type so that field markers type-check.
pub enum NodeOf<'a> {
    /// A struct or an enum with data: a reference to the named type.
    Named,
    /// A newtype: like its field's type (a named basic type over a primitive).
    NamedLike(&'a Field),
    /// A unit enum: a named string.
    NamedPrimitive,
    /// A type with serde of its own: like its own schema.
    Custom,
}

/// An API type's schema, node, shape and checks, as `backend` makes them.
pub struct Evaluated<B: Backend> {
    /// `Schema::schema()`.
    pub schema: B::Schema,
    /// `Schema::node()`.
    pub node: B::Node,
    /// `Schema::SHAPE`.
    pub shape: B::Shape,
    /// The checks of its markers, its fields' and its variants'.
    pub checks: Vec<B::Check>,
}

impl ApiType {
    /// Walks the type with `backend`.
    pub fn evaluate<B: Backend>(&self, backend: &B) -> Result<Evaluated<B>, B::Error> {
        let walk = Walk {
            backend,
            api_type: self,
        };
        let schema = walk.schema()?;
        let node = walk.node(&schema)?;
        let shape = walk.shape()?;
        let checks = walk.checks(&shape)?;
        Ok(Evaluated {
            schema,
            node,
            shape,
            checks,
        })
    }
}

struct Walk<'a, B> {
    backend: &'a B,
    api_type: &'a ApiType,
}

impl<B: Backend> Walk<'_, B> {
    fn name(&self) -> String {
        self.api_type.ident.to_string()
    }

    fn schema(&self) -> Result<B::Schema, B::Error> {
        let b = self.backend;
        let (doc, markers) = (&self.api_type.doc, &self.api_type.markers);
        Ok(match &self.api_type.shape {
            Kind::Struct(fields) => b.object(doc, self.properties(fields)?, Some(markers), None)?,
            Kind::Newtype(field) => b.newtype_schema(field, doc, markers)?,
            Kind::Enum(values) => b.string_enum(doc, values, markers)?,
            Kind::Custom => b.markers_alone(markers)?,
            Kind::Union(union) => self.union_schema(union)?,
        })
    }

    fn properties(&self, fields: &[Field]) -> Result<Vec<B::Property>, B::Error> {
        fields
            .iter()
            .map(|field| self.backend.property(field))
            .collect()
    }

    fn union_schema(&self, union: &Union) -> Result<B::Schema, B::Error> {
        let b = self.backend;
        let (doc, markers) = (&self.api_type.doc, &self.api_type.markers);
        Ok(match &union.tagging {
            Tagging::External => {
                let properties = union
                    .variants
                    .iter()
                    .map(|v| Ok(b.variant_property(&v.name, self.variant_schema(v)?)))
                    .collect::<Result<_, B::Error>>()?;
                let names: Vec<String> = union.variants.iter().map(|v| v.name.clone()).collect();
                b.object(doc, properties, Some(markers), Some(&names))?
            }
            Tagging::Internal(tag) => {
                let variants = union
                    .variants
                    .iter()
                    .map(|variant| {
                        let schema = match variant.fields {
                            VariantFields::Unit => None,
                            _ => Some(self.variant_schema(variant)?),
                        };
                        Ok((variant.name.as_str(), schema))
                    })
                    .collect::<Result<_, B::Error>>()?;
                b.internally_tagged(doc, tag, variants, markers)?
            }
            Tagging::Untagged => {
                let variants = union
                    .variants
                    .iter()
                    .map(|v| Ok((v.name.as_str(), self.variant_schema(v)?)))
                    .collect::<Result<_, B::Error>>()?;
                b.untagged(doc, variants, markers)?
            }
        })
    }

    /// A variant's value: its struct, or its newtype's field (with the variant's doc when
    /// the field has none).
    fn variant_schema(&self, variant: &Variant) -> Result<B::Schema, B::Error> {
        let b = self.backend;
        Ok(match &variant.fields {
            VariantFields::Unit => b.object(&variant.doc, Vec::new(), None, None)?,
            VariantFields::Newtype(field) => {
                let doc = if field.doc.is_empty() {
                    &variant.doc
                } else {
                    &field.doc
                };
                b.field_schema(field, doc)?
            }
            VariantFields::Struct(fields) => {
                b.object(&variant.doc, self.properties(fields)?, None, None)?
            }
        })
    }

    fn node(&self, schema: &B::Schema) -> Result<B::Node, B::Error> {
        let node = match &self.api_type.shape {
            Kind::Struct(_) | Kind::Union(_) => NodeOf::Named,
            Kind::Newtype(field) => NodeOf::NamedLike(field),
            Kind::Enum(_) => NodeOf::NamedPrimitive,
            Kind::Custom => NodeOf::Custom,
        };
        self.backend.node(node, schema)
    }

    fn shape(&self) -> Result<B::Shape, B::Error> {
        let b = self.backend;
        let name = self.name();
        let base = match &self.api_type.shape {
            // Flattened fields' names are not known here: check nothing against it.
            Kind::Struct(fields) if fields.iter().any(|f| f.inline) => b.unknown_shape(&name),
            Kind::Struct(fields) => self.struct_shape(&name, fields)?,
            Kind::Newtype(field) => b.newtype_shape(&name, b.field_shape(field)?),
            Kind::Enum(values) => b.enum_shape(&name, values),
            Kind::Custom => b.typed_shape(&name, ""),
            Kind::Union(union) => self.union_shape(&name, union)?,
        };
        b.with_markers(base, &self.api_type.markers)
    }

    fn struct_shape(&self, name: &str, fields: &[Field]) -> Result<B::Shape, B::Error> {
        let properties = fields
            .iter()
            .map(|f| Ok((f.json_name.as_str(), self.backend.field_shape(f)?)))
            .collect::<Result<_, B::Error>>()?;
        let required = fields
            .iter()
            .filter(|f| f.required())
            .map(|f| f.json_name.as_str())
            .collect();
        Ok(self.backend.object_shape(name, properties, required))
    }

    fn variant_shape(&self, variant: &Variant) -> Result<Option<B::Shape>, B::Error> {
        Ok(match &variant.fields {
            VariantFields::Unit => None,
            VariantFields::Newtype(field) => Some(self.backend.field_shape(field)?),
            VariantFields::Struct(fields) => Some(self.struct_shape(&variant.name, fields)?),
        })
    }

    fn variant_shapes<'u>(
        &self,
        union: &'u Union,
    ) -> Result<VariantShapes<'u, B::Shape>, B::Error> {
        union
            .variants
            .iter()
            .map(|v| Ok((v.name.as_str(), self.variant_shape(v)?)))
            .collect()
    }

    fn union_shape(&self, name: &str, union: &Union) -> Result<B::Shape, B::Error> {
        let b = self.backend;
        let variants = self.variant_shapes(union)?;
        Ok(match &union.tagging {
            Tagging::External => {
                let properties = variants
                    .into_iter()
                    .filter_map(|(name, shape)| shape.map(|shape| (name, shape)))
                    .collect();
                b.object_shape(name, properties, Vec::new())
            }
            Tagging::Internal(tag) => {
                let names = variants.iter().map(|(name, _)| *name).collect();
                let shapes = variants.into_iter().filter_map(|(_, s)| s).collect();
                b.internally_tagged_shape(name, tag, names, shapes)
            }
            Tagging::Untagged => {
                let shapes = variants.into_iter().filter_map(|(_, s)| s).collect();
                b.untagged_shape(name, shapes)
            }
        })
    }

    /// The type's markers (on a newtype, against its field's type), every field's, and an
    /// enum's structural schema. A newtype's only field carries no markers of its own.
    fn checks(&self, shape: &B::Shape) -> Result<Vec<B::Check>, B::Error> {
        let b = self.backend;
        let api_type = self.api_type;
        let own_shape = match &api_type.shape {
            Kind::Newtype(field) => b.field_shape(field)?,
            _ => b.own_shape(api_type, shape),
        };
        let mut checks = vec![b.check_markers(&api_type.markers, &own_shape)?];
        if !matches!(api_type.shape, Kind::Newtype(_)) {
            for field in api_type.fields() {
                let field_shape = b.field_shape(field)?;
                checks.push(b.check_markers(&field.markers, &field_shape)?);
                if !field.serde_handles_absence && !field.markers.schemaless {
                    checks.push(b.check_bytes(field, &field_shape)?);
                }
            }
        }
        if let Kind::Union(union) = &api_type.shape {
            let variants = self.variant_shapes(union)?;
            checks.push(b.check_union(api_type, &union.tagging, variants)?);
        }
        Ok(checks)
    }
}
