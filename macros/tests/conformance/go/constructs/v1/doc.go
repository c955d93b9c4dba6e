// Package v1 holds the constructs beyond one marker each: fixed-size arrays, byte strings,
// types that marshal themselves, kinds with an optional spec or none, and the unions that
// Rust enums with data are (Rust twin: fixtures/constructs.rs).
//
// +groupName=constructs.conformance.kubebuilder.io
package v1
