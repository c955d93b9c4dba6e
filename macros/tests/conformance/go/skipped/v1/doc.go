// Package v1 is skipped: controller-gen generates no CRD for it (Rust twin: the
// `#[kubebuilder::skip]` module of fixtures/constructs.rs).
//
// +groupName=skipped.conformance.kubebuilder.io
// +kubebuilder:skip
package v1
