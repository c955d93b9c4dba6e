package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GizmoSpec is the desired state of a Gizmo (storage version).
type GizmoSpec struct {
	// +kubebuilder:validation:MinLength=1
	Size string `json:"size"`
}

// GizmoStatus is the observed state of a Gizmo.
type GizmoStatus struct {
	// +optional
	Ready bool `json:"ready,omitempty"`
}

// Gizmo is the storage version; the CRD-wide markers live here.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=gz,categories=fixtures
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Size",type=string,JSONPath=".spec.size"
type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GizmoSpec `json:"spec"`

	// +optional
	Status GizmoStatus `json:"status,omitempty"`
}
