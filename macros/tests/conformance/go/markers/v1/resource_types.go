package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// replicas is the desired number of widgets.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// color selects the widgets by field selector.
	// +kubebuilder:validation:MaxLength=20
	Color string `json:"color"`

	// enabled is a selectable boolean.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// WidgetStatus is the observed state of a Widget.
type WidgetStatus struct {
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// +optional
	Selector string `json:"selector,omitempty"`

	// +optional
	Phase string `json:"phase,omitempty"`
}

// Widget carries every resource-level marker.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=widgetz,singular=widgette,shortName=wd;wdg,categories=all;fixtures,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=".spec.replicas",description="Desired widgets",format=int32,priority=0
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
// +kubebuilder:metadata:annotations="example.com/owner=team-a";"example.com/tier=gold",labels="example.com/fixture=widget"
// +kubebuilder:selectablefield:JSONPath=".spec.color"
// +kubebuilder:selectablefield:JSONPath=".spec.enabled"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="name must be at most 40 characters"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.replicas) || self.spec.replicas <= 5 || self.spec.color == 'red'",messageExpression="'only red widgets scale past 5, not ' + self.spec.color"
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The markers of the spec and status fields describe those properties of the root.
	// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas >= 0",message="replicas must not be negative"
	Spec WidgetSpec `json:"spec"`

	// +kubebuilder:default={phase: "Pending"}
	// +optional
	Status WidgetStatus `json:"status,omitempty"`
}

// PolicySpec is the desired state of a Policy.
type PolicySpec struct {
	// +optional
	Rules []string `json:"rules,omitempty"`
}

// Policy is cluster scoped, has an irregular plural and a printer column without a
// status subresource (controller-gen then writes an empty `subresources`).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Rules",type=string,JSONPath=".spec.rules"
type Policy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PolicySpec `json:"spec"`
}

// UniqueSpec has the one marker the apiserver refuses in a structural schema.
type UniqueSpec struct {
	// +kubebuilder:validation:UniqueItems=true
	// +optional
	Values []string `json:"values,omitempty"`
}

// Unique is generated alike but refused by the apiserver (uniqueItems: true).
//
// +kubebuilder:object:root=true
type Unique struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec UniqueSpec `json:"spec"`
}
