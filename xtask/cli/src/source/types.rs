//! The schemas of the API types, built from their parsed attributes as the `Schema` impls
//! that `#[kubebuilder::schema]` generates build them (`kubebuilder-attributes`'
//! `schema/generate.rs`, function for function), and checked as its `const`s check them: a
//! check that fails is a compile error there, and the build's to report here.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use kubebuilder::__private::schema::by_path::{self, Container, Typed};
use kubebuilder::__private::schema::{self, Message, Payload, Property, Tagging};
use kubebuilder::schema::{Docs, Literal, Marker, Node, Rule, Shape};
use kubebuilder_attributes::schema::{
    self as parsed, ApiType, Field, Kind, Union, Variant, VariantFields,
};
use kubebuilder_attributes::{Markers, Spanned, Value};
use syn::{GenericArgument, Item, PathArguments, Type};

use super::modules::{ModuleId, Sources};
use super::names::{Names, Resolved};
use super::{DeferToBuild, defer_to_build};

/// An API type's schema, and what a field of the type starts from.
#[derive(Clone)]
pub struct Evaluated {
    /// `Schema::schema()`.
    pub schema: JSONSchemaProps,
    /// `Schema::node()` and `Schema::SHAPE`.
    pub typed: Typed,
}

/// The API types of the crates read, evaluated on demand.
pub struct Types<'a> {
    sources: &'a Sources,
    names: &'a Names<'a>,
    api_types: &'a BTreeMap<(ModuleId, String), ApiType>,
    evaluated: RefCell<BTreeMap<(ModuleId, String), Evaluated>>,
    /// The types being evaluated: a type that holds itself recurses forever in its
    /// compiled `Schema` impl too.
    evaluating: RefCell<BTreeSet<(ModuleId, String)>>,
}

