//! CRDs as the model `import go` reads from Go (`import/model.rs`): a package per group
//! version, the types and markers controller-gen would have read to write each version's
//! schema. A kind is its root type; each object schema with properties a struct named by
//! its path (`GatewaySpecListeners`), each item or map value with a description or
//! validations of its own a named type; every other schema keyword the marker that writes
//! it, on the field (or, for an item or map value, on its type).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::Document;
use crate::import::model::{Field, Markers, Model, Origin, Package, Type, TypeExpr};
use crate::import::rust::upper_camel;

/// The model of the CRDs, with what it leaves out.
pub struct Read {
    pub model: Model,
    /// The types declared, over all packages.
    pub types: usize,
    /// Schema keywords and CRD fields no marker writes, each with its place.
    pub left_out: Vec<String>,
}

/// Reads every version of every CRD; every problem at once, or the model.
pub fn read(documents: &[Document]) -> Result<Read> {
    let mut reader = Reader::default();
    let mut seen = BTreeSet::new();
    for document in documents {
        let name = document.crd["metadata"]["name"]
            .as_str()
            .unwrap_or_default();
        if !seen.insert(name.to_owned()) {
            reader.problems.push(format!(
                "{}: the CRD {name} is declared a second time",
                document.file.display()
            ));
            continue;
        }
        reader.crd(document);
    }
    if !reader.problems.is_empty() {
        bail!(
            "the CRDs cannot be imported as they are; nothing was written:\n{}",
            reader.problems.join("\n")
        );
    }
    let packages: Vec<Package> = reader.packages.into_values().collect();
    let types = packages.iter().map(|p| p.types.len()).sum();
    Ok(Read {
        model: Model {
            packages,
            unknown_markers: Vec::new(),
            named: BTreeMap::new(),
            origin: Origin::Crd,
        },
        types,
        left_out: reader.left_out,
    })
}

/// controller-gen's pattern for a `resource.Quantity`.
const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";
const META: &str = "k8s.io/apimachinery/pkg/apis/meta/v1";
/// The annotation controller-gen writes on every CRD (the manifests write it again).
const GENERATOR_ANNOTATION: &str = "controller-gen.kubebuilder.io/version";

#[derive(Default)]
struct Reader {
    /// By group and version.
    packages: BTreeMap<(String, String), Package>,
    /// The names the attributes generate (each kind's list type), by package.
    reserved: BTreeSet<((String, String), String)>,
    left_out: Vec<String>,
    problems: Vec<String>,
}

/// Where a schema is: its package (group and version), file and YAML path.
#[derive(Clone)]
struct Place {
    package: (String, String),
    file: String,
    path: String,
}

impl Place {
    fn position(&self) -> String {
        format!("{}:{}", self.file, self.path)
    }

    fn join(&self, segment: &str) -> Place {
        Place {
            path: format!("{}.{segment}", self.path),
            ..self.clone()
        }
    }

    fn package_path(&self) -> String {
        format!("crd/{}/{}", self.package.0, self.package.1)
    }
}

/// A schema as Go: its type, and the markers of the field (or named type) that holds it.
struct Shape {
    ty: TypeExpr,
    markers: Markers,
}

impl Reader {
    fn crd(&mut self, document: &Document) {
        let spec = &document.crd["spec"];
        let file = document.file.display().to_string();
        let group = spec["group"].as_str().unwrap_or_default().to_owned();
        let names = &spec["names"];
        let kind = names["kind"].as_str().unwrap_or_default().to_owned();
        if names["listKind"]
            .as_str()
            .is_some_and(|list| list != format!("{kind}List"))
        {
            self.problems.push(format!(
                "{file}: spec.names.listKind: {} is not {kind}List, the only list kind the \
                 attributes generate",
                names["listKind"]
            ));
        }
        if spec["conversion"]["strategy"] == "Webhook" {
            self.left_out.push(format!(
                "{file}: spec.conversion: a conversion webhook is the hub's `create webhook \
                 --conversion` (the Rust conversion is to write): left out"
            ));
        }
        let kind_markers = kind_markers(&document.crd, &kind);
        for (index, version) in spec["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let name = version["name"].as_str().unwrap_or_default().to_owned();
            let place = Place {
                package: (group.clone(), name),
                file: file.clone(),
                path: format!("spec.versions[{index}].schema.openAPIV3Schema"),
            };
            let mut markers = kind_markers.clone();
            markers.append(&mut version_markers(version));
            self.version(
                &place,
                &kind,
                markers,
                &version["schema"]["openAPIV3Schema"],
            );
        }
    }

