//! The schemas of the API types, computed from their parsed attributes: kubebuilder-attributes'
//! walk over an API type (`schema/evaluate.rs`) with a backend that makes the values the
//! generated `Schema` impls make, through the same `kubebuilder::__private` functions, and
//! runs the checks its `const`s run: a check that fails is a compile error there, and the
//! build's to report here.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use kubebuilder::__private::schema::by_path::{self, Container, Typed};
use kubebuilder::__private::schema::{self, Message, Property, Tagging};
use kubebuilder::schema::{Literal, Marker, Node, Shape};
use kubebuilder_attributes::schema::evaluate::{Backend, NodeOf};
use kubebuilder_attributes::schema::{self as parsed, ApiType, Field};
use kubebuilder_attributes::{Markers, Spanned};
use syn::{GenericArgument, Item, PathArguments, Type};

use super::arena::Arena;
use super::modules::{ModuleId, Sources};
use super::names::{Names, Resolved};
use super::{DeferToBuild, defer_to_build};

/// An API type's schema, and what a field of the type starts from.
#[derive(Clone)]
pub struct Evaluated<'a> {
    /// `Schema::schema()`.
    pub schema: JSONSchemaProps,
    /// `Schema::node()` and `Schema::SHAPE`.
    pub typed: Typed<'a>,
}

/// The API types of the crates read, evaluated on demand.
pub struct Types<'a> {
    /// What the shapes refer to.
    pub arena: &'a Arena<'a>,
    sources: &'a Sources,
    names: &'a Names<'a>,
    api_types: &'a BTreeMap<(ModuleId, String), ApiType>,
    evaluated: RefCell<BTreeMap<(ModuleId, String), Evaluated<'a>>>,
    /// The types being evaluated: a type that holds itself recurses forever in its
    /// compiled `Schema` impl too.
    evaluating: RefCell<BTreeSet<(ModuleId, String)>>,
}

impl<'a> Types<'a> {
    /// Over the API types by the module and name they are defined with.
    pub fn new(
        arena: &'a Arena<'a>,
        sources: &'a Sources,
        names: &'a Names<'a>,
        api_types: &'a BTreeMap<(ModuleId, String), ApiType>,
    ) -> Types<'a> {
        Types {
            arena,
            sources,
            names,
            api_types,
            evaluated: RefCell::default(),
            evaluating: RefCell::default(),
        }
    }

    /// The API type `name` of `module`.
    pub fn api_type(&self, module: ModuleId, name: &str) -> Result<Evaluated<'a>, DeferToBuild> {
        let key = (module, name.to_owned());
        if let Some(done) = self.evaluated.borrow().get(&key) {
            return Ok(done.clone());
        }
        let Some(api_type) = self.api_types.get(&key) else {
            return defer_to_build!(
                "`{name}` in {} has no `#[kubebuilder::schema]`: its schema is only known to a build",
                self.sources.modules[module].path
            );
        };
        if !self.evaluating.borrow_mut().insert(key.clone()) {
            return defer_to_build!("`{name}` holds itself");
        }
        let evaluated = Values {
            types: self,
            module,
        }
        .evaluate(api_type);
        self.evaluating.borrow_mut().remove(&key);
        let evaluated = evaluated?;
        self.evaluated.borrow_mut().insert(key, evaluated.clone());
        Ok(evaluated)
    }

    /// What a field of type `ty`, written in `module`, starts from.
    pub fn typed(&self, module: ModuleId, ty: &Type) -> Result<Typed<'a>, DeferToBuild> {
        match ty {
            Type::Paren(inner) => self.typed(module, &inner.elem),
            Type::Group(inner) => self.typed(module, &inner.elem),
            Type::Array(array) => {
                let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(len),
                    ..
                }) = &array.len
                else {
                    return defer_to_build!("an array length that is not a literal");
                };
                let Ok(len) = len.base10_parse::<usize>() else {
                    return defer_to_build!("the array length {len}");
                };
                Ok(by_path::array(
                    self.typed(module, &array.elem)?,
                    len,
                    |shape| self.arena.shape(shape),
                ))
            }
            Type::Path(path) if path.qself.is_none() => self.typed_path(module, &path.path),
            other => defer_to_build!(
                "the type `{}` has no schema the source reader knows",
                quote::ToTokens::to_token_stream(other)
            ),
        }
    }

    /// What a field of the type at `path` (arguments included), written in `module`,
    /// starts from.
    pub fn typed_path(
        &self,
        module: ModuleId,
        path: &syn::Path,
    ) -> Result<Typed<'a>, DeferToBuild> {
        let arguments = type_arguments(path)?;
        match (self.names.resolve(module, path)?, arguments.as_slice()) {
            (Resolved::Primitive(name), []) => known_leaf(&name),
            (Resolved::External(path), []) => known_leaf(&path),
            (Resolved::External(path), arguments) => {
                let Some(container) = Container::at(&path) else {
                    return defer_to_build!("`{path}` is not a type the source reader knows");
                };
                let inner = match (container, arguments) {
                    (Container::Option | Container::Box | Container::Vec, [inner]) => inner,
                    (Container::BTreeMap, [key, values])
                    | (Container::HashMap, [key, values] | [key, values, _]) => {
                        self.check_string_key(module, key)?;
                        values
                    }
                    _ => {
                        return defer_to_build!("`{path}` with {} type arguments", arguments.len());
                    }
                };
                Ok(container.of(self.typed(module, inner)?, |shape| self.arena.shape(shape)))
            }
            (Resolved::Item(defined_in, name), []) => self.typed_item(defined_in, &name),
            (resolved, _) => defer_to_build!("{resolved:?} is not a type the source reader knows"),
        }
    }

    /// A struct, enum or type alias of the crates read.
    fn typed_item(&self, module: ModuleId, name: &str) -> Result<Typed<'a>, DeferToBuild> {
        let alias = self.sources.modules[module]
            .items
            .iter()
            .find_map(|item| match item {
                Item::Type(alias) if alias.ident == name => Some(alias),
                _ => None,
            });
        match alias {
            Some(alias) if alias.generics.params.is_empty() => self.typed(module, &alias.ty),
            Some(_) => defer_to_build!("the generic type alias `{name}`"),
            None => Ok(self.api_type(module, name)?.typed),
        }
    }

    /// A map's keys: `String`, the only keys whose maps have a `Schema` impl.
    fn check_string_key(&self, module: ModuleId, key: &Type) -> Result<(), DeferToBuild> {
        match key {
            Type::Path(path) if path.qself.is_none() => {
                match self.names.resolve(module, &path.path)? {
                    Resolved::External(path) if path == "std::string::String" => Ok(()),
                    other => defer_to_build!("a map with keys of {other:?}"),
                }
            }
            _ => defer_to_build!("a map whose keys are not `String`"),
        }
    }
}

