//! `#[kubebuilder::skip]` (controller-gen's package marker `+kubebuilder:skip`) on a version
//! module: its kinds are generated as usual (types, `crd()`, kube impls) but register no CRD
//! version, so `cargo xtask manifests` writes nothing for them. Unlike `skipversion`, the
//! module is not a version of any CRD at all, as a skipped Go package is not.
//!
//! The attribute expands the `#[kubebuilder::resource]` items of the module itself (a proc
//! macro sees the module's items before theirs run), recursing into nested modules. The
//! module must be written inline (`mod v1 { ... }`): rustc gives no proc macro the contents
//! of `mod v1;`.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::{Item, ItemMod};

use crate::args::Errors;
use crate::resource;

/// The controller-gen marker this attribute spells.
pub const SPELLS: &str = "kubebuilder:skip";

/// Entry point of `#[kubebuilder::skip]`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    if !attr.is_empty() {
        errors.push(attr.span(), "`#[kubebuilder::skip]` takes no arguments");
    }
    let module = match syn::parse2::<ItemMod>(item.clone()) {
        Ok(module) => module,
        Err(error) => {
            // The item stays, so that code using it still resolves.
            errors.push(
                error.span(),
                "`#[kubebuilder::skip]` goes on a version module (`mod v1 { ... }`), whose kinds then register no CRD version",
            );
            let errors = errors.to_compile_errors();
            return quote!(#errors #item);
        }
    };
    let module = skip_module(module, &mut errors);
    let errors = errors.to_compile_errors();
    quote!(#errors #module)
}

fn skip_module(mut module: ItemMod, errors: &mut Errors) -> TokenStream {
    // rustc refuses `#[kubebuilder::skip] mod v1;` itself (non-inline modules in proc macro
    // input are unstable).
    let Some((_, items)) = module.content.take() else {
        return module.to_token_stream();
    };
    let items: Vec<TokenStream> = items
        .into_iter()
        .map(|item| skip_item(item, errors))
        .collect();
    let ItemMod {
        attrs,
        vis,
        unsafety,
        mod_token,
        ident,
        ..
    } = module;
    // syn keeps the module's inner attributes (`//!` docs) with its outer ones; each goes
    // back where it was written.
    let (inner, outer): (Vec<_>, Vec<_>) = attrs
        .into_iter()
        .partition(|attr| matches!(attr.style, syn::AttrStyle::Inner(_)));
    quote! {
        #(#outer)* #vis #unsafety #mod_token #ident {
            #(#inner)*
            #(#items)*
        }
    }
}

/// A kind's spec struct expanded without its registration; inline modules skipped too.
fn skip_item(item: Item, errors: &mut Errors) -> TokenStream {
    match item {
        Item::Struct(mut spec) => {
            let Some(at) = spec.attrs.iter().position(resource::is_resource_attribute) else {
                return spec.into_token_stream();
            };
            let attr = spec.attrs.remove(at);
            let args = match attr.meta {
                syn::Meta::List(list) => list.tokens,
                _ => TokenStream::new(),
            };
            resource::expand_registered(args, spec.into_token_stream(), false)
        }
        Item::Mod(module) => skip_module(module, errors),
        other => other.into_token_stream(),
    }
}
