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
use serde_json::Value;

/// A literal value written in an attribute (`default`, `example`, `enum` members).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    /// `null`, which only `default_json` can write.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number without a fraction or exponent.
    Int(i64),
    /// Any other number.
    Float(f64),
    /// A string.
    String(&'static str),
    /// A list (`[1, 2]`).
    List(&'static [Literal]),
    /// A map (`{"a": 1}`), its entries in the order written.
    Map(&'static [(&'static str, Literal)]),
}

impl Literal {
    /// The value as JSON, for the schema's `default`, `example` and `enum`.
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
    /// The CEL expression that must hold (`self.minReplicas <= self.replicas`).
    pub rule: &'static str,
    /// `message`, reported when the rule fails; `None` lets the apiserver report the rule.
    pub message: Option<&'static str>,
    /// `messageExpression`: CEL computing the message, preferred over `message`.
    pub message_expression: Option<&'static str>,
    /// `reason`: the cause reported when the rule fails (`FieldValueForbidden`, ...);
    /// `None` leaves the apiserver's `FieldValueInvalid`.
    pub reason: Option<&'static str>,
    /// `fieldPath`: the field the failure is reported at, relative to the node
    /// (`.spec.replicas`); `None` reports it at the node.
    pub field_path: Option<&'static str>,
    /// `optionalOldSelf`: `Some(true)` evaluates a transition rule on create too, with
    /// `oldSelf` an optional.
    pub optional_old_self: Option<bool>,
}

impl Rule {
    /// The rule as an `x-kubernetes-validations` entry.
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

/// `+kubebuilder:externalDocs`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Docs {
    /// `externalDocs.url`; empty leaves it out.
    pub url: &'static str,
    /// `externalDocs.description`; empty leaves it out.
    pub description: &'static str,
}

impl Docs {
    fn to_external_documentation(self) -> ExternalDocumentation {
        ExternalDocumentation {
            url: non_empty(self.url),
            description: non_empty(self.description),
        }
    }
}

/// What a marker's node must be, checked at compile time against its shape
/// ([`check_marker`](super::shape::check_marker)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Needs {
    /// Any node.
    Nothing,
    /// An integer or a number.
    Numeric,
    /// Numeric, and integral when the node is an integer.
    Bound(f64),
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
    Fits(Literal),
}