    /// The root type of one version of the kind, and the types it needs.
    fn version(&mut self, place: &Place, kind: &str, mut markers: Markers, schema: &Value) {
        let package_path = place.package_path();
        let package = self
            .packages
            .entry(place.package.clone())
            .or_insert_with(|| Package {
                path: package_path,
                dir: place.file.clone(),
                markers: [
                    ("groupName".to_owned(), vec![json!(place.package.0)]),
                    ("versionName".to_owned(), vec![json!(place.package.1)]),
                ]
                .into(),
                file_markers: BTreeMap::new(),
                types: Vec::new(),
                constants: BTreeMap::new(),
            });
        let list = format!("{kind}List");
        let taken = |name: &str| {
            package.types.iter().any(|ty| ty.name == name)
                || self
                    .reserved
                    .contains(&(place.package.clone(), name.to_owned()))
        };
        if taken(kind) || taken(&list) {
            self.problems.push(format!(
                "{}: the kind {kind} (or {list}) is named as another type of {}/{}",
                place.position(),
                place.package.0,
                place.package.1
            ));
            return;
        }
        self.reserved.insert((place.package.clone(), list));
        let own = self.value_markers(place, schema);
        for (name, values) in own {
            markers
                .entry(type_marker(&name))
                .or_default()
                .extend(values);
        }
        let mut fields = vec![
            header_field("TypeMeta", ",inline", place),
            header_field("ObjectMeta", "metadata,omitempty", place),
        ];
        let metadata = &schema["properties"]["metadata"];
        if metadata.as_object().is_some_and(|m| m.len() > 1) {
            self.left_out.push(format!(
                "{}.properties.metadata: the restrictions of name and generateName (the \
                 attributes write metadata as a bare object, as controller-gen does): left out",
                place.position()
            ));
        }
        let placeholder = self.declare(place, kind, String::new(), Markers::new());
        let properties = schema["properties"].as_object().into_iter().flatten();
        for (json, property) in properties {
            if ["apiVersion", "kind", "metadata"].contains(&json.as_str()) {
                continue;
            }
            let required = is_required(schema, json);
            fields.push(self.field(place, kind, json, property, required));
        }
        let ty = self.local(place, &placeholder);
        ty.doc = description(schema);
        ty.markers = markers;
        ty.fields = fields;
    }

    /// The property `json` of the struct `parent` at `place`.
    fn field(
        &mut self,
        place: &Place,
        parent: &str,
        json: &str,
        schema: &Value,
        required: bool,
    ) -> Field {
        let place = place.join(&format!("properties.{json}"));
        let name = upper_camel(json);
        let Shape { ty, mut markers } = self.shape(&place, &format!("{parent}{name}"), schema);
        let tag = if required {
            json.to_owned()
        } else {
            markers.insert("optional".to_owned(), vec![Value::Bool(true)]);
            format!("{json},omitempty")
        };
        Field {
            name,
            doc: description(schema),
            position: place.position(),
            json: tag,
            markers,
            ty,
        }
    }

    /// The Go type of `schema`, declaring the named types it needs (a struct is `name`).
    fn shape(&mut self, place: &Place, name: &str, schema: &Value) -> Shape {
        let mut markers = self.value_markers(place, schema);
        let flag = |key: &str| schema[key] == Value::Bool(true);
        let mut format = schema["format"].as_str().map(str::to_owned);
        let ty = if flag("x-kubernetes-int-or-string") {
            if schema["pattern"] == QUANTITY_PATTERN {
                markers.remove("kubebuilder:validation:Pattern");
                named("k8s.io/apimachinery/pkg/api/resource", "Quantity")
            } else {
                named("k8s.io/apimachinery/pkg/util/intstr", "IntOrString")
            }
        } else {
            match schema["type"].as_str() {
                // Structural: without a type, it preserves unknown fields.
                None => named(
                    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
                    "JSON",
                ),
                Some("object") => self.object(place, name, schema, &mut markers),
                Some("array") => slice(self.element(&place.join("items"), name, &schema["items"])),
                Some("string") => basic("string"),
                Some("boolean") => basic("bool"),
                Some("number") => basic("float64"),
                Some(_) => match format.as_deref() {
                    Some(sized @ ("int32" | "int64")) => {
                        let ty = basic(sized);
                        format = None;
                        ty
                    }
                    _ => basic("int"),
                },
            }
        };
        if let Some(format) = format {
            markers.insert(
                "kubebuilder:validation:Format".to_owned(),
                vec![json!(format)],
            );
        }
        Shape { ty, markers }
    }

