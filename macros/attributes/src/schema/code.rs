//! The backend of the walk (`evaluate.rs`) that writes the code of a `Schema` impl: each
//! schema, node and shape an expression over `kubebuilder::__private`, each check a `const`
//! item whose span is the attribute that fails it.

use std::convert::Infallible;

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::evaluate::{Backend, NodeOf};
use super::{ApiType, Field, Tagging};
use crate::markers::{Markers, Spanned as SpannedMarker};
use crate::tokens::Constant;
use kubebuilder_model::schema::Literal;

/// Writes code.
pub struct Code;

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
}

impl Backend for Code {
    type Schema = TokenStream;
    type Property = TokenStream;
    type Node = Option<TokenStream>;
    type Shape = TokenStream;
    type Check = TokenStream;
    type Error = Infallible;

    fn field_shape(&self, field: &Field) -> Result<TokenStream, Infallible> {
        let ty = &field.ty;
        Ok(if field.markers.schemaless {
            quote!(::kubebuilder::schema::Shape::typed("schemaless field", ""))
        } else {
            quote!(<#ty as ::kubebuilder::schema::Schema>::SHAPE)
        })
    }

    fn field_schema(&self, field: &Field, doc: &str) -> Result<TokenStream, Infallible> {
        let node = field.node();
        let (own, items) = field.markers.render();
        Ok(quote_spanned! {field.ty.span()=>
            {
                const OWN: &[::kubebuilder::schema::Marker] = #own;
                const ITEMS: &[::kubebuilder::schema::Marker] = #items;
                ::kubebuilder::__private::schema::field(#node, #doc, OWN, ITEMS)
            }
        })
    }

    fn newtype_schema(
        &self,
        field: &Field,
        doc: &str,
        markers: &Markers,
    ) -> Result<TokenStream, Infallible> {
        let node = field.node();
        let (own, items) = markers.render();
        Ok(quote! {
            const MARKERS: &[::kubebuilder::schema::Marker] = #own;
            const ITEMS: &[::kubebuilder::schema::Marker] = #items;
            ::kubebuilder::__private::schema::field(#node, #doc, MARKERS, ITEMS)
        })
    }

    fn property(&self, field: &Field) -> Result<TokenStream, Infallible> {
        let name = &field.json_name;
        let required = field.required();
        let inline = field.inline;
        let node = field.node();
        let doc = &field.doc;
        let (own, items) = field.markers.render();
        Ok(quote_spanned! {field.ty.span()=>
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
        })
    }

    fn variant_property(&self, name: &str, variant_schema: TokenStream) -> TokenStream {
        quote!(::kubebuilder::__private::schema::Property { name: #name, schema: #variant_schema, required: false, inline: false, markers: &[] })
    }

    fn object(
        &self,
        doc: &str,
        properties: Vec<TokenStream>,
        markers: Option<&Markers>,
        exactly_one_of: Option<&[String]>,
    ) -> Result<TokenStream, Infallible> {
        let marker = quote!(::kubebuilder::schema::Marker);
        Ok(match (markers, exactly_one_of) {
            (None, _) => {
                quote!(::kubebuilder::__private::schema::object(#doc, ::std::vec![#(#properties),*], &[]))
            }
            (Some(markers), None) => {
                let (own, _) = markers.render();
                quote! {
                    const MARKERS: &[#marker] = #own;
                    ::kubebuilder::__private::schema::object(#doc, ::std::vec![#(#properties),*], MARKERS)
                }
            }
            // The markers as written, then serde's "exactly one key".
            (Some(markers), Some(names)) => {
                let own = markers.own.iter().map(SpannedMarker::tokens);
                let names = kubebuilder_model::texts(names.iter().cloned()).constant();
                quote! {
                    const MARKERS: &[#marker] = &[#(#own,)* #marker::ExactlyOneOf(#names)];
                    ::kubebuilder::__private::schema::object(#doc, ::std::vec![#(#properties),*], MARKERS)
                }
            }
        })
    }

    fn string_enum(
        &self,
        doc: &str,
        values: &[String],
        markers: &Markers,
    ) -> Result<TokenStream, Infallible> {
        let (own, _) = markers.render();
        let values = string_literals(values);
        Ok(quote! {
            const VALUES: &[::kubebuilder::schema::Literal] = #values;
            const MARKERS: &[::kubebuilder::schema::Marker] = #own;
            ::kubebuilder::__private::schema::string_enum(#doc, ::std::borrow::Cow::Borrowed(VALUES), MARKERS)
        })
    }

    fn markers_alone(&self, markers: &Markers) -> Result<TokenStream, Infallible> {
        let (own, _) = markers.render();
        Ok(quote! {
            const MARKERS: &[::kubebuilder::schema::Marker] = #own;
            ::kubebuilder::__private::schema::from_markers(MARKERS)
        })
    }

    fn internally_tagged(
        &self,
        doc: &str,
        tag: &str,
        variants: Vec<(&str, Option<TokenStream>)>,
        markers: &Markers,
    ) -> Result<TokenStream, Infallible> {
        let (own, _) = markers.render();
        let variants = variants.into_iter().map(|(name, variant)| match variant {
            Some(variant) => quote!((#name, ::core::option::Option::Some(#variant))),
            None => quote!((#name, ::core::option::Option::None)),
        });
        Ok(quote! {
            const MARKERS: &[::kubebuilder::schema::Marker] = #own;
            ::kubebuilder::__private::schema::internally_tagged(#doc, #tag, ::std::vec![#(#variants),*], MARKERS)
        })
    }

    fn untagged(
        &self,
        doc: &str,
        variants: Vec<(&str, TokenStream)>,
        markers: &Markers,
    ) -> Result<TokenStream, Infallible> {
        let (own, _) = markers.render();
        let variants = variants
            .into_iter()
            .map(|(name, variant)| quote!((#name, #variant)));
        Ok(quote! {
            const MARKERS: &[::kubebuilder::schema::Marker] = #own;
            ::kubebuilder::__private::schema::untagged(#doc, ::std::vec![#(#variants),*], MARKERS)
        })
    }

    /// The `fn node()` of the impl, when it is not the named-type default.
    fn node(&self, node: NodeOf<'_>, _: &TokenStream) -> Result<Option<TokenStream>, Infallible> {
        let ty = quote!(::kubebuilder::schema::Node);
        Ok(match node {
            NodeOf::Named => None,
            NodeOf::NamedLike(field) => {
                let inner = field.node();
                Some(quote!(fn node() -> #ty { #ty::named_like(Self::schema(), &#inner) }))
            }
            NodeOf::NamedPrimitive => {
                Some(quote!(fn node() -> #ty { #ty::named_primitive(Self::schema()) }))
            }
            NodeOf::Custom => Some(quote! {
                fn node() -> #ty {
                    let schema = Self::schema();
                    #ty::named_like(schema.clone(), &#ty::inline(schema))
                }
            }),
        })
    }

    fn typed_shape(&self, name: &str, type_: &str) -> TokenStream {
        quote!(::kubebuilder::schema::Shape::typed(#name, #type_))
    }

    fn unknown_shape(&self, name: &str) -> TokenStream {
        let shape = quote!(::kubebuilder::schema::Shape);
        quote!(#shape { name: #name, ..#shape::UNKNOWN })
    }

    fn object_shape(
        &self,
        name: &str,
        properties: Vec<(&str, TokenStream)>,
        required: Vec<&str>,
    ) -> TokenStream {
        let shape = quote!(::kubebuilder::schema::Shape);
        let properties = properties
            .into_iter()
            .map(|(json, field)| quote!((#json, &#field)));
        quote!(#shape {
            properties: &[#(#properties),*],
            required: &[#(#required),*],
            ..#shape::typed(#name, "object")
        })
    }

    fn newtype_shape(&self, name: &str, inner: TokenStream) -> TokenStream {
        let shape = quote!(::kubebuilder::schema::Shape);
        quote!(#shape { name: #name, raw_bytes: false, ..#inner })
    }

    fn enum_shape(&self, name: &str, values: &[String]) -> TokenStream {
        let shape = quote!(::kubebuilder::schema::Shape);
        let values = string_literals(values);
        quote!(#shape {
            enum_: #values,
            ..#shape::typed(#name, "string")
        })
    }

    fn internally_tagged_shape(
        &self,
        name: &str,
        tag: &str,
        names: Vec<&str>,
        variants: Vec<TokenStream>,
    ) -> TokenStream {
        let shape = quote!(::kubebuilder::schema::Shape);
        let names = string_literals(&names);
        quote!(#shape {
            properties: &[(#tag, &#shape {
                enum_: #names,
                ..#shape::typed("String", "string")
            })],
            required: &[#tag],
            union: &[#(&#variants),*],
            ..#shape::typed(#name, "object")
        })
    }

    fn untagged_shape(&self, name: &str, variants: Vec<TokenStream>) -> TokenStream {
        quote!(::kubebuilder::schema::Shape::untagged(#name, &[#(&#variants),*]))
    }

    fn with_markers(
        &self,
        base: TokenStream,
        markers: &Markers,
    ) -> Result<TokenStream, Infallible> {
        let (own, _) = markers.render();
        Ok(quote!(::kubebuilder::schema::Shape::with_markers(#base, #own)))
    }

    fn own_shape(&self, api_type: &ApiType, _: &TokenStream) -> TokenStream {
        let ident = &api_type.ident;
        quote!(<#ident as ::kubebuilder::schema::Schema>::SHAPE)
    }

    fn check_markers(
        &self,
        markers: &Markers,
        shape: &TokenStream,
    ) -> Result<TokenStream, Infallible> {
        Ok(markers.checks(shape))
    }

    fn check_bytes(&self, field: &Field, shape: &TokenStream) -> Result<TokenStream, Infallible> {
        let written = field.has_bytes;
        Ok(quote_spanned! {field.ty.span()=>
            const _: () = if let ::core::option::Option::Some(error) =
                ::kubebuilder::__private::schema::check_bytes(&#shape, #written)
            {
                ::core::panic!("{}", error.as_str())
            };
        })
    }

    fn check_union(
        &self,
        api_type: &ApiType,
        tagging: &Tagging,
        variants: Vec<(&str, Option<TokenStream>)>,
    ) -> Result<TokenStream, Infallible> {
        let ident = &api_type.ident;
        let name = ident.to_string();
        let tagging = match tagging {
            Tagging::External => quote!(::kubebuilder::__private::schema::Tagging::External),
            Tagging::Internal(tag) => {
                quote!(::kubebuilder::__private::schema::Tagging::Internal(#tag))
            }
            Tagging::Untagged => quote!(::kubebuilder::__private::schema::Tagging::Untagged),
        };
        let variants = variants.into_iter().map(|(name, shape)| {
            let shape = match shape {
                Some(shape) => quote!(::core::option::Option::Some(&#shape)),
                None => quote!(::core::option::Option::None),
            };
            quote!((#name, #shape))
        });
        Ok(quote_spanned! {ident.span()=>
            const _: () = if let ::core::option::Option::Some(error) =
                ::kubebuilder::__private::schema::check_union(#name, #tagging, &[#(#variants),*])
            {
                ::core::panic!("{}", error.as_str())
            };
        })
    }
}

/// `&[Literal::String(…), …]`: the values of a string enum.
fn string_literals(values: &[impl AsRef<str>]) -> TokenStream {
    let values = values
        .iter()
        .map(|value| Literal::String(value.as_ref().to_owned().into()).constant());
    quote!(&[#(#values),*])
}
