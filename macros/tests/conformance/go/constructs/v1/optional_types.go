package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LeanSpec has only optional fields.
type LeanSpec struct {
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
}

// Lean's spec may be left out.
//
// +kubebuilder:object:root=true
type Lean struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec LeanSpec `json:"spec,omitempty"`
}

// Settings has no spec: its data sits at the top level, as a ConfigMap's does.
//
// +kubebuilder:object:root=true
type Settings struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// data holds the settings.
	// +optional
	Data map[string]string `json:"data,omitempty"`

	// immutable forbids changing data.
	// +optional
	Immutable *bool `json:"immutable,omitempty"`

	// +kubebuilder:validation:Minimum=1
	Revision int32 `json:"revision"`
}