    /// An object schema: a struct of its properties, a map of its `additionalProperties`,
    /// or the raw object it preserves.
    fn object(
        &mut self,
        place: &Place,
        name: &str,
        schema: &Value,
        markers: &mut Markers,
    ) -> TypeExpr {
        let preserves = schema["x-kubernetes-preserve-unknown-fields"] == Value::Bool(true);
        let map_type = schema["x-kubernetes-map-type"]
            .as_str()
            .map(|t| vec![json!(t)]);
        let additional = &schema["additionalProperties"];
        if additional.is_object() {
            if let Some(values) = map_type {
                markers.insert("mapType".to_owned(), values);
            }
            return map(self.element(&place.join("additionalProperties"), name, additional));
        }
        if let Some(values) = map_type {
            markers.insert("structType".to_owned(), values);
        }
        if preserves && schema.get("properties").is_none() {
            return named("k8s.io/apimachinery/pkg/runtime", "RawExtension");
        }
        if preserves {
            markers.insert(
                "kubebuilder:validation:XPreserveUnknownFields".to_owned(),
                vec![Value::Bool(true)],
            );
        }
        self.structure(place, name, schema)
    }

    /// A struct of the schema's properties.
    fn structure(&mut self, place: &Place, name: &str, schema: &Value) -> TypeExpr {
        let name = self.declare(place, name, String::new(), Markers::new());
        let mut fields = Vec::new();
        for (json, property) in schema["properties"].as_object().into_iter().flatten() {
            let required = is_required(schema, json);
            fields.push(self.field(place, &name, json, property, required));
        }
        self.local(place, &name).fields = fields;
        named(&place.package_path(), &name)
    }

    /// The type of an item or a map value: a named type (with the markers as its own and
    /// the description as its doc) when it has either, else its type as it is.
    fn element(&mut self, place: &Place, name: &str, schema: &Value) -> TypeExpr {
        let Shape { ty, markers } = self.shape(place, name, schema);
        let doc = description(schema);
        if markers.is_empty() && doc.is_empty() {
            return ty;
        }
        let markers: Markers = markers
            .into_iter()
            .map(|(name, values)| (type_marker(&name), values))
            .collect();
        if ty.kind == "named" && ty.package == place.package_path() {
            // A struct this schema declared.
            let declared = self.local(place, &ty.name);
            declared.doc = doc;
            declared.markers = markers;
            return ty;
        }
        let name = self.declare(place, name, doc, markers);
        self.local(place, &name).underlying = ty;
        named(&place.package_path(), &name)
    }

    /// Declares a type named `name` (or, when that is taken, `name2`, `name3`, ...), a
    /// struct until said otherwise; its name.
    fn declare(&mut self, place: &Place, name: &str, doc: String, markers: Markers) -> String {
        let reserved = &self.reserved;
        let package = &mut self
            .packages
            .get_mut(&place.package)
            .expect("declared")
            .types;
        let taken = |candidate: &str| {
            package.iter().any(|ty| ty.name == candidate)
                || reserved.contains(&(place.package.clone(), candidate.to_owned()))
        };
        let unique = std::iter::once(name.to_owned())
            .chain((2..).map(|n| format!("{name}{n}")))
            .find(|candidate| !taken(candidate))
            .expect("an unused name");
        package.push(Type {
            name: unique.clone(),
            doc,
            position: place.position(),
            markers,
            underlying: TypeExpr::structure(),
            alias: false,
            fields: Vec::new(),
            methods: Vec::new(),
        });
        unique
    }

    fn local(&mut self, place: &Place, name: &str) -> &mut Type {
        self.packages
            .get_mut(&place.package)
            .and_then(|package| package.types.iter_mut().find(|ty| ty.name == name))
            .expect("a declared type")
    }