/// The type arguments of a path's last segment.
fn type_arguments(path: &syn::Path) -> Result<Vec<&Type>, DeferToBuild> {
    let Some(last) = path.segments.last() else {
        return Ok(Vec::new());
    };
    match &last.arguments {
        PathArguments::None => Ok(Vec::new()),
        PathArguments::AngleBracketed(arguments) => arguments
            .args
            .iter()
            .map(|argument| match argument {
                GenericArgument::Type(ty) => Ok(ty),
                _ => defer_to_build!("a generic argument that is not a type"),
            })
            .collect(),
        PathArguments::Parenthesized(_) => defer_to_build!("a `Fn(...)` type"),
    }
}

fn known_leaf(path: &str) -> Result<Typed<'static>, DeferToBuild> {
    match by_path::leaf(path) {
        Some(typed) => Ok(typed),
        None => defer_to_build!("`{path}` is not a type the source reader knows"),
    }
}

/// The values of one API type's generated `Schema` impl, computed in its module: the
/// backend of the walk the attribute's code is generated with.
struct Values<'t, 'a> {
    types: &'t Types<'a>,
    module: ModuleId,
}

impl<'a> Values<'_, 'a> {
    fn evaluate(&self, api_type: &ApiType) -> Result<Evaluated<'a>, DeferToBuild> {
        let evaluated = api_type.evaluate(self)?;
        Ok(Evaluated {
            schema: evaluated.schema,
            typed: Typed {
                node: evaluated.node,
                shape: evaluated.shape,
                is_byte: false,
            },
        })
    }

    fn arena(&self) -> &'a Arena<'a> {
        self.types.arena
    }

    /// `Schema::node()` of a field's type, or an empty node when schemaless.
    fn field_typed(&self, field: &Field) -> Result<Typed<'a>, DeferToBuild> {
        if field.markers.schemaless {
            Ok(Typed {
                node: Node::default(),
                shape: Shape::typed("schemaless field", ""),
                is_byte: false,
            })
        } else {
            self.types.typed(self.module, &field.ty)
        }
    }
}

