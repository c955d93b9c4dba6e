package v1

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ShapedSpec has fixed-size arrays, byte strings anywhere and types with their own JSON.
type ShapedSpec struct {
	// +optional
	Triple [3]int32 `json:"triple,omitempty"`

	// +kubebuilder:validation:items:MaxLength=5
	// +optional
	Pair [2]string `json:"pair,omitempty"`

	// +optional
	Digest [4]byte `json:"digest,omitempty"`

	// +optional
	Data map[string][]byte `json:"data,omitempty"`

	// +optional
	Chunks [][]byte `json:"chunks,omitempty"`

	// The Rust twin's `payload` field, of a named byte string (`type Payload []byte`), is
	// left out: controller-gen v0.23.0 refuses it (DIFFERENCES.md D5).

	// +kubebuilder:validation:MaxLength=100
	// +optional
	Raw []byte `json:"raw,omitempty"`

	// every is how often; a string.
	// +optional
	Every *Interval `json:"every,omitempty"`

	// +optional
	Extra *Opaque `json:"extra,omitempty"`
}

// Interval marshals itself as a Go duration string; its schema comes from its markers.
//
// +kubebuilder:validation:Type=string
// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
type Interval struct {
	d time.Duration
}

// MarshalJSON writes the duration as a string.
func (i Interval) MarshalJSON() ([]byte, error) { return json.Marshal(i.d.String()) }

// Opaque marshals itself as any JSON object.
//
// +kubebuilder:validation:Type=object
// +kubebuilder:pruning:PreserveUnknownFields
type Opaque struct {
	fields map[string]any
}

// MarshalJSON writes the fields as they are.
func (o Opaque) MarshalJSON() ([]byte, error) { return json.Marshal(o.fields) }

// Shaped carries fixed-size arrays, byte strings and self-marshalling types.
//
// +kubebuilder:object:root=true
type Shaped struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ShapedSpec `json:"spec"`
}