    /// The markers that write the schema's keywords (those about its type aside, which
    /// [`Reader::shape`] reads).
    fn value_markers(&mut self, place: &Place, schema: &Value) -> Markers {
        let mut markers = Markers::new();
        let mut add = |name: &str, value: Value| {
            markers.entry(name.to_owned()).or_default().push(value);
        };
        let int_or_string = schema["x-kubernetes-int-or-string"] == Value::Bool(true);
        for (key, value) in schema.as_object().into_iter().flatten() {
            match key.as_str() {
                "type"
                | "format"
                | "description"
                | "properties"
                | "required"
                | "items"
                | "additionalProperties"
                | "x-kubernetes-int-or-string"
                | "x-kubernetes-preserve-unknown-fields"
                | "x-kubernetes-map-type" => {}
                "anyOf" if int_or_string => {}
                "enum" => add("kubebuilder:validation:Enum", value.clone()),
                "default" => add("kubebuilder:default", wrapped("Default", value)),
                "example" => add("kubebuilder:example", wrapped("Example", value)),
                "title" => add("kubebuilder:title", wrapped("Title", value)),
                "externalDocs" => add(
                    "kubebuilder:externalDocs",
                    json!({"type": "ExternalDocs", "value": {
                        "URL": value["url"], "Description": value["description"]}}),
                ),
                "nullable" | "x-kubernetes-embedded-resource" if value == &Value::Bool(false) => {}
                "nullable" => add("nullable", Value::Bool(true)),
                "x-kubernetes-embedded-resource" => add(
                    "kubebuilder:validation:XEmbeddedResource",
                    Value::Bool(true),
                ),
                "x-kubernetes-validations" => {
                    for rule in value.as_array().into_iter().flatten() {
                        add("kubebuilder:validation:XValidation", validation_rule(rule));
                    }
                }
                "x-kubernetes-list-type" => add("listType", value.clone()),
                "x-kubernetes-list-map-keys" => {
                    for key in value.as_array().into_iter().flatten() {
                        add("listMapKey", key.clone());
                    }
                }
                other => match validation_marker(other) {
                    Some(marker) => add(&marker, value.clone()),
                    None => self.left_out.push(format!(
                        "{}: `{other}` has no marker (the attributes cannot write it): left out",
                        place.position()
                    )),
                },
            }
        }
        markers
    }
}

/// `+kubebuilder:validation:<Keyword>` for the JSON schema's value validations.
fn validation_marker(keyword: &str) -> Option<String> {
    const KEYWORDS: [&str; 13] = [
        "maximum",
        "minimum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "multipleOf",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxProperties",
        "minProperties",
    ];
    KEYWORDS
        .contains(&keyword)
        .then(|| format!("kubebuilder:validation:{}", upper_camel(keyword)))
}

/// The name a field marker has on a type, where they differ.
fn type_marker(field_marker: &str) -> String {
    match field_marker {
        "kubebuilder:validation:XPreserveUnknownFields" => {
            "kubebuilder:pruning:PreserveUnknownFields".to_owned()
        }
        other => other.to_owned(),
    }
}

/// A marker whose Go value is a struct holding one value, as goimport prints it.
fn wrapped(marker: &str, value: &Value) -> Value {
    json!({"type": marker, "value": {"Value": value}})
}

/// An `x-kubernetes-validations` rule as the `XValidation` marker's value.
fn validation_rule(rule: &Value) -> Value {
    let text = |key: &str| rule[key].as_str().unwrap_or_default().to_owned();
    json!({"type": "XValidation", "value": {
        "Rule": text("rule"),
        "Message": text("message"),
        "MessageExpression": text("messageExpression"),
        "Reason": text("reason"),
        "FieldPath": text("fieldPath"),
        "OptionalOldSelf": rule.get("optionalOldSelf").cloned().unwrap_or(Value::Null),
    }})
}

