//! The schema markers as values: what `#[kubebuilder(...)]` on a field and
//! `#[kubebuilder::schema(...)]` on a type record, and how each one changes a schema node.
//! [`Marker`] is generated from the rows of `kubebuilder-markers` (one row per marker: its
//! value, precondition, priority and the code below that applies it); this module holds the
//! value types and the helpers the rows' `apply` code calls. The values are
//! `const`-constructible so that the same data drives the compile-time checks (`shape.rs`)
//! and the schema built at run time.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    ExternalDocumentation, JSON, JSONSchemaProps, ValidationRule,
};
use kubebuilder_model::Text;
pub use kubebuilder_model::schema::{Docs, Literal, Rule};
use kubebuilder_model::schema::{Value, kind};
use serde_json::Value as Json;

/// A literal as JSON, for the schema's `default`, `example` and `enum`.
fn json(literal: &Literal) -> Json {
    match literal {
        Literal::Null => Json::Null,
        Literal::Bool(b) => Json::Bool(*b),
        Literal::Int(i) => Json::from(*i),
        Literal::Float(f) => Json::from(*f),
        Literal::String(s) => Json::from(s.as_ref()),
        Literal::List(items) => Json::Array(items.iter().map(json).collect()),
        Literal::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|(key, value)| (key.to_string(), json(value)))
                .collect(),
        ),
    }
}

/// A rule as an `x-kubernetes-validations` entry.
fn validation_rule(rule: &Rule) -> ValidationRule {
    let owned = |text: &Option<Text>| text.as_ref().map(|text| text.to_string());
    ValidationRule {
        rule: rule.rule.to_string(),
        message: owned(&rule.message),
        message_expression: owned(&rule.message_expression),
        reason: owned(&rule.reason),
        field_path: owned(&rule.field_path),
        optional_old_self: rule.optional_old_self,
    }
}

fn external_documentation(docs: &Docs) -> ExternalDocumentation {
    ExternalDocumentation {
        url: non_empty(&docs.url),
        description: non_empty(&docs.description),
    }
}

