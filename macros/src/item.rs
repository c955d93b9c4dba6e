//! `#[kubebuilder::schema(...)]`: an API type (struct, newtype or unit enum) gets the
//! derives of a Kubernetes API type (Clone, Debug, PartialEq, serde with camelCase fields
//! and `None` omitted) and its `kubebuilder::schema::Schema` impl. Parse the item into an
//! [`ApiType`], validate, then generate; on error the item and a stub impl are still
//! emitted, so one mistake gives one message.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Fields, Ident, Item, LitStr, Type};

use crate::args::{self, Errors};
use crate::docs;
use crate::markers::{self, Markers, Target};
use crate::types;

/// A parsed API type.
pub struct ApiType {
    pub ident: Ident,
    pub doc: String,
    pub markers: Markers,
    pub shape: Kind,
    /// The item as written, minus our field attributes.
    item: Item,
}

pub enum Kind {
    Struct(Vec<Field>),
    Newtype(Box<Field>),
    Enum(Vec<String>),
}

pub struct Field {
    pub ty: Type,
    pub json_name: String,
    pub doc: String,
    pub markers: Markers,
    /// `#[serde(flatten)]`.
    pub inline: bool,
    pub is_option: bool,
    pub is_bytes: bool,
    /// The user's serde attributes already decide defaulting and skipping.
    serde_handles_absence: bool,
}

impl Field {
    pub fn required(&self) -> bool {
        self.markers.is_required(!self.is_option && !self.inline)
    }

    /// The node a field starts from (`Schema::node`, or the special nodes).
    fn node(&self) -> TokenStream {
        let ty = &self.ty;
        if self.markers.schemaless {
            quote!(::kubebuilder::schema::Node::default())
        } else if self.is_bytes {
            quote!(::kubebuilder::schema::bytes())
        } else {
            quote!(<#ty as ::kubebuilder::schema::Schema>::node())
        }
    }

    /// The field's compile-time shape expression.
    fn shape(&self) -> TokenStream {
        let ty = &self.ty;
        if self.markers.schemaless {
            quote!(::kubebuilder::schema::Shape::typed("schemaless field", ""))
        } else if self.is_bytes {
            quote!(::kubebuilder::schema::BYTES)
        } else {
            quote!(<#ty as ::kubebuilder::schema::Schema>::SHAPE)
        }
    }
}

/// Entry point of `#[kubebuilder::schema(...)]`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = args::parse(attr).unwrap_or_else(|error| {
        errors.extend(error);
        Vec::new()
    });
    let type_markers = markers::parse(&args, Target::Type, &mut errors);
    let item = match syn::parse2::<Item>(item) {
        Ok(item) => item,
        Err(error) => return error.to_compile_error(),
    };
    match parse(item, type_markers, &mut errors) {
        Ok(api_type) => api_type.generate(&errors),
        Err(item) => unusable(*item, &errors),
    }
}

/// The errors and the item as written (minus our field attributes), for an item that
/// cannot be an API type: code using it still resolves.
pub fn unusable(mut item: Item, errors: &Errors) -> TokenStream {
    let fields = match &mut item {
        Item::Struct(s) => Some(&mut s.fields),
        _ => None,
    };
    for field in fields.into_iter().flatten() {
        field
            .attrs
            .retain(|attr| !attr.path().is_ident("kubebuilder"));
    }
    let compile_errors = errors.to_compile_errors();
    quote!(#compile_errors #item)
}

/// Reads the item; gives it back when it cannot be an API type at all.
pub fn parse(mut item: Item, markers: Markers, errors: &mut Errors) -> Result<ApiType, Box<Item>> {
    let (ident, attrs, generics) = match &item {
        Item::Struct(s) => (s.ident.clone(), &s.attrs, &s.generics),
        Item::Enum(e) => (e.ident.clone(), &e.attrs, &e.generics),
        other => {
            errors.push(
                other.span(),
                "`#[kubebuilder::schema]` applies to structs, newtypes and unit enums",
            );
            return Err(Box::new(item));
        }
    };
    if !generics.params.is_empty() {
        errors.push(
            generics.span(),
            "API types cannot be generic: a CRD schema is one concrete type",
        );
        return Err(Box::new(item));
    }
    reject_container_rename(attrs, errors);
    let doc = docs::description(attrs);
    let shape = match &mut item {
        Item::Struct(s) => match &mut s.fields {
            Fields::Named(fields) => Kind::Struct(
                fields
                    .named
                    .iter_mut()
                    .filter_map(|field| parse_field(field, errors))
                    .collect(),
            ),
            Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                let field = fields.unnamed.first_mut().expect("one field");
                match parse_field(field, errors) {
                    Some(field) => Kind::Newtype(Box::new(field)),
                    None => return Err(Box::new(item)),
                }
            }
            other => {
                errors.push(
                    other.span(),
                    "an API struct has named fields, or is a newtype with exactly one field",
                );
                return Err(Box::new(item));
            }
        },
        Item::Enum(e) => {
            let mut values = Vec::new();
            for variant in &e.variants {
                if !matches!(variant.fields, Fields::Unit) {
                    errors.push(
                        variant.span(),
                        "only unit variants are supported: an API enum is a string enum",
                    );
                }
                values.push(
                    serde_name(&variant.attrs, errors).unwrap_or_else(|| variant.ident.to_string()),
                );
            }
            Kind::Enum(values)
        }
        _ => unreachable!("only structs and enums reach here"),
    };
    let api_type = ApiType {
        ident,
        doc,
        markers,
        shape,
        item,
    };
    api_type.validate(errors);
    Ok(api_type)
}

