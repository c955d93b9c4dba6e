//! Attribute macros of kubebuilder for Rust. Use them through the `kubebuilder` crate.
