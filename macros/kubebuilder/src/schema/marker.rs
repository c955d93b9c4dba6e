//! The schema markers as values: what `#[kubebuilder(...)]` on a field and
//! `#[kubebuilder::schema(...)]` on a type record, and how each one changes a schema node.
//! The values are `const`-constructible so that the same data drives the compile-time
//! checks (`shape.rs`) and the schema built at run time.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    ExternalDocumentation, JSON, JSONSchemaProps, ValidationRule,
};
use serde_json::Value;

/// A literal value written in an attribute (`default`, `example`, `enum` members).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(&'static str),
    List(&'static [Literal]),
    Map(&'static [(&'static str, Literal)]),
}

impl Literal {
    pub fn to_json(&self) -> Value {
        match *self {
            Literal::Null => Value::Null,
            Literal::Bool(b) => Value::Bool(b),
            Literal::Int(i) => Value::from(i),
            Literal::Float(f) => Value::from(f),
            Literal::String(s) => Value::from(s),
            Literal::List(items) => Value::Array(items.iter().map(Literal::to_json).collect()),
            Literal::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| ((*key).to_owned(), value.to_json()))
                    .collect(),
            ),
        }
    }
}

/// One `x-kubernetes-validations` entry (`+kubebuilder:validation:XValidation`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    pub rule: &'static str,
    pub message: Option<&'static str>,
    pub message_expression: Option<&'static str>,
    pub reason: Option<&'static str>,
    pub field_path: Option<&'static str>,
    pub optional_old_self: Option<bool>,
}

impl Rule {
    pub fn to_validation_rule(&self) -> ValidationRule {
        ValidationRule {
            rule: self.rule.to_owned(),
            message: self.message.map(str::to_owned),
            message_expression: self.message_expression.map(str::to_owned),
            reason: self.reason.map(str::to_owned),
            field_path: self.field_path.map(str::to_owned),
            optional_old_self: self.optional_old_self,
        }
    }
}

