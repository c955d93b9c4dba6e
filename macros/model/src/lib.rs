//! What the attributes of kubebuilder for Rust declare, as values, defined once.
//!
//! The attribute macros validate an attribute into one of these values and emit it as a
//! constant; the source reader of `cargo xtask manifests` builds the same value from the
//! parsed source; the `kubebuilder` crate re-exports the types and renders them. Strings are
//! [`Text`]: borrowed in the constants the macros emit, owned where the reader builds them.

#![warn(missing_docs)]

use std::borrow::Cow;

pub mod crd;
pub mod rbac;
pub mod schema;
pub mod webhook;

/// A string of the model: `&'static str` in generated constants, `String` when read.
pub type Text = Cow<'static, str>;

/// A list of strings of the model.
pub type Texts = Cow<'static, [Text]>;

/// Owned [`Texts`] from strings.
pub fn texts<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Texts {
    Cow::Owned(
        values
            .into_iter()
            .map(|value| Cow::Owned(value.into()))
            .collect(),
    )
}

/// The string of a [`Text`], in constant evaluation too (the generated checks read
/// declarations at compile time).
pub const fn as_str(text: &Text) -> &str {
    match text {
        Cow::Borrowed(text) => text,
        Cow::Owned(text) => text.as_str(),
    }
}

/// The items of a model list, in constant evaluation too (the generated checks read marker
/// values at compile time, where `Deref` cannot be called).
#[expect(
    clippy::ptr_arg,
    reason = "a `&[T]` would need the `Deref` constants cannot call"
)]
pub const fn as_slice<'a, T: Clone>(list: &'a Cow<'static, [T]>) -> &'a [T] {
    match list {
        Cow::Borrowed(items) => items,
        Cow::Owned(items) => items.as_slice(),
    }
}
