package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Validated carries every field- and type-level schema marker.
//
// +kubebuilder:object:root=true
type Validated struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ValidatedSpec `json:"spec"`
}

// ValidatedSpec groups the markers by the kind of value they constrain.
type ValidatedSpec struct {
	Numbers     Numbers     `json:"numbers"`
	Strings     Strings     `json:"strings"`
	Lists       Lists       `json:"lists"`
	Maps        Maps        `json:"maps"`
	Defaults    Defaults    `json:"defaults"`
	Docs        Docs        `json:"docs"`
	Rules       Rules       `json:"rules"`
	Shapes      Shapes      `json:"shapes"`
	Named       Named       `json:"named"`
	Requirement Requirement `json:"requirement"`
}

// Numbers: numeric bounds and the Go number kinds.
type Numbers struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	Replicas int32 `json:"replicas"`

	// +kubebuilder:validation:Minimum=-5
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:validation:ExclusiveMaximum=true
	// +kubebuilder:validation:MultipleOf=5
	// +optional
	Step *int64 `json:"step,omitempty"`

	// +optional
	Count *uint32 `json:"count,omitempty"`

	// +optional
	Total *uint64 `json:"total,omitempty"`

	// +kubebuilder:validation:Minimum=0.5
	// +kubebuilder:validation:Maximum=1.5
	// +kubebuilder:validation:MultipleOf=0.25
	// +optional
	Ratio *float64 `json:"ratio,omitempty"`

	// +optional
	Scale *float32 `json:"scale,omitempty"`

	// +kubebuilder:validation:Enum={1,2,3}
	// +optional
	Level *int32 `json:"level,omitempty"`
	// +optional
	Fraction *Fraction `json:"fraction,omitempty"`
}

// Fraction is a named float with a bound (floats are allowed on the type in Rust).
//
// +kubebuilder:validation:Minimum=0
type Fraction float64

// Strings: string bounds, formats and enums.
type Strings struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]*$`
	Name string `json:"name"`

	// +kubebuilder:validation:Format=hostname
	// +optional
	Host string `json:"host,omitempty"`

	// +kubebuilder:validation:Enum=fast;slow;"very slow"
	// +optional
	Speed string `json:"speed,omitempty"`

	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +optional
	Timeout string `json:"timeout,omitempty"`

	// +optional
	Payload []byte `json:"payload,omitempty"`

	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// Lists: array bounds, the items: variants and list types.
type Lists struct {
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5
	// +kubebuilder:validation:items:MinLength=2
	// +kubebuilder:validation:items:MaxLength=8
	// +kubebuilder:validation:items:Pattern=`^[a-z]+$`
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`

	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=65535
	// +kubebuilder:validation:items:ExclusiveMinimum=true
	// +kubebuilder:validation:items:ExclusiveMaximum=true
	// +kubebuilder:validation:items:MultipleOf=2
	// +listType=atomic
	// +optional
	Ports []int32 `json:"ports,omitempty"`

	// +kubebuilder:validation:items:Enum=a;b;c
	// +kubebuilder:validation:items:Format=byte
	// +optional
	Letters []string `json:"letters,omitempty"`

	// +kubebuilder:validation:items:MinItems=1
	// +kubebuilder:validation:items:MaxItems=3
	// +optional
	Matrix [][]int32 `json:"matrix,omitempty"`

	// +kubebuilder:validation:items:MinProperties=1
	// +kubebuilder:validation:items:MaxProperties=2
	// +optional
	LabelSets []map[string]string `json:"labelSets,omitempty"`

	// +kubebuilder:validation:items:Type=string
	// +kubebuilder:validation:items:Format=date
	// +optional
	Dates []string `json:"dates,omitempty"`

	// +kubebuilder:validation:items:XIntOrString
	// +kubebuilder:validation:items:MaxLength=5
	// +optional
	Amounts []intstr.IntOrString `json:"amounts,omitempty"`

	// +kubebuilder:validation:items:XPreserveUnknownFields
	// +kubebuilder:validation:items:XEmbeddedResource
	// +optional
	Objects []runtime.RawExtension `json:"objects,omitempty"`

	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:XValidation:rule="self.name != 'forbidden'",message="forbidden name"
	// +listType=map
	// +listMapKey=name
	// +listMapKey=port
	// +optional
	Endpoints []Endpoint `json:"endpoints,omitempty"`

	// The declarative validation spellings (controller-gen v0.22 and later); a key named by
	// both spellings is listed once.
	// +k8s:listType=map
	// +k8s:listMapKey=name
	// +listMapKey=name
	// +k8s:maxItems=8 # at most eight
	// +optional
	Declared []Endpoint `json:"declared,omitempty"`

	// +k8s:listType=set
	// +optional
	DeclaredSet []string `json:"declaredSet,omitempty"`
}

// Endpoint is an item of an associative list: its keys are required or defaulted.
type Endpoint struct {
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// +kubebuilder:default=80
	// +optional
	Port int32 `json:"port,omitempty"`
}

