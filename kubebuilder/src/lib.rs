//! Kubernetes APIs declared as plain Rust types with kubebuilder-style attributes.
//!
//! The attribute macros (re-exported from `kubebuilder-macros`) generate code that returns
//! values: schemas, CRDs, RBAC rules and webhook declarations, registered at link time
//! with `inventory` so that `cargo xtask manifests` finds every declaration of the
//! workspace without a hand-kept list. This crate holds those value types and renders
//! them as controller-gen does.

#![warn(missing_docs)]

pub mod apply;
pub mod conversion;
pub mod crd;
pub mod declarations;
mod duration;
pub mod json_string;
pub mod rbac;
pub mod schema;
pub mod webhook;
pub mod yaml;

/// Items the generated code refers to; not a public API.
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use duration::{Duration, ParseDurationError};
pub use kubebuilder_macros::{rbac, resource, schema, skip, webhook, webhook_configuration};

/// Registers kinds built with kube-derive's `#[derive(CustomResource)]` (or any other
/// `kube::CustomResourceExt`) for `cargo xtask manifests`, which then writes their CRDs
/// beside ours (`config/crd/bases/<group>_<plural>.yaml`, with the per-kind roles). One line
/// per kind version, at item level, naming the root type the derive generates:
///
/// ```
/// use kube::CustomResource;
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// /// One of our API types: its CRD schema (markers included) embeds in kube-derive's CRD.
/// #[kubebuilder::schema]
/// pub struct Engine {
///     #[kubebuilder(validation(minimum = 1))]
///     pub power: i32,
/// }
///
/// #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
/// #[kube(group = "fleet.example.com", version = "v1", kind = "Boat", namespaced)]
/// pub struct BoatSpec {
///     pub engine: Engine,
/// }
///
/// kubebuilder::register_custom_resource!(Boat);
///
/// let crds = kubebuilder::crd::all(&Default::default()).unwrap();
/// assert_eq!(crds[0].metadata.name.as_deref(), Some("boats.fleet.example.com"));
/// ```
///
/// Versions of one kind registered separately (one type each) merge into one CRD under our
/// rules: exactly one storage version (kube-derive stores every version unless
/// `#[kube(storage = false)]`), at least one served, the same names, scope and CRD metadata.
/// A kind is declared one way: registering a `#[kubebuilder::resource]` kind (which
/// registers itself) or mixing both for one kind fails `cargo xtask manifests` naming the
/// versions. See docs/kube-rs.md.
#[macro_export]
macro_rules! register_custom_resource {
    ($($kind:ty),+ $(,)?) => {
        $(
            $crate::__private::inventory::submit! {
                $crate::crd::External::of::<$kind>(::core::stringify!($kind))
            }
        )+
    };
    ($($other:tt)*) => {
        ::core::compile_error!(
            "`register_custom_resource!` takes the root types `#[derive(CustomResource)]` \
             generates, separated by commas: `register_custom_resource!(Boat);` or \
             `register_custom_resource!(v1::Boat, v2::Boat);`"
        );
    };
}
