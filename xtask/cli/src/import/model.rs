//! What `goimport` prints: a Go kubebuilder project's packages as controller-tools reads
//! them (see `goimport/main.go`, whose types these mirror).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// Markers by name, each with the values it was written with (in order).
pub type Markers = BTreeMap<String, Vec<Value>>;

/// The whole output.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub packages: Vec<Package>,
    /// `+` lines no marker of controller-gen's generators recognises.
    pub unknown_markers: Vec<Unknown>,
    /// Other packages' named types that are not structs, by `<package>.<name>`.
    #[serde(default)]
    pub named: BTreeMap<String, NamedType>,
    /// What the model was read from (goimport's output does not say: Go).
    #[serde(skip)]
    pub origin: Origin,
}

/// What an import reads.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Origin {
    /// Go packages (`import go`).
    #[default]
    Go,
    /// CRD YAML (`import crd`).
    Crd,
}

/// A named type of another package (`corev1.ResourceName`): its doc and markers.
#[derive(Debug, Deserialize)]
pub struct NamedType {
    pub doc: String,
    pub markers: Markers,
}

/// One Go package.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// The import path.
    pub path: String,
    pub dir: String,
    /// Package-level markers (`+groupName`, `+kubebuilder:rbac`, `+kubebuilder:webhook`).
    pub markers: Markers,
    /// The same, by the file they are written in.
    pub file_markers: BTreeMap<String, Markers>,
    pub types: Vec<Type>,
    /// The constants of each of the package's named types, by type name.
    pub constants: BTreeMap<String, Vec<Constant>>,
}

/// A type declaration.
#[derive(Debug, Deserialize)]
pub struct Type {
    pub name: String,
    pub doc: String,
    /// `file:line`.
    pub position: String,
    pub markers: Markers,
    pub underlying: TypeExpr,
    /// An alias (`type GatewaySpec = v1.GatewaySpec`) of `underlying`.
    #[serde(default)]
    pub alias: bool,
    #[serde(default)]
    pub fields: Vec<Field>,
    /// The methods declared on the type or its pointer.
    pub methods: Vec<String>,
}

/// A struct field.
#[derive(Clone, Debug, Deserialize)]
pub struct Field {
    /// Empty for an embedded field.
    pub name: String,
    pub doc: String,
    pub position: String,
    /// The `json` tag (`name,omitempty`).
    pub json: String,
    pub markers: Markers,
    #[serde(rename = "type")]
    pub ty: TypeExpr,
}

/// A typed constant.
#[derive(Debug, Deserialize)]
pub struct Constant {
    /// Go's exact spelling of the value (`"Allow"`, `3`).
    pub value: String,
    pub doc: String,
}

/// A type as go/types resolves it, named types not expanded.
#[derive(Clone, Debug, Deserialize)]
pub struct TypeExpr {
    /// `basic`, `pointer`, `slice`, `array`, `map`, `named`, `struct`, `interface`, or
    /// `unsupported`.
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub package: String,
    #[serde(default)]
    pub len: i64,
    pub key: Option<Box<TypeExpr>>,
    pub elem: Option<Box<TypeExpr>>,
    /// A named type's underlying type, when that is not a struct.
    pub underlying: Option<Box<TypeExpr>>,
}

/// A `+` line no marker recognises.
#[derive(Debug, Deserialize)]
pub struct Unknown {
    pub position: String,
    pub text: String,
}

impl Field {
    /// The JSON name (the tag's first part), empty when the tag has none.
    pub fn json_name(&self) -> &str {
        self.json.split(',').next().unwrap_or_default()
    }

    /// Whether the tag has the option (`omitempty`, `inline`, `omitzero`, `string`).
    pub fn has_option(&self, option: &str) -> bool {
        self.json.split(',').skip(1).any(|o| o == option)
    }
}

impl TypeExpr {
    /// A struct literal's type.
    pub fn structure() -> Self {
        TypeExpr {
            kind: "struct".to_owned(),
            name: String::new(),
            package: String::new(),
            len: 0,
            key: None,
            elem: None,
            underlying: None,
        }
    }
}

impl Package {
    /// Whether it declares a kind controller-gen makes a CRD of: a struct embedding
    /// `metav1.TypeMeta` and `metav1.ObjectMeta` (its `FindKubeKinds`), or a root type
    /// declared as another package's kind (`type Gateway v1.Gateway`). Kueue's
    /// `apis/config` declares `+groupName` and a root type with no `ObjectMeta`: its
    /// component configuration, no CRD.
    pub fn declares_kinds(&self) -> bool {
        self.types.iter().any(|ty| {
            let embeds = |name: &str| {
                ty.fields
                    .iter()
                    .any(|f| f.name.is_empty() && f.ty.package == META && f.ty.name == name)
            };
            (embeds("TypeMeta") && embeds("ObjectMeta"))
                || (ty.is_root() && ty.underlying.kind == "named")
        })
    }
}

/// The package of `TypeMeta` and `ObjectMeta`.
pub const META: &str = "k8s.io/apimachinery/pkg/apis/meta/v1";

impl Type {
    /// Whether `+kubebuilder:object:root=true` marks it.
    pub fn is_root(&self) -> bool {
        self.markers
            .get("kubebuilder:object:root")
            .is_some_and(|values| values.iter().any(|v| v == &Value::Bool(true)))
    }
}