// Maps: object bounds and map and struct types.
type Maps struct {
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=3
	// +mapType=atomic
	// +optional
	Selector map[string]string `json:"selector,omitempty"`

	// +mapType=granular
	// +optional
	Weights map[string]int32 `json:"weights,omitempty"`

	// +optional
	Nested map[string][]Endpoint `json:"nested,omitempty"`

	// +structType=atomic
	// +optional
	Primary *Endpoint `json:"primary,omitempty"`

	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Open *Bag `json:"open,omitempty"`

	// +kubebuilder:validation:XPreserveUnknownFields
	// +optional
	OpenToo *Bag `json:"openToo,omitempty"`

	// +kubebuilder:validation:EmbeddedResource
	// +optional
	Object *runtime.RawExtension `json:"object,omitempty"`

	// +kubebuilder:validation:XEmbeddedResource
	// +optional
	ObjectToo *runtime.RawExtension `json:"objectToo,omitempty"`

	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Anything *Bag `json:"anything,omitempty"`

	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^\d+%?$`
	// +kubebuilder:validation:MaxLength=4
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// Bag is a small struct used under the pruning markers.
type Bag struct {
	// +optional
	Kind string `json:"kind,omitempty"`
}

// Defaults: every literal kind of default.
type Defaults struct {
	// +kubebuilder:default=3
	// +optional
	Retries *int32 `json:"retries,omitempty"`

	// +kubebuilder:default=standard
	// +optional
	Tier string `json:"tier,omitempty"`

	// +kubebuilder:default="two words"
	// +optional
	Mode string `json:"mode,omitempty"`

	// +kubebuilder:default=true
	// +optional
	Debug *bool `json:"debug,omitempty"`

	// +kubebuilder:default=1.25
	// +optional
	Ratio *float64 `json:"ratio,omitempty"`

	// +kubebuilder:default={alpha,beta}
	// +optional
	Stages []string `json:"stages,omitempty"`

	// +kubebuilder:default={}
	// +optional
	Extras []string `json:"extras,omitempty"`

	// +kubebuilder:default={team: core, env: dev}
	// +optional
	Owners map[string]string `json:"owners,omitempty"`

	// +kubebuilder:default={}
	// +optional
	Window *Window `json:"window,omitempty"`

	// +default={"name": "main", "port": 8080}
	// +optional
	Fallback *Endpoint `json:"fallback,omitempty"`
}

// Window is a struct with only optional fields, so `{}` is a valid default.
//
// +kubebuilder:title="A time window"
// +kubebuilder:externalDocs:url="https://example.com/windows",description="Windows explained"
type Window struct {
	// +optional
	Start string `json:"start,omitempty"`

	// +optional
	End string `json:"end,omitempty"`
}

// Docs: example, title, externalDocs and nullable.
type Docs struct {
	// +kubebuilder:example="9am"
	// +kubebuilder:title="Start time"
	// +kubebuilder:externalDocs:url="https://example.com/docs/start",description="Schedule syntax"
	// +optional
	Start string `json:"start,omitempty"`

	// +kubebuilder:example=42
	// +optional
	Answer *int32 `json:"answer,omitempty"`

	// +kubebuilder:example={a: b}
	// +optional
	Sample map[string]string `json:"sample,omitempty"`

	// +kubebuilder:example={x,y}
	// +optional
	Items []string `json:"items,omitempty"`

	// +nullable
	// +optional
	Note *string `json:"note,omitempty"`

	// +nullable
	// +optional
	Span *Window `json:"span,omitempty"`

	// +optional
	Plain *Window `json:"plain,omitempty"`
}

// Rules: CEL rules on fields and types, the OneOf family and immutable fields.
type Rules struct {
	// +kubebuilder:validation:XValidation:rule="!oldSelf.hasValue() || self.name == oldSelf.value().name",message="name is immutable",reason=FieldValueForbidden,fieldPath=".name",optionalOldSelf=true
	// +kubebuilder:validation:XValidation:rule="self.port > 0",messageExpression="self.name + ' needs a positive port'",reason=FieldValueInvalid
	// +optional
	Target *Guarded `json:"target,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self.size() <= 10",message="too long",reason=FieldValueDuplicate
	// +kubebuilder:validation:XValidation:rule="self != 'x'",reason=FieldValueRequired
	// +optional
	Word string `json:"word,omitempty"`

	// +optional
	Choice *Choice `json:"choice,omitempty"`

	// key cannot change once set.
	// +k8s:immutable
	Key string `json:"key"`

	// lock cannot change once set, nor be removed.
	// +k8s:immutable
	// +optional
	Lock *string `json:"lock,omitempty"`
}

// Guarded has its own rule, which comes after the field's rules.
//
// +kubebuilder:validation:XValidation:rule="self.name.size() > 0",message="name must not be empty"
type Guarded struct {
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	Port int32 `json:"port"`
}