/// The markers of the kind, written on every version's root type.
fn kind_markers(crd: &Value, kind: &str) -> Markers {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let strings = |value: &Value| value.as_array().cloned().unwrap_or_default();
    let singular = names["singular"]
        .as_str()
        .filter(|singular| *singular != kind.to_lowercase())
        .unwrap_or_default();
    let scope = if spec["scope"] == "Cluster" {
        "Cluster"
    } else {
        ""
    };
    let mut markers = Markers::new();
    markers.insert(
        "kubebuilder:object:root".to_owned(),
        vec![Value::Bool(true)],
    );
    markers.insert(
        "kubebuilder:resource".to_owned(),
        vec![json!({"type": "Resource", "value": {
            "Path": names["plural"], "ShortName": strings(&names["shortNames"]),
            "Categories": strings(&names["categories"]), "Singular": singular, "Scope": scope}})],
    );
    let pairs = |value: &Value, skip: &str| -> Vec<Value> {
        value
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(key, _)| *key != skip)
            .map(|(key, value)| json!(format!("{key}={}", value.as_str().unwrap_or_default())))
            .collect()
    };
    let annotations = pairs(&crd["metadata"]["annotations"], GENERATOR_ANNOTATION);
    let labels = pairs(&crd["metadata"]["labels"], "");
    if !annotations.is_empty() || !labels.is_empty() {
        markers.insert(
            "kubebuilder:metadata".to_owned(),
            vec![json!({"type": "Metadata", "value": {
                "Annotations": annotations, "Labels": labels}})],
        );
    }
    markers
}

/// The markers of one version: storage, served, deprecation, subresources, columns and
/// selectable fields.
fn version_markers(version: &Value) -> Markers {
    let mut markers = Markers::new();
    let mut add = |name: &str, value: Value| {
        markers.entry(name.to_owned()).or_default().push(value);
    };
    if version["storage"] == Value::Bool(true) {
        add("kubebuilder:storageversion", Value::Bool(true));
    }
    if version["served"] == Value::Bool(false) {
        add("kubebuilder:unservedversion", Value::Bool(true));
    }
    if version["deprecated"] == Value::Bool(true) {
        add(
            "kubebuilder:deprecatedversion",
            json!({"type": "DeprecatedVersion", "value": {"Warning": version["deprecationWarning"]}}),
        );
    }
    let subresources = &version["subresources"];
    if subresources.get("status").is_some() {
        add("kubebuilder:subresource:status", Value::Bool(true));
    }
    if let Some(scale) = subresources.get("scale") {
        add(
            "kubebuilder:subresource:scale",
            json!({"type": "SubresourceScale", "value": {
                "SpecPath": scale["specReplicasPath"], "StatusPath": scale["statusReplicasPath"],
                "SelectorPath": scale["labelSelectorPath"]}}),
        );
    }
    for column in version["additionalPrinterColumns"]
        .as_array()
        .into_iter()
        .flatten()
    {
        add(
            "kubebuilder:printcolumn",
            json!({"type": "PrintColumn", "value": {
                "Name": column["name"], "Type": column["type"], "JSONPath": column["jsonPath"],
                "Description": column["description"], "Format": column["format"],
                "Priority": column["priority"]}}),
        );
    }
    for field in version["selectableFields"].as_array().into_iter().flatten() {
        add(
            "kubebuilder:selectablefield",
            json!({"type": "SelectableField", "value": {"JSONPath": field["jsonPath"]}}),
        );
    }
    markers
}

/// `metav1.TypeMeta` or `metav1.ObjectMeta`, as a kind's root type embeds them.
fn header_field(name: &str, json: &str, place: &Place) -> Field {
    Field {
        name: String::new(),
        doc: String::new(),
        position: place.position(),
        json: json.to_owned(),
        markers: Markers::new(),
        ty: named(META, name),
    }
}

fn is_required(schema: &Value, property: &str) -> bool {
    schema["required"]
        .as_array()
        .is_some_and(|required| required.iter().any(|r| r == property))
}

fn description(schema: &Value) -> String {
    schema["description"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn basic(name: &str) -> TypeExpr {
    TypeExpr {
        kind: "basic".to_owned(),
        name: name.to_owned(),
        package: String::new(),
        len: 0,
        key: None,
        elem: None,
        underlying: None,
    }
}

fn named(package: &str, name: &str) -> TypeExpr {
    TypeExpr {
        kind: "named".to_owned(),
        package: package.to_owned(),
        ..basic(name)
    }
}

fn slice(elem: TypeExpr) -> TypeExpr {
    TypeExpr {
        kind: "slice".to_owned(),
        elem: Some(Box::new(elem)),
        ..basic("")
    }
}

fn map(elem: TypeExpr) -> TypeExpr {
    TypeExpr {
        kind: "map".to_owned(),
        key: Some(Box::new(basic("string"))),
        elem: Some(Box::new(elem)),
        ..basic("")
    }
}