/// The payload of a marker, by the value kind of its row (`$value` only says it has one).
macro_rules! payload {
    (Bool $value:ident) => { bool };
    (Number $value:ident) => { f64 };
    (Integer $value:ident) => { i64 };
    (String $value:ident) => { &'static str };
    (Choice $value:ident) => { &'static str };
    (Pattern $value:ident) => { &'static str };
    (Literal $value:ident) => { Literal };
    (Json $value:ident) => { Literal };
    (Literals $value:ident) => { &'static [Literal] };
    (Rule $value:ident) => { Rule };
    (Fields $value:ident) => { &'static [&'static str] };
    (Docs $value:ident) => { Docs };
}

/// A marker's value by the value kind of its row, for building a [`Marker`] from its row's
/// name at run time ([`Marker::from_row`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Payload {
    /// `Flag`: none.
    None,
    /// `Bool`.
    Bool(bool),
    /// `Number`.
    Number(f64),
    /// `Integer`.
    Integer(i64),
    /// `String`, `Choice` and `Pattern`.
    Text(&'static str),
    /// `Literal` and `Json`.
    Literal(Literal),
    /// `Literals`.
    Literals(&'static [Literal]),
    /// `Rule`.
    Rule(Rule),
    /// `Fields`.
    Fields(&'static [&'static str]),
    /// `Docs`.
    Docs(Docs),
}

/// The marker of a row from its payload (`$value` only says it has one): the
/// [`Payload`] variant of each value kind.
macro_rules! from_payload {
    ($variant:ident, $payload:ident,) => {
        matches!($payload, Payload::None).then_some(Marker::$variant)
    };
    ($variant:ident, $payload:ident, $kind:ident $value:ident) => {
        from_payload!(@$kind $variant, $payload)
    };
    (@Bool $variant:ident, $payload:ident) => { from_payload!(@as Bool $variant, $payload) };
    (@Number $variant:ident, $payload:ident) => { from_payload!(@as Number $variant, $payload) };
    (@Integer $variant:ident, $payload:ident) => { from_payload!(@as Integer $variant, $payload) };
    (@String $variant:ident, $payload:ident) => { from_payload!(@as Text $variant, $payload) };
    (@Choice $variant:ident, $payload:ident) => { from_payload!(@as Text $variant, $payload) };
    (@Pattern $variant:ident, $payload:ident) => { from_payload!(@as Text $variant, $payload) };
    (@Literal $variant:ident, $payload:ident) => { from_payload!(@as Literal $variant, $payload) };
    (@Json $variant:ident, $payload:ident) => { from_payload!(@as Literal $variant, $payload) };
    (@Literals $variant:ident, $payload:ident) => { from_payload!(@as Literals $variant, $payload) };
    (@Rule $variant:ident, $payload:ident) => { from_payload!(@as Rule $variant, $payload) };
    (@Fields $variant:ident, $payload:ident) => { from_payload!(@as Fields $variant, $payload) };
    (@Docs $variant:ident, $payload:ident) => { from_payload!(@as Docs $variant, $payload) };
    (@as $kind:ident $variant:ident, $payload:ident) => {
        match $payload {
            Payload::$kind(value) => Some(Marker::$variant(value)),
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
        controller_gen: [$($go:literal),*],
        apply: |$schema:ident $(, $value:ident)?| $apply:expr,
        $(object: |$object:ident, $field:ident| $object_apply:expr,)?
    })*]) => {
        /// A schema marker of controller-gen, by its row in `kubebuilder-markers`
        /// (spellings: docs/markers.md).
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Marker {
            $( $(#[$doc])* $variant $( (payload!($kind $value)) )?, )*
        }

        impl Marker {
            /// The marker of the row named `variant` (`"Minimum"`) with this value, as the
            /// attribute macros write it; `None` for no such row, or a value of another kind.
            /// For `cargo xtask manifests`, which reads the attributes from the sources.
            pub(crate) fn from_row(variant: &str, payload: Payload) -> Option<Marker> {
                match variant {
                    $( stringify!($variant) => from_payload!($variant, payload, $($kind $value)?), )*
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
            pub const fn needs(&self) -> Needs {
                match *self {
                    $( Marker::$variant $( ($value) )? => Needs::$needs $( ($needs_value) )?, )*
                }
            }

            /// Changes `schema` as controller-gen's marker does. Preconditions were checked
            /// at compile time, so this cannot fail.
            pub fn apply(&self, schema: &mut JSONSchemaProps) {
                match *self {
                    $( Marker::$variant $( ($value) )? => {
                        let $schema = &mut *schema;
                        $apply;
                    } )*
                }
            }

            /// Changes the struct `object` that holds the optional field `field` with this
            /// marker, as controller-gen's struct pass does (most markers change nothing).
            pub fn apply_to_object(&self, object: &mut JSONSchemaProps, field: &str) {
                match *self {
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

pub(crate) fn push_rule(schema: &mut JSONSchemaProps, rule: ValidationRule) {
    schema
        .x_kubernetes_validations
        .get_or_insert_with(Vec::new)
        .push(rule);
}

/// A default as controller-gen writes it: `{}` on an array is `[]` (`default={}` is the only
/// way to spell an empty list in a Go marker).
fn default_value(schema: &JSONSchemaProps, value: Literal) -> Value {
    let value = value.to_json();
    if schema.type_.as_deref() == Some("array") && value == Value::Object(Default::default()) {
        Value::Array(Vec::new())
    } else {
        value
    }
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