impl<'a> Types<'a> {
    /// Over the API types by the module and name they are defined with.
    pub fn new(
        sources: &'a Sources,
        names: &'a Names<'a>,
        api_types: &'a BTreeMap<(ModuleId, String), ApiType>,
    ) -> Types<'a> {
        Types {
            sources,
            names,
            api_types,
            evaluated: RefCell::default(),
            evaluating: RefCell::default(),
        }
    }

    /// The API type `name` of `module`.
    pub fn api_type(&self, module: ModuleId, name: &str) -> Result<Evaluated, DeferToBuild> {
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
        let evaluated = Evaluator {
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
    pub fn typed(&self, module: ModuleId, ty: &Type) -> Result<Typed, DeferToBuild> {
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
                Ok(by_path::array(self.typed(module, &array.elem)?, len))
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
    pub fn typed_path(&self, module: ModuleId, path: &syn::Path) -> Result<Typed, DeferToBuild> {
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
                Ok(container.of(self.typed(module, inner)?))
            }
            (Resolved::Item(defined_in, name), []) => self.typed_item(defined_in, &name),
            (resolved, _) => defer_to_build!("{resolved:?} is not a type the source reader knows"),
        }
    }

    /// A struct, enum or type alias of the crates read.
    fn typed_item(&self, module: ModuleId, name: &str) -> Result<Typed, DeferToBuild> {
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

fn known_leaf(path: &str) -> Result<Typed, DeferToBuild> {
    match by_path::leaf(path) {
        Some(typed) => Ok(typed),
        None => defer_to_build!("`{path}` is not a type the source reader knows"),
    }
}

/// Evaluates one API type in its module, as its generated `Schema` impl does.
struct Evaluator<'t, 'a> {
    types: &'t Types<'a>,
    module: ModuleId,
}

impl Evaluator<'_, '_> {
    fn evaluate(&self, api_type: &ApiType) -> Result<Evaluated, DeferToBuild> {
        let schema = self.schema_body(api_type)?;
        let node = self.node_body(api_type, &schema)?;
        let shape = self.shape(api_type)?;
        self.checks(api_type, &shape)?;
        Ok(Evaluated {
            schema,
            typed: Typed {
                node,
                shape,
                is_byte: false,
            },
        })
    }

    /// `Schema::node()` of a field's type, or an empty node when schemaless.
    fn field_typed(&self, field: &Field) -> Result<Typed, DeferToBuild> {
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

    /// `kubebuilder::schema::field(node, doc, own, items)`, with `doc` when the field has none.
    fn field_schema(&self, field: &Field, doc: &str) -> Result<JSONSchemaProps, DeferToBuild> {
        let node = self.field_typed(field)?.node;
        let doc = if field.doc.is_empty() {
            doc
        } else {
            &field.doc
        };
        let (own, items) = render(&field.markers)?;
        Ok(schema::field(node, doc, own, items))
    }

    /// The `Property` of a struct field.
    fn property(&self, field: &Field) -> Result<Property, DeferToBuild> {
        let (own, _) = render(&field.markers)?;
        Ok(Property {
            name: leak(&field.json_name),
            schema: self.field_schema(field, "")?,
            required: field.required(),
            inline: field.inline,
            markers: own,
        })
    }

    fn properties(&self, fields: &[Field]) -> Result<Vec<Property>, DeferToBuild> {
        fields.iter().map(|field| self.property(field)).collect()
    }

    fn schema_body(&self, api_type: &ApiType) -> Result<JSONSchemaProps, DeferToBuild> {
        let doc = &api_type.doc;
        let (own, items) = render(&api_type.markers)?;
        Ok(match &api_type.shape {
            Kind::Struct(fields) => schema::object(doc, self.properties(fields)?, own),
            Kind::Newtype(field) => schema::field(self.field_typed(field)?.node, doc, own, items),
            Kind::Enum(values) => schema::string_enum(doc, string_literals(values), own),
            Kind::Custom => schema::from_markers(own),
            Kind::Union(union) => self.union_schema(union, doc, &api_type.markers)?,
        })
    }

    fn union_schema(
        &self,
        union: &Union,
        doc: &str,
        markers: &Markers,
    ) -> Result<JSONSchemaProps, DeferToBuild> {
        let (own, _) = render(markers)?;
        match &union.tagging {
            parsed::Tagging::External => {
                let properties = union
                    .variants
                    .iter()
                    .map(|variant| {
                        Ok(Property {
                            name: leak(&variant.name),
                            schema: self.variant_schema(variant)?,
                            required: false,
                            inline: false,
                            markers: &[],
                        })
                    })
                    .collect::<Result<_, DeferToBuild>>()?;
                // The markers as written, then serde's "exactly one key".
                let names = union.variants.iter().map(|v| leak(&v.name)).collect();
                let mut markers = own.to_vec();
                markers.push(Marker::ExactlyOneOf(leak_slice(names)));
                Ok(schema::object(doc, properties, &markers))
            }
            parsed::Tagging::Internal(tag) => {
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
                    .collect::<Result<_, DeferToBuild>>()?;
                Ok(schema::internally_tagged(doc, tag, variants, own))
            }
            parsed::Tagging::Untagged => {
                let variants = union
                    .variants
                    .iter()
                    .map(|variant| Ok((variant.name.as_str(), self.variant_schema(variant)?)))
                    .collect::<Result<_, DeferToBuild>>()?;
                Ok(schema::untagged(doc, variants, own))
            }
        }
    }

    /// The schema of a variant's value: its struct or its newtype's.
    fn variant_schema(&self, variant: &Variant) -> Result<JSONSchemaProps, DeferToBuild> {
        let doc = &variant.doc;
        Ok(match &variant.fields {
            VariantFields::Unit => schema::object(doc, Vec::new(), &[]),
            VariantFields::Newtype(field) => self.field_schema(field, doc)?,
            VariantFields::Struct(fields) => schema::object(doc, self.properties(fields)?, &[]),
        })
    }

    /// `Schema::node()`: unit enums, newtypes over primitives and custom types with a
    /// primitive type are Go's named basic types.
    fn node_body(
        &self,
        api_type: &ApiType,
        schema: &JSONSchemaProps,
    ) -> Result<Node, DeferToBuild> {
        Ok(match &api_type.shape {
            Kind::Struct(_) | Kind::Union(_) => Node::named(schema.clone()),
            Kind::Newtype(field) => {
                Node::named_like(schema.clone(), &self.field_typed(field)?.node)
            }
            Kind::Enum(_) => Node::named_primitive(schema.clone()),
            Kind::Custom => Node::named_like(schema.clone(), &Node::inline(schema.clone())),
        })
    }

    /// `Schema::SHAPE`.
    fn shape(&self, api_type: &ApiType) -> Result<Shape, DeferToBuild> {
        let name = leak(&api_type.ident.to_string());
        let (own, _) = render(&api_type.markers)?;
        let base = match &api_type.shape {
            Kind::Struct(fields) if fields.iter().any(|f| f.inline) => {
                // Flattened fields' names are not known here: check nothing against it.
                Shape {
                    name,
                    ..Shape::UNKNOWN
                }
            }
            Kind::Struct(fields) => self.struct_shape(name, fields)?,
            Kind::Newtype(field) => Shape {
                name,
                raw_bytes: false,
                ..self.field_typed(field)?.shape
            },
            Kind::Enum(values) => Shape {
                enum_: string_literals(values),
                ..Shape::typed(name, "string")
            },
            Kind::Custom => Shape::typed(name, ""),
            Kind::Union(union) => self.union_shape(union, name)?,
        };
        Ok(Shape::with_markers(base, own))
    }

    fn struct_shape(&self, name: &'static str, fields: &[Field]) -> Result<Shape, DeferToBuild> {
        let properties = fields
            .iter()
            .map(|field| {
                Ok((
                    leak(&field.json_name),
                    leak_shape(self.field_typed(field)?.shape),
                ))
            })
            .collect::<Result<Vec<_>, DeferToBuild>>()?;
        let required = fields
            .iter()
            .filter(|field| field.required())
            .map(|field| leak(&field.json_name))
            .collect();
        Ok(Shape {
            properties: leak_slice(properties),
            required: leak_slice(required),
            ..Shape::typed(name, "object")
        })
    }

    fn variant_shape(&self, variant: &Variant) -> Result<Option<&'static Shape>, DeferToBuild> {
        Ok(match &variant.fields {
            VariantFields::Unit => None,
            VariantFields::Newtype(field) => Some(leak_shape(self.field_typed(field)?.shape)),
            VariantFields::Struct(fields) => {
                Some(leak_shape(self.struct_shape(leak(&variant.name), fields)?))
            }
        })
    }

    fn union_shape(&self, union: &Union, name: &'static str) -> Result<Shape, DeferToBuild> {
        let shapes = union
            .variants
            .iter()
            .map(|variant| self.variant_shape(variant))
            .collect::<Result<Vec<_>, DeferToBuild>>()?;
        let variant_shapes = leak_slice(shapes.iter().copied().flatten().collect());
        Ok(match &union.tagging {
            parsed::Tagging::External => {
                let properties = union
                    .variants
                    .iter()
                    .zip(&shapes)
                    .filter_map(|(variant, shape)| shape.map(|shape| (leak(&variant.name), shape)))
                    .collect();
                Shape {
                    properties: leak_slice(properties),
                    ..Shape::typed(name, "object")
                }
            }
            parsed::Tagging::Internal(tag) => {
                let names = union
                    .variants
                    .iter()
                    .map(|v| v.name.clone())
                    .collect::<Vec<_>>();
                let tag_shape = leak_shape(Shape {
                    enum_: string_literals(&names),
                    ..Shape::typed("String", "string")
                });
                Shape {
                    properties: leak_slice(vec![(leak(tag), tag_shape)]),
                    required: leak_slice(vec![leak(tag)]),
                    union: variant_shapes,
                    ..Shape::typed(name, "object")
                }
            }
            parsed::Tagging::Untagged => Shape::untagged(name, variant_shapes),
        })
    }

    /// The `const` checks the attribute generates: the type's markers (on a newtype,
    /// against its field's type), every field's, and an enum's structural schema.
    fn checks(&self, api_type: &ApiType, shape: &Shape) -> Result<(), DeferToBuild> {
        let own_shape = match &api_type.shape {
            Kind::Newtype(field) => self.field_typed(field)?.shape,
            _ => *shape,
        };
        check_markers(&api_type.markers, own_shape)?;
        if !matches!(api_type.shape, Kind::Newtype(_)) {
            for field in api_type.fields() {
                let field_shape = self.field_typed(field)?.shape;
                check_markers(&field.markers, field_shape)?;
                if !field.serde_handles_absence && !field.markers.schemaless {
                    refused(schema::check_bytes(&field_shape, field.has_bytes))?;
                }
            }
        }
        if let Kind::Union(union) = &api_type.shape {
            let tagging = match &union.tagging {
                parsed::Tagging::External => Tagging::External,
                parsed::Tagging::Internal(tag) => Tagging::Internal(leak(tag)),
                parsed::Tagging::Untagged => Tagging::Untagged,
            };
            let variants = union
                .variants
                .iter()
                .map(|variant| Ok((leak(&variant.name), self.variant_shape(variant)?)))
                .collect::<Result<Vec<_>, DeferToBuild>>()?;
            let name = leak(&api_type.ident.to_string());
            refused(schema::check_union(name, tagging, &variants))?;
        }
        Ok(())
    }
}

/// The checks of a node's markers against its shape (before its markers), as
/// `Markers::checks` generates them.
pub fn check_markers(markers: &Markers, shape: Shape) -> Result<(), DeferToBuild> {
    let (own, _) = render(markers)?;
    let node_shape = shape.with_markers(own);
    for spanned in markers.own.iter().filter(|m| m.checked) {
        let marker = marker(spanned)?;
        refused(schema::check_marker(&node_shape, spanned.name, &marker))?;
    }
    for spanned in markers.items.iter().filter(|m| m.checked) {
        let marker = marker(spanned)?;
        refused(schema::check_items_marker(
            &node_shape,
            spanned.name,
            &marker,
        ))?;
    }
    Ok(())
}

/// A failed check: the compile error the build will report.
pub fn refused(message: Option<Message>) -> Result<(), DeferToBuild> {
    match message {
        Some(message) => defer_to_build!("a check fails: {}", message.as_str()),
        None => Ok(()),
    }
}

/// A node's own markers and its `items(...)` markers, as `Markers::render` writes them.
pub fn render(markers: &Markers) -> Result<(&'static [Marker], &'static [Marker]), DeferToBuild> {
    let convert = |list: &[Spanned]| -> Result<&'static [Marker], DeferToBuild> {
        Ok(leak_slice(
            list.iter().map(marker).collect::<Result<_, _>>()?,
        ))
    };
    Ok((convert(&markers.own)?, convert(&markers.items)?))
}

/// The `kubebuilder::schema::Marker` a parsed marker is.
fn marker(spanned: &Spanned) -> Result<Marker, DeferToBuild> {
    let payload = match &spanned.value {
        Value::None => Payload::None,
        Value::Bool(b) => Payload::Bool(*b),
        Value::Number(n) => Payload::Number(*n),
        Value::Integer(i) => Payload::Integer(*i),
        Value::Text(text) => Payload::Text(leak(text)),
        Value::Fields(fields) => {
            Payload::Fields(leak_slice(fields.iter().map(|f| leak(f)).collect()))
        }
        Value::Literal(literal) => Payload::Literal(self::literal(literal)),
        Value::Literals(literals) => {
            Payload::Literals(leak_slice(literals.iter().map(self::literal).collect()))
        }
        Value::Rule(rule) => Payload::Rule(Rule {
            rule: leak(&rule.rule),
            message: rule.message.as_deref().map(leak),
            message_expression: rule.message_expression.as_deref().map(leak),
            reason: rule.reason.as_deref().map(leak),
            field_path: rule.field_path.as_deref().map(leak),
            optional_old_self: rule.optional_old_self,
        }),
        Value::Docs(docs) => Payload::Docs(Docs {
            url: leak(&docs.url),
            description: leak(&docs.description),
        }),
    };
    match schema::marker(spanned.variant, payload) {
        Some(marker) => Ok(marker),
        None => defer_to_build!("the marker `{}` has no row", spanned.name),
    }
}

fn literal(literal: &kubebuilder_attributes::Literal) -> Literal {
    use kubebuilder_attributes::Literal as Parsed;
    match literal {
        Parsed::Null => Literal::Null,
        Parsed::Bool(b) => Literal::Bool(*b),
        Parsed::Int(i) => Literal::Int(*i),
        Parsed::Float(f) => Literal::Float(*f),
        Parsed::String(s) => Literal::String(leak(s)),
        Parsed::List(items) => Literal::List(leak_slice(items.iter().map(self::literal).collect())),
        Parsed::Map(entries) => Literal::Map(leak_slice(
            entries
                .iter()
                .map(|(key, value)| (leak(key), self::literal(value)))
                .collect(),
        )),
    }
}

fn string_literals(values: &[String]) -> &'static [Literal] {
    leak_slice(values.iter().map(|v| Literal::String(leak(v))).collect())
}

/// The schema functions take `'static` data, as the generated code's constants are; the
/// reader makes each once per run, for a bounded number of types.
pub fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

pub fn leak_slice<T>(items: Vec<T>) -> &'static [T] {
    Box::leak(items.into_boxed_slice())
}

pub fn leak_shape(shape: Shape) -> &'static Shape {
    Box::leak(Box::new(shape))
}
