//! `apply_configuration` (`+kubebuilder:ac:generate`): the type's apply configuration, what
//! a server-side apply of it sends. A struct with it gets `<Type>ApplyConfiguration`, each
//! field an `Option` of what the field's type is applied as, serialized under the field's
//! JSON name and left out unset, with a `with_<field>` builder. Any other API type is applied
//! whole, as itself (as the Kubernetes types are): a field of it in an apply configuration
//! sends all of it.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Item, Visibility};

use super::generate::SERDE_CRATE;
use super::{ApiType, Field, Kind};
use crate::types;

impl ApiType {
    /// The type's `Configure` impl and, for a struct with `apply_configuration`, its apply
    /// configuration.
    pub(super) fn apply_configuration(&self) -> TokenStream {
        let ident = &self.ident;
        // A root object (`spec = "none"`) is no field's type.
        if self.root && !self.markers.apply_configuration {
            return TokenStream::new();
        }
        let configuration = match &self.shape {
            Kind::Struct(fields) if self.markers.apply_configuration => {
                let twin = configuration_ident(ident);
                let definition = struct_configuration(&twin, self.visibility(), fields);
                return quote! {
                    #definition
                    impl ::kubebuilder::apply::Configure for #ident {
                        type Configuration = #twin;
                    }
                };
            }
            _ => quote!(#ident),
        };
        quote! {
            impl ::kubebuilder::apply::Configure for #ident {
                type Configuration = #configuration;
            }
        }
    }

    /// The stub beside errors: applied as itself, so that uses resolve; none when the stub
    /// has no serde (the bound would be one more error).
    pub(super) fn apply_configuration_stub(&self, serde: bool) -> TokenStream {
        let ident = &self.ident;
        if !serde || self.root {
            return TokenStream::new();
        }
        quote! {
            impl ::kubebuilder::apply::Configure for #ident {
                type Configuration = #ident;
            }
        }
    }

    fn visibility(&self) -> &Visibility {
        match &self.item {
            Item::Struct(item) => &item.vis,
            Item::Enum(item) => &item.vis,
            _ => &Visibility::Inherited,
        }
    }
}

/// What a field's value is applied as. A `schemaless` field's type need not be an API type:
/// it is applied whole. Spanned on the field's type, where a type without a configuration
/// is reported.
fn configured_type(field: &Field) -> TokenStream {
    let ty = &field.ty;
    if field.markers.schemaless {
        let inner = types::option_inner(ty).unwrap_or(ty);
        quote_spanned!(ty.span()=> #inner)
    } else {
        quote_spanned!(ty.span()=> ::kubebuilder::apply::Of<#ty>)
    }
}

/// `CronJobSpec`'s `CronJobSpecApplyConfiguration`.
pub fn configuration_ident(ident: &Ident) -> Ident {
    format_ident!("{ident}ApplyConfiguration")
}

/// The apply configuration `twin` of a struct with `fields`.
pub fn struct_configuration(twin: &Ident, vis: &Visibility, fields: &[Field]) -> TokenStream {
    let named: Vec<(&Field, &Ident)> = fields
        .iter()
        .filter_map(|field| field.ident.as_ref().map(|ident| (field, ident)))
        .collect();
    let members = named.iter().map(|(field, ident)| {
        let configured = configured_type(field);
        let serde = if field.inline {
            quote!(#[serde(flatten)])
        } else {
            let name = &field.json_name;
            // Bytes are base64, as in the type itself.
            let with = field
                .has_bytes
                .then(|| quote!(with = "::kubebuilder::__private::bytes",));
            quote!(#[serde(rename = #name, #with skip_serializing_if = "::core::option::Option::is_none")])
        };
        let doc = format!("`{}`, when this manager sets it.", field.json_name);
        quote! {
            #[doc = #doc]
            #serde
            pub #ident: ::core::option::Option<#configured>,
        }
    });
    let builders = named.iter().map(|(field, ident)| {
        let configured = configured_type(field);
        let name = ident.to_string();
        let with = format_ident!("with_{}", name.trim_start_matches("r#"));
        let doc = format!("Sets `{}`.", field.json_name);
        quote! {
            #[doc = #doc]
            #[must_use]
            pub fn #with(mut self, value: impl ::core::convert::Into<#configured>) -> Self {
                self.#ident = ::core::option::Option::Some(value.into());
                self
            }
        }
    });
    let doc = format!(
        "The apply configuration of `{}`: the fields a field manager sets.",
        twin.to_string().trim_end_matches("ApplyConfiguration")
    );
    quote! {
        #[doc = #doc]
        #[derive(Clone, Debug, Default, PartialEq, ::kubebuilder::__private::serde::Serialize)]
        #[serde(crate = #SERDE_CRATE)]
        #vis struct #twin {
            #(#members)*
        }

        impl #twin {
            #(#builders)*
        }
    }
}