/// Kubernetes JSON names are camelCase; a container-wide rename would make the schema
/// disagree with the field names the macro derives.
fn reject_container_rename(attrs: &[Attribute], errors: &mut Errors) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename_all") {
                errors.push(
                    meta.path.span(),
                    "API types use camelCase JSON names; rename single fields or variants with `#[serde(rename = \"...\")]`",
                );
            }
            skip_meta_value(&meta)
        });
    }
}

fn skip_meta_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
    }
    Ok(())
}

/// `#[serde(rename = "...")]`, if any.
fn serde_name(attrs: &[Attribute], errors: &mut Errors) -> Option<String> {
    serde_options(attrs, errors).rename
}

#[derive(Default)]
struct SerdeOptions {
    rename: Option<String>,
    flatten: bool,
    skip: bool,
    handles_absence: bool,
}

fn serde_options(attrs: &[Attribute], errors: &mut Errors) -> SerdeOptions {
    let mut options = SerdeOptions::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let result = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            if path.is_ident("rename") && meta.input.peek(syn::Token![=]) {
                options.rename = Some(meta.value()?.parse::<LitStr>()?.value());
                return Ok(());
            }
            if path.is_ident("flatten") {
                options.flatten = true;
            } else if path.is_ident("skip") {
                options.skip = true;
            } else if [
                "default",
                "skip_serializing_if",
                "with",
                "serialize_with",
                "deserialize_with",
            ]
            .iter()
            .any(|name| path.is_ident(name))
            {
                options.handles_absence = true;
            }
            skip_meta_value(&meta)
        });
        if let Err(error) = result {
            errors.extend(error);
        }
    }
    options
}

/// Reads a field and strips its `#[kubebuilder(...)]` attributes; `None` for skipped fields.
fn parse_field(field: &mut syn::Field, errors: &mut Errors) -> Option<Field> {
    let mut args = Vec::new();
    field.attrs.retain(|attr| {
        if !attr.path().is_ident("kubebuilder") {
            return true;
        }
        match args::attribute_args(attr) {
            Ok(parsed) => args.extend(parsed),
            Err(error) => errors.extend(error),
        }
        false
    });
    let markers = markers::parse(&args, Target::Field, errors);
    let serde = serde_options(&field.attrs, errors);
    if serde.skip {
        return None;
    }
    let json_name = serde
        .rename
        .or_else(|| {
            field
                .ident
                .as_ref()
                .map(|ident| camel_case(&ident.to_string()))
        })
        .unwrap_or_default();
    Some(Field {
        is_option: types::option_inner(&field.ty).is_some(),
        is_bytes: types::is_bytes(&field.ty),
        ty: field.ty.clone(),
        json_name,
        doc: docs::description(&field.attrs),
        markers,
        inline: serde.flatten,
        serde_handles_absence: serde.handles_absence,
    })
}

