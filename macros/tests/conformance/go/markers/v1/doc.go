// Package v1 holds one kind per group of markers (Rust twin: fixtures/markers.rs).
//
// +groupName=markers.conformance.kubebuilder.io
package v1
