//! Pieces of generated code that several attributes emit.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

/// `Option<T>` as an expression of the generated code: `Some(value)` or `None`.
pub fn optional<T: ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}
