//! The attributes of kubebuilder for Rust as a library: each parsed, validated (every
//! mistake a spanned error, all reported at once) and generated. `kubebuilder-macros` is its
//! thin proc-macro entry points; `cargo xtask manifests` (`kubebuilder-cli`) reads API
//! sources with the same parsers, as controller-gen reads Go markers. Not for other use: the
//! API follows what those two need.

#![warn(missing_docs)]

mod args;
mod definitions;
mod docs;
mod k8s_values;
mod markers;
pub mod rbac;
#[cfg(test)]
mod registry;
pub mod resource;
pub mod schema;
pub mod skip;
pub mod spellings;
mod tokens;
mod types;
pub mod webhook;

pub use args::Errors;
pub use markers::{Markers, Spanned};
