//! Kubernetes APIs declared as plain Rust types with kubebuilder-style attributes.
//!
//! The attribute macros (re-exported from `kubebuilder-macros`) generate code that returns
//! values: schemas, CRDs, RBAC rules and webhook declarations, registered at link time
//! with `inventory` so that `cargo xtask manifests` finds every declaration of the
//! workspace without a hand-kept list. This crate holds those value types and renders
//! them as controller-gen does.

#![warn(missing_docs)]

pub mod conversion;
pub mod crd;
pub mod rbac;
pub mod schema;
pub mod webhook;
pub mod yaml;

/// Items the generated code refers to; not a public API.
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use kubebuilder_macros::{rbac, resource, schema, skip, webhook, webhook_configuration};