/// serde's `rename_all = "camelCase"` of a Rust field name.
fn camel_case(name: &str) -> String {
    let name = name.strip_prefix("r#").unwrap_or(name);
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

impl ApiType {
    fn fields(&self) -> &[Field] {
        match &self.shape {
            Kind::Struct(fields) => fields,
            Kind::Newtype(field) => std::slice::from_ref(field),
            Kind::Enum(_) => &[],
        }
    }

    fn validate(&self, errors: &mut Errors) {
        let type_allows_floats = self.markers.allow_dangerous_types;
        for field in self.fields() {
            if types::mentions_float(&field.ty)
                && !type_allows_floats
                && !field.markers.allow_dangerous_types
            {
                errors.push(
                    field.ty.span(),
                    "found float, the usage of which is highly discouraged, as support for them varies across languages; \
                     serialize it as a string instead, or add `allow_dangerous_types` to the field or the type",
                );
            }
        }
        if let Kind::Enum(_) = self.shape {
            for marker in &self.markers.own {
                if matches!(marker.marker, markers::Marker::Enum(_)) {
                    errors.push(
                        marker.span,
                        "a unit enum's allowed values are its variants; remove `enum`",
                    );
                }
            }
        }
        for (marker, group) in self.markers.one_of_groups() {
            let Kind::Struct(fields) = &self.shape else {
                errors.push(marker.span, format!("`{}` applies to structs", marker.name));
                continue;
            };
            for name in group {
                match fields.iter().find(|f| &f.json_name == name) {
                    None => {
                        let known: Vec<&str> =
                            fields.iter().map(|f| f.json_name.as_str()).collect();
                        errors.push(
                            marker.span,
                            format!(
                                "`{}` names `{name}`, which is not a field of {} (fields: {})",
                                marker.name,
                                self.ident,
                                known.join(", ")
                            ),
                        );
                    }
                    Some(field) if field.required() => {
                        let span = field.markers.required_span.unwrap_or(marker.span);
                        errors.push(
                            span,
                            format!(
                                "field {name} is part of a OneOf constraint and cannot be required: make it an `Option` or mark it `optional`"
                            ),
                        );
                    }
                    Some(_) => {}
                }
            }
        }
    }

    /// The item with derives, the `Schema` impl and the compile-time checks. With errors,
    /// the item, its derives and a stub impl beside the errors.
    pub fn generate(mut self, errors: &Errors) -> TokenStream {
        self.add_serde_attributes();
        let item = &self.item;
        let ident = &self.ident;
        let derives = match &self.shape {
            Kind::Enum(_) => quote!(
                #[derive(
                    ::core::clone::Clone,
                    ::core::marker::Copy,
                    ::core::fmt::Debug,
                    ::core::cmp::PartialEq,
                    ::core::cmp::Eq,
                    ::core::hash::Hash,
                    ::kubebuilder::__private::serde::Serialize,
                    ::kubebuilder::__private::serde::Deserialize
                )]
            ),
            _ => quote!(
                #[derive(
                    ::core::clone::Clone,
                    ::core::fmt::Debug,
                    ::core::cmp::PartialEq,
                    ::kubebuilder::__private::serde::Serialize,
                    ::kubebuilder::__private::serde::Deserialize
                )]
            ),
        };
        let container = match &self.shape {
            Kind::Struct(_) => {
                quote!(#[serde(crate = "::kubebuilder::__private::serde", rename_all = "camelCase")])
            }
            _ => quote!(#[serde(crate = "::kubebuilder::__private::serde")]),
        };
        let schema_trait = quote!(::kubebuilder::schema::Schema);
        let props = quote!(::kubebuilder::__private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps);
        if !errors.is_empty() {
            // The stub keeps serde's defaults: a user's conflicting container attribute
            // is already reported.
            let compile_errors = errors.to_compile_errors();
            return quote! {
                #compile_errors
                #derives
                #[serde(crate = "::kubebuilder::__private::serde")]
                #item
                impl #schema_trait for #ident {
                    fn schema() -> #props {
                        ::core::default::Default::default()
                    }
                }
            };
        }
        let schema_body = self.schema_body();
        let node = self.node_body();
        let shape = self.shape_const();
        let checks = self.checks();
        quote! {
            #derives
            #container
            #item
            impl #schema_trait for #ident {
                fn schema() -> #props {
                    #schema_body
                }
                #node
                const SHAPE: ::kubebuilder::schema::Shape = #shape;
            }
            #checks
        }
    }

    /// serde attributes for Kubernetes conventions: `None` omitted, optional fields
    /// defaulted when absent and omitted when empty, bytes as base64.
    fn add_serde_attributes(&mut self) {
        let attributes: Vec<Option<TokenStream>> = self
            .fields()
            .iter()
            .map(|field| {
                if field.serde_handles_absence {
                    None
                } else if field.is_bytes && field.is_option {
                    Some(quote!(#[serde(default, with = "::kubebuilder::__private::base64::option", skip_serializing_if = "::core::option::Option::is_none")]))
                } else if field.is_bytes {
                    Some(quote!(#[serde(with = "::kubebuilder::__private::base64")]))
                } else if field.is_option {
                    Some(quote!(#[serde(default, skip_serializing_if = "::core::option::Option::is_none")]))
                } else if field.markers.is_marked_optional() {
                    Some(quote!(#[serde(default, skip_serializing_if = "::kubebuilder::__private::is_default")]))
                } else {
                    None
                }
            })
            .collect();
        let Item::Struct(item) = &mut self.item else {
            return;
        };
        // Skipped fields have no `Field`; pair the attributes with the remaining ones.
        let mut attributes = attributes.into_iter();
        for field in item.fields.iter_mut() {
            if is_serde_skipped(&field.attrs) {
                continue;
            }
            if let Some(attr) = attributes.next().flatten() {
                field.attrs.push(syn::parse_quote!(#attr));
            }
        }
    }

    fn schema_body(&self) -> TokenStream {
        let doc = &self.doc;
        let (own, items) = self.markers.render();
        match &self.shape {
            Kind::Struct(fields) => {
                let properties = fields.iter().map(|field| {
                    let name = &field.json_name;
                    let required = field.required();
                    let inline = field.inline;
                    let schema = field_schema(field);
                    quote!(::kubebuilder::schema::Property {
                        name: #name,
                        schema: #schema,
                        required: #required,
                        inline: #inline,
                    })
                });
                quote! {
                    const MARKERS: &[::kubebuilder::schema::Marker] = #own;
                    ::kubebuilder::schema::object(#doc, ::std::vec![#(#properties),*], MARKERS)
                }
            }
            Kind::Newtype(field) => {
                let node = field.node();
                quote! {
                    const OWN: &[::kubebuilder::schema::Marker] = #own;
                    const ITEMS: &[::kubebuilder::schema::Marker] = #items;
                    ::kubebuilder::schema::field(#node, #doc, OWN, ITEMS)
                }
            }
            Kind::Enum(values) => quote! {
                const VALUES: &[::kubebuilder::schema::Literal] = &[#(::kubebuilder::schema::Literal::String(#values)),*];
                const MARKERS: &[::kubebuilder::schema::Marker] = #own;
                ::kubebuilder::schema::string_enum(#doc, VALUES, MARKERS)
            },
        }
    }

    /// Unit enums and newtypes over primitives are Go's named basic types: the field's
    /// node carries their type so that field markers type-check.
    fn node_body(&self) -> TokenStream {
        let node = quote!(::kubebuilder::schema::Node);
        match &self.shape {
            Kind::Struct(_) => TokenStream::new(),
            Kind::Newtype(field) => {
                let inner = field.node();
                quote!(fn node() -> #node { #node::named_like(Self::schema(), &#inner) })
            }
            Kind::Enum(_) => quote!(fn node() -> #node { #node::named_primitive(Self::schema()) }),
        }
    }

    fn shape_const(&self) -> TokenStream {
        let name = self.ident.to_string();
        let changers = self.markers.type_changers();
        let shape = quote!(::kubebuilder::schema::Shape);
        let base = match &self.shape {
            Kind::Struct(fields) if fields.iter().any(|f| f.inline) => {
                // Flattened fields' names are not known here: check nothing against it.
                quote!(#shape { name: #name, ..#shape::UNKNOWN })
            }
            Kind::Struct(fields) => {
                let properties = fields.iter().map(|field| {
                    let json = &field.json_name;
                    let field_shape = field.shape();
                    quote!((#json, &#field_shape))
                });
                quote!(#shape { properties: &[#(#properties),*], ..#shape::typed(#name, "object") })
            }
            Kind::Newtype(field) => {
                let inner = field.shape();
                quote!(#shape { name: #name, ..#inner })
            }
            Kind::Enum(values) => quote!(#shape {
                enum_: &[#(::kubebuilder::schema::Literal::String(#values)),*],
                ..#shape::typed(#name, "string")
            }),
        };
        quote!(#shape::with_markers(#base, #changers))
    }

    /// `const` checks of every marker that depends on a type.
    fn checks(&self) -> TokenStream {
        let ident = &self.ident;
        let mut checks = TokenStream::new();
        // Type-level markers: on a newtype, against the inner type (its items for
        // `items(...)`); on structs and enums, against the type itself.
        let own_shape = match &self.shape {
            Kind::Newtype(field) => field.shape(),
            _ => quote!(<#ident as ::kubebuilder::schema::Schema>::SHAPE),
        };
        checks.extend(self.markers.checks(&own_shape));
        // Field markers; a newtype's only field carries no markers of its own.
        if let Kind::Struct(fields) = &self.shape {
            for field in fields {
                checks.extend(field.markers.checks(&field.shape()));
            }
        }
        checks
    }
}

fn is_serde_skipped(attrs: &[Attribute]) -> bool {
    let mut errors = Errors::default();
    serde_options(attrs, &mut errors).skip
}

/// `kubebuilder::schema::field(node, doc, own, items)` for one field.
fn field_schema(field: &Field) -> TokenStream {
    let node = field.node();
    let doc = &field.doc;
    let (own, items) = field.markers.render();
    let span = field.ty.span();
    quote_spanned! {span=>
        {
            const OWN: &[::kubebuilder::schema::Marker] = #own;
            const ITEMS: &[::kubebuilder::schema::Marker] = #items;
            ::kubebuilder::schema::field(#node, #doc, OWN, ITEMS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::camel_case;

    #[test]
    fn camel_cases_like_serde() {
        assert_eq!(
            camel_case("starting_deadline_seconds"),
            "startingDeadlineSeconds"
        );
        assert_eq!(camel_case("r#type"), "type");
        assert_eq!(camel_case("schedule"), "schedule");
    }
}
