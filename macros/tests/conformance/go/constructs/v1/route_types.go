package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RouteSpec holds the Go form of each kind of Rust enum with data.
type RouteSpec struct {
	// source is externally tagged: one key, the variant's name.
	Source Source `json:"source"`

	// action is internally tagged: the variant's name in `type`, its fields beside it.
	// +optional
	Action *Action `json:"action,omitempty"`

	// port is untagged: an integer or a string.
	// +optional
	Port *intstr.IntOrString `json:"port,omitempty"`

	// endpoint is untagged: the variant whose fields are set.
	// +optional
	Endpoint *Endpoint `json:"endpoint,omitempty"`
}

// Source is where the route's content comes from.
//
// +kubebuilder:validation:ExactlyOneOf=Git;Image
type Source struct {
	// Git is a repository.
	// +optional
	Git *GitSource `json:"Git,omitempty"`

	// Image is a container image.
	// +optional
	Image *ImageSource `json:"Image,omitempty"`
}

// GitSource is a repository.
type GitSource struct {
	URL string `json:"url"`
	// +optional
	Branch string `json:"branch,omitempty"`
}

// ImageSource is the Image variant's fields.
type ImageSource struct {
	Name string `json:"name"`
	// +optional
	Tag string `json:"tag,omitempty"`
}

// Action is what the route does.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'Redirect' || has(self.url)",message="type Redirect requires: url"
// +kubebuilder:validation:XValidation:rule="self.type != 'Forward' || has(self.service)",message="type Forward requires: service"
type Action struct {
	// +kubebuilder:validation:Enum=Redirect;Drop;Forward
	Type string `json:"type"`

	// url is where to redirect to.
	// +optional
	URL string `json:"url,omitempty"`

	// +optional
	Code *int32 `json:"code,omitempty"`

	// service is the target Service.
	// +optional
	Service string `json:"service,omitempty"`

	// +optional
	Port *int32 `json:"port,omitempty"`
}

// Endpoint is a host name with a port, or an address.
//
// +kubebuilder:validation:XValidation:rule="has(self.host) || has(self.ip)",message="must set the fields of one of: Host (host), Address (ip)"
type Endpoint struct {
	// +optional
	Host string `json:"host,omitempty"`

	// +optional
	Port *int32 `json:"port,omitempty"`

	// +optional
	IP string `json:"ip,omitempty"`
}

// Route routes with the unions that Rust enums with data are.
//
// +kubebuilder:object:root=true
type Route struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RouteSpec `json:"spec"`
}
