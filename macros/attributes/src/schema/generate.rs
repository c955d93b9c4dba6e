//! What `#[kubebuilder::schema]` generates for a parsed [`ApiType`]: the item with its derives
//! and serde attributes, the `Schema` impl (schema, node and compile-time shape) and the
//! `const` checks of its markers.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Fields, Item};

use super::code::Code;
use super::evaluate::Evaluated;
use super::serde_attrs::is_serde_skipped;
use super::{ApiType, Field, Kind, VariantFields};
use crate::args::Errors;

/// Where generated serde attributes find serde.
pub(super) const SERDE_CRATE: &str = "::kubebuilder::__private::serde";

impl Field {
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
        let apply_stub = self.apply_configuration_stub(serde);
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
                #apply_stub
            };
        }
        let container = self.container_attribute();
        let apply = self.apply_configuration();
        let Ok(Evaluated {
            schema: schema_body,
            node,
            shape,
            checks,
        }) = self.evaluate(&Code);
        quote! {
            #derives
            #container
            #item
            impl #schema_trait for #ident {
                fn schema() -> #props {
                    #schema_body
                }
                #node
                const SHAPE: ::kubebuilder::schema::Shape<'static> = #shape;
            }
            #json_schema
            #apply
            #(#checks)*
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