impl<'a> Backend for Values<'_, 'a> {
    type Schema = JSONSchemaProps;
    type Property = Property<'a>;
    type Node = Node;
    type Shape = Shape<'a>;
    type Check = ();
    type Error = DeferToBuild;

    fn field_shape(&self, field: &Field) -> Result<Shape<'a>, DeferToBuild> {
        Ok(self.field_typed(field)?.shape)
    }

    fn field_schema(&self, field: &Field, doc: &str) -> Result<JSONSchemaProps, DeferToBuild> {
        self.newtype_schema(field, doc, &field.markers)
    }

    fn newtype_schema(
        &self,
        field: &Field,
        doc: &str,
        markers: &Markers,
    ) -> Result<JSONSchemaProps, DeferToBuild> {
        let (own, items) = self.types.render(markers)?;
        Ok(schema::field(
            self.field_typed(field)?.node,
            doc,
            own,
            items,
        ))
    }

    fn property(&self, field: &Field) -> Result<Property<'a>, DeferToBuild> {
        let (own, _) = self.types.render(&field.markers)?;
        Ok(Property {
            name: self.arena().text(&field.json_name),
            schema: self.field_schema(field, &field.doc)?,
            required: field.required(),
            inline: field.inline,
            markers: own,
        })
    }

    fn variant_property(&self, name: &str, schema: JSONSchemaProps) -> Property<'a> {
        Property {
            name: self.arena().text(name),
            schema,
            required: false,
            inline: false,
            markers: &[],
        }
    }

    fn object(
        &self,
        doc: &str,
        properties: Vec<Property<'a>>,
        markers: Option<&Markers>,
        exactly_one_of: Option<&[String]>,
    ) -> Result<JSONSchemaProps, DeferToBuild> {
        let mut own = match markers {
            Some(markers) => self.types.render(markers)?.0.to_vec(),
            None => Vec::new(),
        };
        if let Some(names) = exactly_one_of {
            own.push(Marker::ExactlyOneOf(
                names.iter().map(|name| name.clone().into()).collect(),
            ));
        }
        Ok(schema::object(doc, properties, &own))
    }

    fn string_enum(
        &self,
        doc: &str,
        values: &[String],
        markers: &Markers,
    ) -> Result<JSONSchemaProps, DeferToBuild> {
        let values = values
            .iter()
            .map(|value| Literal::String(value.clone().into()))
            .collect();
        Ok(schema::string_enum(
            doc,
            values,
            self.types.render(markers)?.0,
        ))
    }

    fn markers_alone(&self, markers: &Markers) -> Result<JSONSchemaProps, DeferToBuild> {
        Ok(schema::from_markers(self.types.render(markers)?.0))
    }

    fn internally_tagged(
        &self,
        doc: &str,
        tag: &str,
        variants: Vec<(&str, Option<JSONSchemaProps>)>,
        markers: &Markers,
    ) -> Result<JSONSchemaProps, DeferToBuild> {
        Ok(schema::internally_tagged(
            doc,
            tag,
            variants,
            self.types.render(markers)?.0,
        ))
    }

    fn untagged(
        &self,
        doc: &str,
        variants: Vec<(&str, JSONSchemaProps)>,
        markers: &Markers,
    ) -> Result<JSONSchemaProps, DeferToBuild> {
        Ok(schema::untagged(
            doc,
            variants,
            self.types.render(markers)?.0,
        ))
    }

    fn node(&self, node: NodeOf<'_>, schema: &JSONSchemaProps) -> Result<Node, DeferToBuild> {
        Ok(match node {
            NodeOf::Named => Node::named(schema.clone()),
            NodeOf::NamedLike(field) => {
                Node::named_like(schema.clone(), &self.field_typed(field)?.node)
            }
            NodeOf::NamedPrimitive => Node::named_primitive(schema.clone()),
            NodeOf::Custom => Node::named_like(schema.clone(), &Node::inline(schema.clone())),
        })
    }

    fn typed_shape(&self, name: &str, type_: &str) -> Shape<'a> {
        Shape::typed(self.arena().text(name), self.arena().text(type_))
    }

    fn unknown_shape(&self, name: &str) -> Shape<'a> {
        Shape {
            name: self.arena().text(name),
            ..Shape::UNKNOWN
        }
    }

    fn object_shape(
        &self,
        name: &str,
        properties: Vec<(&str, Shape<'a>)>,
        required: Vec<&str>,
    ) -> Shape<'a> {
        let arena = self.arena();
        let properties = properties
            .into_iter()
            .map(|(name, shape)| (arena.text(name), arena.shape(shape)));
        Shape {
            properties: arena.properties(properties),
            required: arena.names(required),
            ..Shape::typed(arena.text(name), "object")
        }
    }

    fn newtype_shape(&self, name: &str, inner: Shape<'a>) -> Shape<'a> {
        Shape {
            name: self.arena().text(name),
            raw_bytes: false,
            ..inner
        }
    }

    fn enum_shape(&self, name: &str, values: &[String]) -> Shape<'a> {
        let arena = self.arena();
        Shape {
            enum_: arena.strings(values.iter().map(String::as_str)),
            ..Shape::typed(arena.text(name), "string")
        }
    }

    fn internally_tagged_shape(
        &self,
        name: &str,
        tag: &str,
        names: Vec<&str>,
        variants: Vec<Shape<'a>>,
    ) -> Shape<'a> {
        let arena = self.arena();
        let tag_shape = arena.shape(Shape {
            enum_: arena.strings(names),
            ..Shape::typed("String", "string")
        });
        let tag = arena.text(tag);
        Shape {
            properties: arena.properties([(tag, tag_shape)]),
            required: arena.names([tag]),
            union: arena.shapes(variants),
            ..Shape::typed(arena.text(name), "object")
        }
    }

    fn untagged_shape(&self, name: &str, variants: Vec<Shape<'a>>) -> Shape<'a> {
        let arena = self.arena();
        Shape::untagged(arena.text(name), arena.shapes(variants))
    }

    fn with_markers(&self, base: Shape<'a>, markers: &Markers) -> Result<Shape<'a>, DeferToBuild> {
        Ok(Shape::with_markers(base, self.types.render(markers)?.0))
    }

    fn own_shape(&self, _: &ApiType, shape: &Shape<'a>) -> Shape<'a> {
        *shape
    }

    fn check_markers(&self, markers: &Markers, shape: &Shape<'a>) -> Result<(), DeferToBuild> {
        self.types.check_markers(markers, *shape)
    }

    fn check_bytes(&self, field: &Field, shape: &Shape<'a>) -> Result<(), DeferToBuild> {
        refused(schema::check_bytes(shape, field.has_bytes))
    }

    fn check_union(
        &self,
        api_type: &ApiType,
        tagging: &parsed::Tagging,
        variants: Vec<(&str, Option<Shape<'a>>)>,
    ) -> Result<(), DeferToBuild> {
        let tagging = match tagging {
            parsed::Tagging::External => Tagging::External,
            parsed::Tagging::Internal(tag) => Tagging::Internal(tag),
            parsed::Tagging::Untagged => Tagging::Untagged,
        };
        let variants: Vec<(&str, Option<&Shape<'a>>)> = variants
            .iter()
            .map(|(name, shape)| (*name, shape.as_ref()))
            .collect();
        let name = api_type.ident.to_string();
        refused(schema::check_union(&name, tagging, &variants))
    }
}

impl<'a> Types<'a> {
    /// The checks of a node's markers against its shape (before its markers), as
    /// `Markers::checks` generates them.
    pub fn check_markers(&self, markers: &Markers, shape: Shape<'a>) -> Result<(), DeferToBuild> {
        let (own, items) = self.render(markers)?;
        let node_shape = shape.with_markers(own);
        for (spanned, marker) in markers.own.iter().zip(own).filter(|(m, _)| m.checked) {
            refused(schema::check_marker(&node_shape, spanned.name, marker))?;
        }
        for (spanned, marker) in markers.items.iter().zip(items).filter(|(m, _)| m.checked) {
            refused(schema::check_items_marker(
                &node_shape,
                spanned.name,
                marker,
            ))?;
        }
        Ok(())
    }

    /// A node's own markers and its `items(...)` markers, as `Markers::render` writes them.
    pub fn render(&self, markers: &Markers) -> Result<(&'a [Marker], &'a [Marker]), DeferToBuild> {
        let convert = |list: &[Spanned]| -> Result<&'a [Marker], DeferToBuild> {
            let markers = list.iter().map(marker).collect::<Result<Vec<_>, _>>()?;
            Ok(self.arena.markers(markers))
        };
        Ok((convert(&markers.own)?, convert(&markers.items)?))
    }
}

/// A failed check: the compile error the build will report.
pub fn refused(message: Option<Message>) -> Result<(), DeferToBuild> {
    match message {
        Some(message) => defer_to_build!("a check fails: {}", message.as_str()),
        None => Ok(()),
    }
}

/// The `kubebuilder::schema::Marker` a parsed marker is.
fn marker(spanned: &Spanned) -> Result<Marker, DeferToBuild> {
    match schema::marker(spanned.variant, spanned.value.clone()) {
        Some(marker) => Ok(marker),
        None => defer_to_build!("the marker `{}` has no row", spanned.name),
    }
}
