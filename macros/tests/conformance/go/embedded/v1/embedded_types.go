package v1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// EmbeddedSpec holds one field per Kubernetes type.
type EmbeddedSpec struct {
	// +optional
	JobSpec *batchv1.JobSpec `json:"jobSpec,omitempty"`
	// +optional
	JobTemplateSpec *batchv1.JobTemplateSpec `json:"jobTemplateSpec,omitempty"`
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// +optional
	ConfigMapKeySelector *corev1.ConfigMapKeySelector `json:"configMapKeySelector,omitempty"`
	// +optional
	Container *corev1.Container `json:"container,omitempty"`
	// +optional
	ContainerPort *corev1.ContainerPort `json:"containerPort,omitempty"`
	// +optional
	EnvFromSource *corev1.EnvFromSource `json:"envFromSource,omitempty"`
	// +optional
	EnvVar *corev1.EnvVar `json:"envVar,omitempty"`
	// +optional
	LocalObjectReference *corev1.LocalObjectReference `json:"localObjectReference,omitempty"`
	// +optional
	ObjectReference *corev1.ObjectReference `json:"objectReference,omitempty"`
	// +optional
	PersistentVolumeClaimSpec *corev1.PersistentVolumeClaimSpec `json:"persistentVolumeClaimSpec,omitempty"`
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	// +optional
	PodSpec *corev1.PodSpec `json:"podSpec,omitempty"`
	// +optional
	PodTemplateSpec *corev1.PodTemplateSpec `json:"podTemplateSpec,omitempty"`
	// +optional
	Probe *corev1.Probe `json:"probe,omitempty"`
	// +optional
	ResourceRequirements *corev1.ResourceRequirements `json:"resourceRequirements,omitempty"`
	// +optional
	SecretKeySelector *corev1.SecretKeySelector `json:"secretKeySelector,omitempty"`
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	// +optional
	ServicePort *corev1.ServicePort `json:"servicePort,omitempty"`
	// +optional
	Taint *corev1.Taint `json:"taint,omitempty"`
	// +optional
	Toleration *corev1.Toleration `json:"toleration,omitempty"`
	// +optional
	TypedLocalObjectReference *corev1.TypedLocalObjectReference `json:"typedLocalObjectReference,omitempty"`
	// +optional
	Volume *corev1.Volume `json:"volume,omitempty"`
	// +optional
	VolumeMount *corev1.VolumeMount `json:"volumeMount,omitempty"`
	// +optional
	JSON *apiextensionsv1.JSON `json:"json,omitempty"`
	// +optional
	Quantity *resource.Quantity `json:"quantity,omitempty"`
	// +optional
	Condition *metav1.Condition `json:"condition,omitempty"`
	// +optional
	FieldsV1 *metav1.FieldsV1 `json:"fieldsV1,omitempty"`
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// +optional
	MicroTime *metav1.MicroTime `json:"microTime,omitempty"`
	// +optional
	ObjectMeta *metav1.ObjectMeta `json:"objectMeta,omitempty"`
	// +optional
	OwnerReference *metav1.OwnerReference `json:"ownerReference,omitempty"`
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
	// +optional
	RawExtension *runtime.RawExtension `json:"rawExtension,omitempty"`
	// +optional
	IntOrString *intstr.IntOrString `json:"intOrString,omitempty"`
}

// Embedded is the kind holding the embedded types.
//
// +kubebuilder:object:root=true
type Embedded struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec EmbeddedSpec `json:"spec"`
}
