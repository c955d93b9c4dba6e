package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GizmoSpec is the desired state of a Gizmo (deprecated version).
type GizmoSpec struct {
	Size string `json:"size"`

	// +optional
	Legacy *bool `json:"legacy,omitempty"`
}

// Gizmo v1beta1 is served with a deprecation warning.
//
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="multi.conformance.kubebuilder.io/v1beta1 Gizmo is deprecated; use v1"
// +kubebuilder:subresource:status
type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GizmoSpec `json:"spec"`

	// +optional
	Status GizmoStatus `json:"status,omitempty"`
}

// GizmoStatus is the observed state of a Gizmo.
type GizmoStatus struct {
	// +optional
	Ready bool `json:"ready,omitempty"`
}
