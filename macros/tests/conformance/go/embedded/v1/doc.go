// Package v1 embeds every Kubernetes type the `kubebuilder` crate knows (Rust twin:
// fixtures/embedded.rs). The fields have no doc, so each schema keeps its type's
// description: this fixture is compared with descriptions, which checks the table in
// kubebuilder/src/schema/k8s_schemas.json against controller-gen.
//
// +groupName=embedded.conformance.kubebuilder.io
package v1
