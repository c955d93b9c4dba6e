//! What `#[kubebuilder::schema]` generates for a parsed [`ApiType`]: the item with its derives
//! and serde attributes, the `Schema` impl (schema, node and compile-time shape) and the
//! `const` checks of its markers.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Fields, Item};

use super::serde_attrs::is_serde_skipped;
use super::{ApiType, Field, Kind, Tagging, Union, Variant, VariantFields};
use crate::args::Errors;
use crate::markers::Markers;

const SERDE_CRATE: &str = "::kubebuilder::__private::serde";

impl Field {
    /// The node a field starts from (`Schema::node`, or an empty one when schemaless).
    fn node(&self) -> TokenStream {
        let ty = &self.ty;
        if self.markers.schemaless {
            quote!(::kubebuilder::schema::Node::default())
        } else {
            quote!(<#ty as ::kubebuilder::schema::Schema>::node())
        }
    }

    /// The field's compile-time shape expression.
    fn shape(&self) -> TokenStream {
        let ty = &self.ty;
        if self.markers.schemaless {
            quote!(::kubebuilder::schema::Shape::typed("schemaless field", ""))
        } else {
            quote!(<#ty as ::kubebuilder::schema::Schema>::SHAPE)
        }
    }

    /// `kubebuilder::schema::field(node, doc, own, items)`, with `doc` when the field has none.
    fn schema(&self, doc: &str) -> TokenStream {
        let node = self.node();
        let doc = if self.doc.is_empty() { doc } else { &self.doc };
        let (own, items) = self.markers.render();
        let span = self.ty.span();
        quote_spanned! {span=>
            {
                const OWN: &[::kubebuilder::schema::Marker] = #own;
                const ITEMS: &[::kubebuilder::schema::Marker] = #items;
                ::kubebuilder::__private::schema::field(#node, #doc, OWN, ITEMS)
            }
        }
    }

    /// The serde attribute of Kubernetes conventions: `None` omitted, optional fields
    /// defaulted when absent and omitted when empty, bytes as base64. `newtype`: the only
    /// field of a newtype or tuple variant, which is never absent.
    fn serde_attribute(&self, newtype: bool) -> Option<TokenStream> {
        let bytes = "::kubebuilder::__private::bytes";
        let with = self.has_bytes.then(|| quote!(with = #bytes,));
        if self.serde_handles_absence {
            None
        } else if newtype || !(self.is_option || self.markers.is_marked_optional()) {
            self.has_bytes.then(|| quote!(#[serde(with = #bytes)]))
        } else if self.is_option {
            Some(
                quote!(#[serde(default, #with skip_serializing_if = "::core::option::Option::is_none")]),
            )
        } else {
            Some(
                quote!(#[serde(default, #with skip_serializing_if = "::kubebuilder::__private::is_default")]),
            )
        }
    }

    /// The `Property` of a struct field: its schema and its markers.
    fn property(&self) -> TokenStream {
        let name = &self.json_name;
        let required = self.required();
        let inline = self.inline;
        let node = self.node();
        let doc = &self.doc;
        let (own, items) = self.markers.render();
        quote_spanned! {self.ty.span()=>
            {
                const OWN: &[::kubebuilder::schema::Marker] = #own;
                const ITEMS: &[::kubebuilder::schema::Marker] = #items;
                ::kubebuilder::__private::schema::Property {
                    name: #name,
                    schema: ::kubebuilder::__private::schema::field(#node, #doc, OWN, ITEMS),
                    required: #required,
                    inline: #inline,
                    markers: OWN,
                }
            }
        }
    }

    /// `(json name, &shape)` of a struct field.
    fn shape_entry(&self) -> TokenStream {
        let json = &self.json_name;
        let shape = self.shape();
        quote!((#json, &#shape))
    }

    /// The `const` checks of the field's markers, and that its bytes are the ones the
    /// base64 adapter was added for.
    fn checks(&self) -> TokenStream {
        let mut checks = self.markers.checks(&self.shape());
        if !self.serde_handles_absence && !self.markers.schemaless {
            let shape = self.shape();
            let written = self.has_bytes;
            checks.extend(quote_spanned! {self.ty.span()=>
                const _: () = if let ::core::option::Option::Some(error) =
                    ::kubebuilder::__private::schema::check_bytes(&#shape, #written)
                {
                    ::core::panic!("{}", error.as_str())
                };
            });
        }
        checks
    }
}

impl ApiType {
    /// The item with derives, the `Schema` impl and the compile-time checks. With errors,
    /// the item, its derives and a stub impl beside the errors.
    pub fn generate(mut self, errors: &Errors) -> TokenStream {
        self.add_serde_attributes();
        // serde derives nothing for arrays of more than 32 elements (already reported): the
        // stub leaves serde out rather than add its errors to ours.
        let serde =
            !matches!(self.shape, Kind::Custom) && (errors.is_empty() || self.serde_derivable());
        if !serde {
            strip_serde_attributes(&mut self.item);
        }
        let item = &self.item;
        let ident = &self.ident;
        let derives = self.derives(serde);
        let json_schema = self.json_schema_impl();
        let schema_trait = quote!(::kubebuilder::schema::Schema);
        let props = quote!(::kubebuilder::__private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps);
        if !errors.is_empty() {
            // The stub keeps serde's defaults: a user's conflicting container attribute
            // is already reported.
            let compile_errors = errors.to_compile_errors();
            let remote = self.root.then(|| quote!(remote = "Self",));
            let container = serde.then(|| quote!(#[serde(#remote crate = #SERDE_CRATE)]));
            return quote! {
                #compile_errors
                #derives
                #container
                #item
                impl #schema_trait for #ident {
                    fn schema() -> #props {
                        ::core::default::Default::default()
                    }
                }
                #json_schema
            };
        }
        let container = self.container_attribute();
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
            #json_schema
            #checks
        }
    }

    /// `schemars::JsonSchema` from the `Schema` impl: the schema a field of this type has in
    /// our CRDs, so that kube-derive CRDs (and other schemars users) embed it as it is.
    /// schemars is no new dependency: k8s-openapi's `schemars` feature, which the
    /// `kubebuilder` crate enables, brings it. A root object (`spec = "none"`) is not a field
    /// type and gets none; a user's own derive is reported (`own_derives`) and left alone.
    fn json_schema_impl(&self) -> TokenStream {
        if self.root || self.own_derives.iter().any(|own| own == "JsonSchema") {
            return TokenStream::new();
        }
        let ident = &self.ident;
        let name = ident.to_string();
        let schemars = quote!(::kubebuilder::__private::schemars);
        let cow = quote!(::std::borrow::Cow<'static, str>);
        quote! {
            impl #schemars::JsonSchema for #ident {
                fn schema_name() -> #cow {
                    ::std::borrow::Cow::Borrowed(#name)
                }
                fn schema_id() -> #cow {
                    ::std::borrow::Cow::Borrowed(::core::concat!(::core::module_path!(), "::", #name))
                }
                fn json_schema(_: &mut #schemars::SchemaGenerator) -> #schemars::Schema {
                    ::kubebuilder::__private::json_schema::<Self>()
                }
            }
        }
    }

    /// The derives of an API type, less those the user wrote (already reported).
    fn derives(&self, serde: bool) -> TokenStream {
        let serde_crate = quote!(::kubebuilder::__private::serde);
        let mut derives = vec![
            quote!(::core::clone::Clone),
            quote!(::core::fmt::Debug),
            quote!(::core::cmp::PartialEq),
        ];
        if let Kind::Enum(_) = self.shape {
            derives.extend([
                quote!(::core::marker::Copy),
                quote!(::core::cmp::Eq),
                quote!(::core::hash::Hash),
            ]);
        }
        if serde {
            derives.extend([
                quote!(#serde_crate::Serialize),
                quote!(#serde_crate::Deserialize),
            ]);
        }
        let derives = derives.into_iter().filter(|derive| {
            let name = derive.to_string();
            !self
                .own_derives
                .iter()
                .any(|own| name.ends_with(&format!(":: {own}")))
        });
        quote!(#[derive(#(#derives),*)])
    }

    /// Whether serde can derive its impls: no array of more than 32 elements.
    fn serde_derivable(&self) -> bool {
        self.fields()
            .iter()
            .all(|field| crate::types::longest_array(&field.ty).is_none_or(|(len, _)| len <= 32))
    }

    fn container_attribute(&self) -> TokenStream {
        match &self.shape {
            // The root object's serde writes `apiVersion` and `kind`, then what serde derives
            // here (as inherent functions).
            Kind::Struct(_) if self.root => {
                quote!(#[serde(remote = "Self", crate = #SERDE_CRATE, rename_all = "camelCase")])
            }
            Kind::Struct(_) => quote!(#[serde(crate = #SERDE_CRATE, rename_all = "camelCase")]),
            Kind::Custom => TokenStream::new(),
            _ => quote!(#[serde(crate = #SERDE_CRATE)]),
        }
    }

    /// serde attributes for Kubernetes conventions on every field, and camelCase field
    /// names in struct variants.
    fn add_serde_attributes(&mut self) {
        match (&self.shape, &mut self.item) {
            (Kind::Struct(fields), Item::Struct(item)) => {
                add_field_attributes(&mut item.fields, fields.iter(), false);
                if self.root {
                    add_metadata(item);
                }
            }
            (Kind::Newtype(field), Item::Struct(item)) => {
                add_field_attributes(&mut item.fields, [field.as_ref()].into_iter(), true);
            }
            (Kind::Union(union), Item::Enum(item)) => {
                for (variant, parsed) in item.variants.iter_mut().zip(&union.variants) {
                    match &parsed.fields {
                        VariantFields::Struct(fields) => {
                            variant
                                .attrs
                                .push(syn::parse_quote!(#[serde(rename_all = "camelCase")]));
                            add_field_attributes(&mut variant.fields, fields.iter(), false);
                        }
                        VariantFields::Newtype(field) => {
                            add_field_attributes(
                                &mut variant.fields,
                                [field.as_ref()].into_iter(),
                                true,
                            );
                        }
                        VariantFields::Unit => {}
                    }
                }
            }
            _ => {}
        }
    }

    fn schema_body(&self) -> TokenStream {
        let doc = &self.doc;
        let (own, items) = self.markers.render();
        let markers = quote!(const MARKERS: &[::kubebuilder::schema::Marker] = #own;);
        match &self.shape {
            Kind::Struct(fields) => {
                let properties = fields.iter().map(Field::property);
                quote! {
                    #markers
                    ::kubebuilder::__private::schema::object(#doc, ::std::vec![#(#properties),*], MARKERS)
                }
            }
            Kind::Newtype(field) => {
                let node = field.node();
                quote! {
                    #markers
                    const ITEMS: &[::kubebuilder::schema::Marker] = #items;
                    ::kubebuilder::__private::schema::field(#node, #doc, MARKERS, ITEMS)
                }
            }
            Kind::Enum(values) => quote! {
                const VALUES: &[::kubebuilder::schema::Literal] = &[#(::kubebuilder::schema::Literal::String(#values)),*];
                #markers
                ::kubebuilder::__private::schema::string_enum(#doc, VALUES, MARKERS)
            },
            // controller-gen gives a type with its own MarshalJSON its markers alone, without
            // its description.
            Kind::Custom => quote! {
                #markers
                ::kubebuilder::__private::schema::from_markers(MARKERS)
            },
            Kind::Union(union) => union.schema_body(doc, &self.markers),
        }
    }

    /// Unit enums, newtypes over primitives and custom types with a primitive type are Go's
    /// named basic types: the field's node carries their type so that field markers
    /// type-check.
    fn node_body(&self) -> TokenStream {
        let node = quote!(::kubebuilder::schema::Node);
        match &self.shape {
            Kind::Struct(_) | Kind::Union(_) => TokenStream::new(),
            Kind::Newtype(field) => {
                let inner = field.node();
                quote!(fn node() -> #node { #node::named_like(Self::schema(), &#inner) })
            }
            Kind::Enum(_) => quote!(fn node() -> #node { #node::named_primitive(Self::schema()) }),
            Kind::Custom => quote! {
                fn node() -> #node {
                    let schema = Self::schema();
                    #node::named_like(schema.clone(), &#node::inline(schema))
                }
            },
        }
    }

    fn shape_const(&self) -> TokenStream {
        let name = self.ident.to_string();
        let (own, _) = self.markers.render();
        let shape = quote!(::kubebuilder::schema::Shape);
        let base = match &self.shape {
            Kind::Struct(fields) if fields.iter().any(|f| f.inline) => {
                // Flattened fields' names are not known here: check nothing against it.
                quote!(#shape { name: #name, ..#shape::UNKNOWN })
            }
            Kind::Struct(fields) => struct_shape(&name, fields),
            Kind::Newtype(field) => {
                // A newtype has serde of its own: its bytes are not its fields' business.
                let inner = field.shape();
                quote!(#shape { name: #name, raw_bytes: false, ..#inner })
            }
            Kind::Enum(values) => quote!(#shape {
                enum_: &[#(::kubebuilder::schema::Literal::String(#values)),*],
                ..#shape::typed(#name, "string")
            }),
            Kind::Custom => quote!(#shape::typed(#name, "")),
            Kind::Union(union) => union.shape(&name),
        };
        quote!(#shape::with_markers(#base, #own))
    }

    /// `const` checks of every marker that depends on a type.
    fn checks(&self) -> TokenStream {
        let ident = &self.ident;
        let mut checks = TokenStream::new();
        // Type-level markers: on a newtype, against the inner type (its items for
        // `items(...)`); on the others, against the type itself.
        let own_shape = match &self.shape {
            Kind::Newtype(field) => field.shape(),
            _ => quote!(<#ident as ::kubebuilder::schema::Schema>::SHAPE),
        };
        checks.extend(self.markers.checks(&own_shape));
        // A newtype's only field carries no markers of its own.
        if !matches!(self.shape, Kind::Newtype(_)) {
            for field in self.fields() {
                checks.extend(field.checks());
            }
        }
        if let Kind::Union(union) = &self.shape {
            checks.extend(union.check(ident));
        }
        checks
    }
}

/// The root object's `metadata`, first (as Kubernetes writes it).
fn add_metadata(item: &mut syn::ItemStruct) {
    if let Fields::Named(fields) = &mut item.fields {
        fields.named.insert(
            0,
            syn::parse_quote! {
                /// Standard object metadata.
                #[serde(default)]
                pub metadata: ::kubebuilder::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta
            },
        );
    }
}

/// The item's `#[serde(...)]` attributes, for a stub without serde derives.
fn strip_serde_attributes(item: &mut Item) {
    let not_serde = |attr: &syn::Attribute| !attr.path().is_ident("serde");
    match item {
        Item::Struct(item) => {
            item.attrs.retain(not_serde);
            item.fields
                .iter_mut()
                .for_each(|f| f.attrs.retain(not_serde));
        }
        Item::Enum(item) => {
            item.attrs.retain(not_serde);
            for variant in item.variants.iter_mut() {
                variant.attrs.retain(not_serde);
                variant
                    .fields
                    .iter_mut()
                    .for_each(|f| f.attrs.retain(not_serde));
            }
        }
        _ => {}
    }
}

/// Adds each parsed field's serde attribute to the item's field; skipped fields have no
/// parsed field.
fn add_field_attributes<'a>(
    item_fields: &mut Fields,
    fields: impl Iterator<Item = &'a Field>,
    newtype: bool,
) {
    let mut attributes = fields.map(|field| field.serde_attribute(newtype));
    for field in item_fields.iter_mut() {
        if is_serde_skipped(&field.attrs) {
            continue;
        }
        if let Some(attr) = attributes.next().flatten() {
            field.attrs.push(syn::parse_quote!(#attr));
        }
    }
}

/// The shape of a struct (or struct variant) named `name` with these fields.
fn struct_shape(name: &str, fields: &[Field]) -> TokenStream {
    let shape = quote!(::kubebuilder::schema::Shape);
    let properties = fields.iter().map(Field::shape_entry);
    let required = fields.iter().filter(|f| f.required()).map(|f| &f.json_name);
    quote!(#shape {
        properties: &[#(#properties),*],
        required: &[#(#required),*],
        ..#shape::typed(#name, "object")
    })
}

impl Union {
    fn schema_body(&self, doc: &str, markers: &Markers) -> TokenStream {
        let schema = quote!(::kubebuilder::__private::schema);
        let (own, _) = markers.render();
        match &self.tagging {
            Tagging::External => {
                let names = self.variants.iter().map(|v| &v.name);
                let properties = self.variants.iter().map(|variant| {
                    let name = &variant.name;
                    let variant_schema = variant.schema();
                    quote!(#schema::Property { name: #name, schema: #variant_schema, required: false, inline: false, markers: &[] })
                });
                // The markers as written, then serde's "exactly one key".
                let own = markers.own.iter().map(crate::markers::Spanned::tokens);
                quote! {
                    const MARKERS: &[::kubebuilder::schema::Marker] = &[#(#own,)* ::kubebuilder::schema::Marker::ExactlyOneOf(&[#(#names),*])];
                    #schema::object(#doc, ::std::vec![#(#properties),*], MARKERS)
                }
            }
            Tagging::Internal(tag) => {
                let variants = self.variants.iter().map(|variant| {
                    let name = &variant.name;
                    let variant_schema = match variant.fields {
                        VariantFields::Unit => quote!(::core::option::Option::None),
                        _ => {
                            let schema = variant.schema();
                            quote!(::core::option::Option::Some(#schema))
                        }
                    };
                    quote!((#name, #variant_schema))
                });
                quote! {
                    const MARKERS: &[::kubebuilder::schema::Marker] = #own;
                    #schema::internally_tagged(#doc, #tag, ::std::vec![#(#variants),*], MARKERS)
                }
            }
            Tagging::Untagged => {
                let variants = self.variants.iter().map(|variant| {
                    let name = &variant.name;
                    let schema = variant.schema();
                    quote!((#name, #schema))
                });
                quote! {
                    const MARKERS: &[::kubebuilder::schema::Marker] = #own;
                    #schema::untagged(#doc, ::std::vec![#(#variants),*], MARKERS)
                }
            }
        }
    }

    fn shape(&self, name: &str) -> TokenStream {
        let shape = quote!(::kubebuilder::schema::Shape);
        let variant_shapes = self.variants.iter().filter_map(Variant::shape);
        match &self.tagging {
            Tagging::External => {
                let properties = self.variants.iter().filter_map(|variant| {
                    let name = &variant.name;
                    variant.shape().map(|shape| quote!((#name, &#shape)))
                });
                quote!(#shape { properties: &[#(#properties),*], ..#shape::typed(#name, "object") })
            }
            Tagging::Internal(tag) => {
                let names = self.variants.iter().map(|v| &v.name);
                quote!(#shape {
                    properties: &[(#tag, &#shape {
                        enum_: &[#(::kubebuilder::schema::Literal::String(#names)),*],
                        ..#shape::typed("String", "string")
                    })],
                    required: &[#tag],
                    union: &[#(&#variant_shapes),*],
                    ..#shape::typed(#name, "object")
                })
            }
            Tagging::Untagged => {
                quote!(#shape::untagged(#name, &[#(&#variant_shapes),*]))
            }
        }
    }

    /// The compile-time check that the enum has a structural schema.
    fn check(&self, ident: &syn::Ident) -> TokenStream {
        let name = ident.to_string();
        let schema = quote!(::kubebuilder::__private::schema);
        let tagging = match &self.tagging {
            Tagging::External => quote!(#schema::Tagging::External),
            Tagging::Internal(tag) => quote!(#schema::Tagging::Internal(#tag)),
            Tagging::Untagged => quote!(#schema::Tagging::Untagged),
        };
        let variants = self.variants.iter().map(|variant| {
            let name = &variant.name;
            let shape = match variant.shape() {
                Some(shape) => quote!(::core::option::Option::Some(&#shape)),
                None => quote!(::core::option::Option::None),
            };
            quote!((#name, #shape))
        });
        quote_spanned! {ident.span()=>
            const _: () = if let ::core::option::Option::Some(error) =
                #schema::check_union(#name, #tagging, &[#(#variants),*])
            {
                ::core::panic!("{}", error.as_str())
            };
        }
    }
}

impl Variant {
    /// The schema of the variant's value: its struct or its newtype's.
    fn schema(&self) -> TokenStream {
        let doc = &self.doc;
        match &self.fields {
            VariantFields::Unit => {
                quote!(::kubebuilder::__private::schema::object(#doc, ::std::vec![], &[]))
            }
            VariantFields::Newtype(field) => field.schema(doc),
            VariantFields::Struct(fields) => {
                let properties = fields.iter().map(Field::property);
                quote!(::kubebuilder::__private::schema::object(#doc, ::std::vec![#(#properties),*], &[]))
            }
        }
    }

    fn shape(&self) -> Option<TokenStream> {
        match &self.fields {
            VariantFields::Unit => None,
            VariantFields::Newtype(field) => Some(field.shape()),
            VariantFields::Struct(fields) => Some(struct_shape(&self.name, fields)),
        }
    }
}
