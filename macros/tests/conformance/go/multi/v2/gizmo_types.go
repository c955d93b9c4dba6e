package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GizmoSpec is the desired state of a Gizmo (newer, served but not stored).
type GizmoSpec struct {
	// +kubebuilder:validation:Minimum=1
	SizeMillimeters int64 `json:"sizeMillimeters"`
}

// Gizmo v2 replaces the size string by a number.
//
// +kubebuilder:object:root=true
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=".spec.sizeMillimeters"
type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GizmoSpec `json:"spec"`
}
