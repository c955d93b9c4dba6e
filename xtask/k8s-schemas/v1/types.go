// Package v1 is the input of `cargo xtask k8s-schemas`: one optional field per Kubernetes
// type that Rust APIs may embed. controller-gen inlines each type's schema into the
// field; the generator copies every field's schema into
// kubebuilder/src/schema/k8s_schemas.json under the field's JSON name, which is the
// type's OpenAPI definition name (the name k8s-openapi's schemars impls report).
// The fields carry no doc comment, so each schema keeps the type's own description.
//
// +groupName=k8s-schemas.kubebuilder.invalid
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

// +kubebuilder:object:root=true

// Embedded is the kind whose spec lists the types.
type Embedded struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec EmbeddedSpec `json:"spec,omitempty"`
}

type EmbeddedSpec struct {
	BatchJobTemplateSpec *batchv1.JobTemplateSpec `json:"io.k8s.api.batch.v1.JobTemplateSpec,omitempty"`
	BatchJobSpec         *batchv1.JobSpec         `json:"io.k8s.api.batch.v1.JobSpec,omitempty"`

	CoreAffinity                  *corev1.Affinity                  `json:"io.k8s.api.core.v1.Affinity,omitempty"`
	CoreConfigMapKeySelector      *corev1.ConfigMapKeySelector      `json:"io.k8s.api.core.v1.ConfigMapKeySelector,omitempty"`
	CoreContainer                 *corev1.Container                 `json:"io.k8s.api.core.v1.Container,omitempty"`
	CoreContainerPort             *corev1.ContainerPort             `json:"io.k8s.api.core.v1.ContainerPort,omitempty"`
	CoreEnvFromSource             *corev1.EnvFromSource             `json:"io.k8s.api.core.v1.EnvFromSource,omitempty"`
	CoreEnvVar                    *corev1.EnvVar                    `json:"io.k8s.api.core.v1.EnvVar,omitempty"`
	CoreLocalObjectReference      *corev1.LocalObjectReference      `json:"io.k8s.api.core.v1.LocalObjectReference,omitempty"`
	CoreObjectReference           *corev1.ObjectReference           `json:"io.k8s.api.core.v1.ObjectReference,omitempty"`
	CorePersistentVolumeClaimSpec *corev1.PersistentVolumeClaimSpec `json:"io.k8s.api.core.v1.PersistentVolumeClaimSpec,omitempty"`
	CorePodSecurityContext        *corev1.PodSecurityContext        `json:"io.k8s.api.core.v1.PodSecurityContext,omitempty"`
	CorePodSpec                   *corev1.PodSpec                   `json:"io.k8s.api.core.v1.PodSpec,omitempty"`
	CorePodTemplateSpec           *corev1.PodTemplateSpec           `json:"io.k8s.api.core.v1.PodTemplateSpec,omitempty"`
	CoreProbe                     *corev1.Probe                     `json:"io.k8s.api.core.v1.Probe,omitempty"`
	CoreResourceRequirements      *corev1.ResourceRequirements      `json:"io.k8s.api.core.v1.ResourceRequirements,omitempty"`
	CoreSecretKeySelector         *corev1.SecretKeySelector         `json:"io.k8s.api.core.v1.SecretKeySelector,omitempty"`
	CoreSecurityContext           *corev1.SecurityContext           `json:"io.k8s.api.core.v1.SecurityContext,omitempty"`
	CoreServicePort               *corev1.ServicePort               `json:"io.k8s.api.core.v1.ServicePort,omitempty"`
	CoreTaint                     *corev1.Taint                     `json:"io.k8s.api.core.v1.Taint,omitempty"`
	CoreToleration                *corev1.Toleration                `json:"io.k8s.api.core.v1.Toleration,omitempty"`
	CoreTypedLocalObjectReference *corev1.TypedLocalObjectReference `json:"io.k8s.api.core.v1.TypedLocalObjectReference,omitempty"`
	CoreVolume                    *corev1.Volume                    `json:"io.k8s.api.core.v1.Volume,omitempty"`
	CoreVolumeMount               *corev1.VolumeMount               `json:"io.k8s.api.core.v1.VolumeMount,omitempty"`

	MetaCondition      *metav1.Condition      `json:"io.k8s.apimachinery.pkg.apis.meta.v1.Condition,omitempty"`
	MetaFieldsV1       *metav1.FieldsV1       `json:"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1,omitempty"`
	MetaLabelSelector  *metav1.LabelSelector  `json:"io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector,omitempty"`
	MetaMicroTime      *metav1.MicroTime      `json:"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime,omitempty"`
	MetaObjectMeta     *metav1.ObjectMeta     `json:"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta,omitempty"`
	MetaOwnerReference *metav1.OwnerReference `json:"io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference,omitempty"`
	MetaTime           *metav1.Time           `json:"io.k8s.apimachinery.pkg.apis.meta.v1.Time,omitempty"`

	Quantity     *resource.Quantity    `json:"io.k8s.apimachinery.pkg.api.resource.Quantity,omitempty"`
	IntOrString  *intstr.IntOrString   `json:"io.k8s.apimachinery.pkg.util.intstr.IntOrString,omitempty"`
	RawExtension *runtime.RawExtension `json:"io.k8s.apimachinery.pkg.runtime.RawExtension,omitempty"`
	JSON         *apiextensionsv1.JSON `json:"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON,omitempty"`
}
