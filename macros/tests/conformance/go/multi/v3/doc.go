// Package v3 is one version of the multi-version Gizmo kind (Rust twin: fixtures/multi.rs).
//
// +groupName=multi.conformance.kubebuilder.io
package v3
