//! Attribute macros of kubebuilder for Rust. Use them through the `kubebuilder` crate.
//!
//! Each is an entry point into `kubebuilder-attributes`, which parses, validates and
//! generates (and which `cargo xtask manifests` shares to read API sources).

#![warn(missing_docs)]

use kubebuilder_attributes::{rbac, resource, schema, skip, webhook};
use proc_macro::TokenStream;

/// The root kind of a CRD version, on its spec struct: `+groupName`, the package version,
/// `+kubebuilder:resource`, `subresource`, `printcolumn`, `storageversion`, ... Generates
/// the root object, its list type, kube `Resource` impl, `crd()` and the link-time
/// registration of the version. See docs/markers.md.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(args.into(), item.into()).into()
}

/// `+kubebuilder:skip` on a version module written inline (`mod v1 { ... }`): its kinds are
/// generated but register no CRD version, so `cargo xtask manifests` writes none for them.
#[proc_macro_attribute]
pub fn skip(args: TokenStream, item: TokenStream) -> TokenStream {
    skip::expand(args.into(), item.into()).into()
}

/// An API type (struct, newtype or unit enum) with its type-level markers: adds the
/// derives, the `kubebuilder::schema::Schema` impl and a `schemars::JsonSchema` impl with the
/// same schema (for kube-derive CRDs embedding the type). Fields take `#[kubebuilder(...)]`.
#[proc_macro_attribute]
pub fn schema(args: TokenStream, item: TokenStream) -> TokenStream {
    schema::expand(args.into(), item.into()).into()
}

/// `+kubebuilder:rbac` on a reconciler type: one RBAC rule for `config/rbac/role.yaml`.
/// Repeatable. See the `kubebuilder::rbac` module.
#[proc_macro_attribute]
pub fn rbac(args: TokenStream, item: TokenStream) -> TokenStream {
    rbac::expand(args.into(), item.into()).into()
}

/// `+kubebuilder:webhook` on a defaulter or validator type: implements
/// `kubebuilder::webhook::Declared` and registers the webhook for `config/webhook/manifests.yaml`.
/// `for = Kind` takes the rule's group, version and resource and the default path from the
/// kind, and lets the type be registered with the webhook server for that kind only.
#[proc_macro_attribute]
pub fn webhook(args: TokenStream, item: TokenStream) -> TokenStream {
    webhook::expand(args.into(), item.into()).into()
}

/// `+kubebuilder:webhookconfiguration` on any item: names the Mutating- or
/// ValidatingWebhookConfiguration.
#[proc_macro_attribute]
pub fn webhook_configuration(args: TokenStream, item: TokenStream) -> TokenStream {
    webhook::expand_configuration(args.into(), item.into()).into()
}
