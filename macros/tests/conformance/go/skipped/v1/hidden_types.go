package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HiddenSpec would be the desired state of a Hidden.
type HiddenSpec struct {
	Size string `json:"size"`
}

// Hidden is declared, but its package is skipped.
//
// +kubebuilder:object:root=true
type Hidden struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec HiddenSpec `json:"spec"`
}