/// What a marker's node must be, checked at compile time against its shape
/// ([`check_marker`](super::shape::check_marker)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Needs<'a> {
    /// Any node.
    Nothing,
    /// An integer or a number.
    Numeric,
    /// Numeric, and integral when the node is an integer.
    Bound(&'a f64),
    /// A string or an int-or-string.
    Textual,
    /// An array.
    Array,
    /// An object.
    Object,
    /// An object with values (a map), or one that keeps unknown fields.
    Map,
    /// An object, or a node without a type.
    ObjectLike,
    /// A value of the node's type (a default).
    Fits(&'a Literal),
}

/// The type of a row's value (`$value` only says it has one).
macro_rules! payload {
    ($kind:ident $value:ident) => {
        kind::$kind
    };
}

/// The marker of a row from a value: `$kind` is the row's value kind, `$value` present when
/// the kind has a value.
macro_rules! from_value {
    ($variant:ident, $input:ident, $kind:ident) => {
        matches!($input, Value::$kind).then_some(Marker::$variant)
    };
    ($variant:ident, $input:ident, $kind:ident $value:ident) => {
        match $input {
            Value::$kind(value) => Some(Marker::$variant(value)),
            _ => None,
        }
    };
}

/// Keeps the `marker` rows of the table (the others are read by the attribute macros
/// alone), then defines [`Marker`] from them.
macro_rules! define_markers {
    (@rows [$($kept:tt)*] $(#[$doc:meta])* marker $variant:ident { $($columns:tt)* } $($rest:tt)*) => {
        define_markers!(@rows [$($kept)* { $(#[$doc])* $variant $($columns)* }] $($rest)*);
    };
    (@rows [$($kept:tt)*] $(#[$doc:meta])* $role:ident $variant:ident { $($columns:tt)* } $($rest:tt)*) => {
        define_markers!(@rows [$($kept)*] $($rest)*);
    };
    (@rows [$({
        $(#[$doc:meta])* $variant:ident
        name: $name:literal in $group:ident,
        value: $kind:ident $(($($choice:literal),*))?,
        stands: [$($place:ident),*],
        repeatable: $repeatable:literal,
        needs: $needs:ident $(($needs_value:ident))?,
        priority: $priority:literal,
        controller_gen: [$($go:literal $(($($only:ident),*))?),*],
        apply: |$schema:ident $(, $value:ident)?| $apply:expr,
        $(object: |$object:ident, $field:ident| $object_apply:expr,)?
    })*]) => {
        /// A schema marker of controller-gen, by its row in `kubebuilder-markers`
        /// (spellings: docs/markers.md).
        #[derive(Clone, Debug, PartialEq)]
        pub enum Marker {
            $( $(#[$doc])* $variant $( (payload!($kind $value)) )?, )*
        }

        impl Marker {
            /// The marker of the row named `variant` (`"Minimum"`) with this value, as the
            /// attribute macros write it; `None` for no such row, or a value of another kind.
            /// For `cargo xtask manifests`, which reads the attributes from the sources.
            pub(crate) fn from_row(variant: &str, value: Value) -> Option<Marker> {
                match variant {
                    $( stringify!($variant) => from_value!($variant, value, $kind $($value)?), )*
                    _ => None,
                }
            }

            /// controller-gen's apply priority: markers that change the type (and `+default`)
            /// run first so that the type checks of the others see the final type; the OneOf
            /// rules run last, after any hand-written XValidation rules.
            pub const fn priority(&self) -> u8 {
                match self {
                    $( Marker::$variant { .. } => $priority, )*
                }
            }

            /// The node this marker must sit on.
            #[allow(unused_variables, reason = "rows bind their value whether `needs` reads it or not")]
            pub const fn needs(&self) -> Needs<'_> {
                match self {
                    $( Marker::$variant $( ($value) )? => Needs::$needs $( ($needs_value) )?, )*
                }
            }

            /// Changes `schema` as controller-gen's marker does. Preconditions were checked
            /// at compile time, so this cannot fail.
            pub fn apply(&self, schema: &mut JSONSchemaProps) {
                match self {
                    $( Marker::$variant $( ($value) )? => {
                        let $schema = &mut *schema;
                        $apply;
                    } )*
                }
            }

            /// Changes the struct `object` that holds the optional field `field` with this
            /// marker, as controller-gen's struct pass does (most markers change nothing).
            pub fn apply_to_object(&self, object: &mut JSONSchemaProps, field: &str) {
                match self {
                    $( Marker::$variant { .. } => {
                        $(
                            let $object = &mut *object;
                            let $field = field;
                            $object_apply;
                        )?
                    } )*
                }
            }
        }
    };
    // The table: start with nothing kept.
    ($($rows:tt)*) => {
        define_markers!(@rows [] $($rows)*);
    };
}

kubebuilder_markers::markers!(define_markers);

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// Go's zero values are "absent": a `false` flag is never written.
fn flag(on: bool) -> Option<bool> {
    on.then_some(true)
}

/// A key of an associative list, once: the apiserver refuses a CRD that lists a key twice
/// (controller-gen deduplicates since v0.22, for k8s.io/api types that carry both
/// `+listMapKey` and `+k8s:listMapKey`).
fn add_list_map_key(schema: &mut JSONSchemaProps, key: &str) {
    let keys = schema
        .x_kubernetes_list_map_keys
        .get_or_insert_with(Vec::new);
    if !keys.iter().any(|k| k == key) {
        keys.push(key.to_owned());
    }
}

/// `+k8s:required`'s bounds: at least one character, item or field, unless set already.
/// A field of a named struct type has no type of its own here: [`Node::apply`](super::Node::apply)
/// bounds its fields instead, as controller-gen bounds a `$ref`.
fn at_least_one(schema: &mut JSONSchemaProps) {
    match schema.type_.as_deref() {
        Some("string") => _ = schema.min_length.get_or_insert(1),
        Some("array") => _ = schema.min_items.get_or_insert(1),
        Some("object") => _ = schema.min_properties.get_or_insert(1),
        _ => {}
    }
}

pub(crate) fn push_rule(schema: &mut JSONSchemaProps, rule: ValidationRule) {
    schema
        .x_kubernetes_validations
        .get_or_insert_with(Vec::new)
        .push(rule);
}

/// A default as controller-gen writes it: `{}` on an array is `[]` (`default={}` is the only
/// way to spell an empty list in a Go marker).
fn default_value(schema: &JSONSchemaProps, value: &Literal) -> Json {
    let value = json(value);
    if schema.type_.as_deref() == Some("array") && value == Json::Object(Default::default()) {
        Json::Array(Vec::new())
    } else {
        value
    }
}

enum OneOf {
    AtMost,
    Exactly,
    AtLeast,
}

/// The CEL rule controller-gen writes for the OneOf markers: the number of fields set,
/// compared (at most one, exactly one), or any field set (at least one).
fn one_of_rule(fields: &[Text], kind: OneOf) -> ValidationRule {
    let has = |field: &Text| format!("has(self.{field})");
    let count = || {
        let terms: Vec<String> = fields.iter().map(|f| format!("({}?1:0)", has(f))).collect();
        terms.join("+")
    };
    // Go prints the list with %v: `[a b]`.
    let list = format!("[{}]", fields.join(" "));
    let (rule, message) = match kind {
        OneOf::AtMost => (
            format!("{} <= 1", count()),
            format!("at most one of the fields in {list} may be set"),
        ),
        OneOf::Exactly => (
            format!("{} == 1", count()),
            format!("exactly one of the fields in {list} must be set"),
        ),
        OneOf::AtLeast => (
            fields.iter().map(has).collect::<Vec<_>>().join("||"),
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
