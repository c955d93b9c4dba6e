package v3

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GizmoSpec is the desired state of a Gizmo (a version kept out of the CRD).
type GizmoSpec struct {
	Size string `json:"size"`
}

// Gizmo v3 is skipped: it is not part of the CRD.
//
// +kubebuilder:object:root=true
// +kubebuilder:skipversion
type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GizmoSpec `json:"spec"`
}
