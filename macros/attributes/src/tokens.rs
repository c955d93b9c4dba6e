//! Pieces of generated code that several attributes emit.

use kubebuilder_model::Text;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

/// `Option<T>` as an expression of the generated code: `Some(value)` or `None`.
pub fn optional<T: ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// A model string as a constant of the generated code: `Cow::Borrowed("…")`.
pub fn text(value: &str) -> TokenStream {
    quote!(::std::borrow::Cow::Borrowed(#value))
}

/// Model strings as a constant of the generated code: `Cow::Borrowed(&[Cow::Borrowed("…"), …])`.
pub fn texts(values: &[Text]) -> TokenStream {
    let values = values.iter().map(|value| text(value));
    quote!(::std::borrow::Cow::Borrowed(&[#(#values),*]))
}

/// An optional model string as a constant of the generated code.
pub fn optional_text(value: Option<&Text>) -> TokenStream {
    optional(value.map(|value| text(value)))
}
