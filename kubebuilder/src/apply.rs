//! Apply configurations: what a server-side apply of a value sends. controller-gen's
//! `applyconfiguration` generator (`+kubebuilder:ac:generate`) writes, for each API type,
//! a twin whose every field is optional with a `With<Field>` builder; in Rust,
//! `apply_configuration` in `#[kubebuilder::schema(...)]` generates `<Type>ApplyConfiguration`
//! the same way (on a kind's spec, `<Kind>ApplyConfiguration` too). A field manager sends only the fields it sets, so
//! it owns only those (kubebuilder-runtime's `Applier::apply` takes one).
//!
//! [`Configure`] says which type a value of each type is applied as: the twin for a struct
//! with `apply_configuration`; the value itself, whole, for any other API type, for
//! primitives and for the Kubernetes types (k8s-openapi's optional fields already skip when
//! unset); lists, maps and options of what their items are applied as.

use std::collections::{BTreeMap, HashMap};

use kube_core::Resource;

/// The type a value of `Self` is applied as.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no apply configuration",
    label = "an apply configuration's field of this type",
    note = "an apply configuration's fields are of API types (`#[kubebuilder::schema]`), Kubernetes types, primitives, and lists, maps and options of them"
)]
pub trait Configure {
    /// The apply configuration of `Self`.
    type Configuration: serde::Serialize + Clone + std::fmt::Debug + PartialEq;
}

/// The apply configuration of `T`.
pub type Of<T> = <T as Configure>::Configuration;

/// The apply configuration of a kind (`<Kind>ApplyConfiguration`): its `apiVersion`,
/// `kind` and metadata, and what a field manager sets of its spec and status.
pub trait ApplyConfiguration: serde::Serialize {
    /// The kind it applies.
    type Kind: Resource;
}

/// Types applied as themselves.
macro_rules! applied_as_themselves {
    ($($ty:ty),* $(,)?) => {
        $(impl $crate::apply::Configure for $ty {
            type Configuration = $ty;
        })*
    };
}
pub(crate) use applied_as_themselves;

applied_as_themselves!(serde_json::Value);

impl<T: Configure> Configure for Option<T> {
    type Configuration = Of<T>;
}

impl<T: Configure> Configure for Box<T> {
    type Configuration = Box<Of<T>>;
}

impl<T: Configure> Configure for Vec<T> {
    type Configuration = Vec<Of<T>>;
}

impl<T: Configure, const N: usize> Configure for [T; N]
where
    [Of<T>; N]: serde::Serialize,
{
    type Configuration = [Of<T>; N];
}

impl<V: Configure> Configure for BTreeMap<String, V> {
    type Configuration = BTreeMap<String, Of<V>>;
}

impl<V: Configure, S> Configure for HashMap<String, V, S> {
    type Configuration = BTreeMap<String, Of<V>>;
}