// Choice has the OneOf family (and a plain rule, which comes first).
//
// +kubebuilder:validation:AtMostOneOf=a;b
// +kubebuilder:validation:ExactlyOneOf=c;d
// +kubebuilder:validation:AtLeastOneOf=e;f
// +kubebuilder:validation:XValidation:rule="!has(self.a) || self.a != 'x'",message="a must not be x"
type Choice struct {
	// +kubebuilder:validation:MaxLength=10
	// +optional
	A *string `json:"a,omitempty"`
	// +optional
	B *string `json:"b,omitempty"`
	// +optional
	C *string `json:"c,omitempty"`
	// +optional
	D *string `json:"d,omitempty"`
	// +optional
	E *string `json:"e,omitempty"`
	// +optional
	F *string `json:"f,omitempty"`
}

// Shapes: enums from types.
type Shapes struct {
	// +optional
	Color Color `json:"color,omitempty"`

	// +optional
	Shape Shape `json:"shape,omitempty"`

	// +optional
	Colors []Color `json:"colors,omitempty"`
}

// Color is an enum listed by a marker, in marker order.
//
// +kubebuilder:validation:Enum=Red;Green;Blue
type Color string

const (
	Red   Color = "Red"
	Green Color = "Green"
	Blue  Color = "Blue"
)

// Shape is an enum taken from its constants, sorted.
//
// +k8s:enum
type Shape string

const (
	Circle Shape = "Circle"
	Square Shape = "Square"
)

// Named: type-level markers on named non-struct types, and field markers over them.
type Named struct {
	// +optional
	Port *Port `json:"port,omitempty"`

	// +kubebuilder:validation:Maximum=8080
	// +optional
	LowPort *Port `json:"lowPort,omitempty"`

	// +optional
	Short ShortString `json:"short,omitempty"`

	// +optional
	Names NameList `json:"names,omitempty"`

	// +optional
	Flags Flags `json:"flags,omitempty"`

	// +optional
	Frozen *Frozen `json:"frozen,omitempty"`

	// +optional
	Opaque *Opaque `json:"opaque,omitempty"`

	// A field's list type replaces its named list's (controller-gen v0.22 and later).
	// +listType=atomic
	// +optional
	AtomicNames NameList `json:"atomicNames,omitempty"`

	// A field's map type replaces its named map's.
	// +mapType=granular
	// +optional
	GranularFlags Flags `json:"granularFlags,omitempty"`
}

// Port is a named integer with bounds.
//
// +kubebuilder:validation:Minimum=1
// +kubebuilder:validation:Maximum=65535
type Port int32

// ShortString is a named string with a length bound.
//
// +kubebuilder:validation:MaxLength=20
type ShortString string

// NameList is a named list with bounds on it and its items.
//
// +kubebuilder:validation:MinItems=1
// +kubebuilder:validation:items:MaxLength=10
// +listType=set
type NameList []string

// Flags is a named map, replaced as a whole.
//
// +mapType=atomic
type Flags map[string]bool

// Frozen is a struct replaced as a whole.
//
// +structType=atomic
type Frozen struct {
	// +optional
	Value string `json:"value,omitempty"`
}

// Opaque keeps unknown fields.
//
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:MinProperties=1
type Opaque struct {
	// +optional
	Known string `json:"known,omitempty"`
}

// Requirement: controller-gen's precedence between the required and optional markers.
type Requirement struct {
	// +kubebuilder:validation:Optional
	// +required
	ValidationOptionalBeatsRequired string `json:"validationOptionalBeatsRequired"`

	// +kubebuilder:validation:Required
	// +optional
	ValidationRequiredBeatsOptional *string `json:"validationRequiredBeatsOptional,omitempty"`

	// +optional
	Optional string `json:"optional"`

	// +required
	Required *string `json:"required,omitempty"`

	// +k8s:optional
	K8sOptional string `json:"k8sOptional"`

	// +k8s:required
	K8sRequired *string `json:"k8sRequired,omitempty"`

	// +k8s:required
	K8sRequiredList []string `json:"k8sRequiredList"`

	// +k8s:required
	K8sRequiredMap map[string]string `json:"k8sRequiredMap"`

	// +k8s:required
	K8sRequiredStruct Endpoint `json:"k8sRequiredStruct"`

	// +k8s:required
	K8sRequiredNamedString ShortString `json:"k8sRequiredNamedString"`

	// +k8s:required
	K8sRequiredNamedMap Flags `json:"k8sRequiredNamedMap"`

	// The same bound as the type's, written once (controller-gen v0.22 and later).
	// +k8s:required
	K8sRequiredOpaque Opaque `json:"k8sRequiredOpaque"`

	// +k8s:required
	// +kubebuilder:validation:MinLength=3
	K8sRequiredMinLength string `json:"k8sRequiredMinLength"`

	// +k8s:required
	// +k8s:minimum=1
	// +k8s:maximum=10
	K8sRequiredNumber int32 `json:"k8sRequiredNumber"`

	Plain string `json:"plain"`

	// +optional
	Pointer *string `json:"pointer,omitempty"`
}