/// A schema marker of controller-gen, by its Rust spelling (see docs/markers.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Marker {
    Maximum(f64),
    Minimum(f64),
    ExclusiveMaximum(bool),
    ExclusiveMinimum(bool),
    MultipleOf(f64),
    MaxLength(i64),
    MinLength(i64),
    Pattern(&'static str),
    MaxItems(i64),
    MinItems(i64),
    UniqueItems(bool),
    MaxProperties(i64),
    MinProperties(i64),
    Enum(&'static [Literal]),
    Format(&'static str),
    Type(&'static str),
    PreserveUnknownFields,
    EmbeddedResource,
    IntOrString,
    XValidation(Rule),
    AtMostOneOf(&'static [&'static str]),
    ExactlyOneOf(&'static [&'static str]),
    AtLeastOneOf(&'static [&'static str]),
    Nullable,
    /// `+kubebuilder:default`.
    Default(Literal),
    /// `+default` (JSON, parsed at compile time).
    DefaultJson(Literal),
    Example(Literal),
    Title(&'static str),
    ExternalDocs {
        url: &'static str,
        description: &'static str,
    },
    ListType(&'static str),
    ListMapKey(&'static str),
    MapType(&'static str),
    StructType(&'static str),
}

impl Marker {
    /// controller-gen's apply priority: markers that change the type (and `+default`) run
    /// first so that the type checks of the others see the final type; the OneOf rules run
    /// last, after any hand-written XValidation rules.
    pub const fn priority(&self) -> u8 {
        match self {
            Marker::Type(_)
            | Marker::IntOrString
            | Marker::ListType(_)
            | Marker::DefaultJson(_) => 9,
            Marker::AtMostOneOf(_) => 11,
            Marker::ExactlyOneOf(_) => 12,
            Marker::AtLeastOneOf(_) => 13,
            _ => 10,
        }
    }

    /// Changes `schema` as controller-gen's marker does. Type preconditions were checked at
    /// compile time, so this cannot fail.
    pub fn apply(&self, schema: &mut JSONSchemaProps) {
        // Go's zero values are "absent": a `false` flag is never written.
        let flag = |on: bool| on.then_some(true);
        match *self {
            Marker::Maximum(v) => schema.maximum = Some(v),
            Marker::Minimum(v) => schema.minimum = Some(v),
            Marker::ExclusiveMaximum(on) => schema.exclusive_maximum = flag(on),
            Marker::ExclusiveMinimum(on) => schema.exclusive_minimum = flag(on),
            Marker::MultipleOf(v) => schema.multiple_of = Some(v),
            Marker::MaxLength(n) => schema.max_length = Some(n),
            Marker::MinLength(n) => schema.min_length = Some(n),
            Marker::Pattern(p) => schema.pattern = Some(p.to_owned()),
            Marker::MaxItems(n) => schema.max_items = Some(n),
            Marker::MinItems(n) => schema.min_items = Some(n),
            Marker::UniqueItems(on) => schema.unique_items = flag(on),
            Marker::MaxProperties(n) => schema.max_properties = Some(n),
            Marker::MinProperties(n) => schema.min_properties = Some(n),
            Marker::Enum(values) => {
                schema.enum_ = Some(values.iter().map(|v| JSON(v.to_json())).collect());
            }
            Marker::Format(f) => schema.format = non_empty(f),
            Marker::Type(t) => schema.type_ = non_empty(t),
            Marker::PreserveUnknownFields => {
                schema.x_kubernetes_preserve_unknown_fields = Some(true)
            }
            Marker::EmbeddedResource => schema.x_kubernetes_embedded_resource = Some(true),
            Marker::IntOrString => schema.x_kubernetes_int_or_string = Some(true),
            Marker::XValidation(rule) => push_rule(schema, rule.to_validation_rule()),
            Marker::AtMostOneOf(fields) => push_rule(schema, one_of_rule(fields, OneOf::AtMost)),
            Marker::ExactlyOneOf(fields) => push_rule(schema, one_of_rule(fields, OneOf::Exactly)),
            Marker::AtLeastOneOf(fields) => push_rule(schema, one_of_rule(fields, OneOf::AtLeast)),
            Marker::Nullable => schema.nullable = Some(true),
            Marker::Default(value) => {
                let mut value = value.to_json();
                // controller-gen writes `{}` on an array as `[]` (`default={}` is the only
                // way to spell an empty list in a Go marker).
                if schema.type_.as_deref() == Some("array")
                    && value == Value::Object(Default::default())
                {
                    value = Value::Array(Vec::new());
                }
                schema.default = Some(JSON(value));
            }
            Marker::DefaultJson(value) => schema.default = Some(JSON(value.to_json())),
            Marker::Example(value) => schema.example = Some(JSON(value.to_json())),
            Marker::Title(title) => schema.title = non_empty(title),
            Marker::ExternalDocs { url, description } => {
                schema.external_docs = Some(ExternalDocumentation {
                    url: non_empty(url),
                    description: non_empty(description),
                });
            }
            Marker::ListType(t) => schema.x_kubernetes_list_type = Some(t.to_owned()),
            Marker::ListMapKey(key) => schema
                .x_kubernetes_list_map_keys
                .get_or_insert_with(Vec::new)
                .push(key.to_owned()),
            // There is no struct-type extension: controller-gen writes structType as the map type.
            Marker::MapType(t) | Marker::StructType(t) => {
                schema.x_kubernetes_map_type = Some(t.to_owned())
            }
        }
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

fn push_rule(schema: &mut JSONSchemaProps, rule: ValidationRule) {
    schema
        .x_kubernetes_validations
        .get_or_insert_with(Vec::new)
        .push(rule);
}

enum OneOf {
    AtMost,
    Exactly,
    AtLeast,
}

/// The CEL rule controller-gen v0.21 writes for the OneOf markers: count the fields set.
fn one_of_rule(fields: &[&str], kind: OneOf) -> ValidationRule {
    let has: Vec<String> = fields.iter().map(|f| format!("has(self.{f})")).collect();
    let count = format!("[{}].filter(x,x==true).size()", has.join(","));
    // Go prints the list with %v: `[a b]`.
    let list = format!("[{}]", fields.join(" "));
    let (rule, message) = match kind {
        OneOf::AtMost => (
            format!("{count} <= 1"),
            format!("at most one of the fields in {list} may be set"),
        ),
        OneOf::Exactly => (
            format!("{count} == 1"),
            format!("exactly one of the fields in {list} must be set"),
        ),
        OneOf::AtLeast => (
            format!("{count} >= 1"),
            format!("at least one of the fields in {list} must be set"),
        ),
    };
    ValidationRule {
        rule,
        message: Some(message),
        ..Default::default()
    }
}

/// Applies markers in controller-gen's order: by priority, stable (so source order within
/// a priority).
pub(crate) fn apply_sorted(schema: &mut JSONSchemaProps, markers: &[Marker]) {
    let mut sorted: Vec<&Marker> = markers.iter().collect();
    sorted.sort_by_key(|m| m.priority());
    for marker in sorted {
        marker.apply(schema);
    }
}
