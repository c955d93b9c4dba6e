//! Schema markers' values: what a marker of `#[kubebuilder(...)]`, `#[kubebuilder::schema(...)]`
//! or the `validation(...)` of `#[kubebuilder::resource(...)]` carries, by the value kind of
//! its row in `kubebuilder-markers`.
//!
//! Each value kind is one row of the table below ([`value_kinds!`](crate::value_kinds)): its
//! name (the `value:` column of a marker's row) and the Rust type of its value. The table
//! defines [`Value`] (a value of any kind, as the attribute parser returns it and the source
//! reader hands it on), [`Kind`] (what a marker's row declares), [`kind`] (the type of each
//! kind, which the `kubebuilder` crate's `Marker` variants hold) and, in the attribute
//! macros, how a value is written as a constant. A new kind of value is a new row here, and
//! the syntax that writes it (an arm of the attribute parser's `parse_value`).

use std::borrow::Cow;

use crate::Text;

/// A literal value written in an attribute (`default`, `example`, `enum` members).
#[derive(Clone, Debug, PartialEq)]
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
    String(crate::Text),
    /// A list (`[1, 2]`).
    List(Literals),
    /// A map (`{"a": 1}`), its entries in the order written.
    Map(Cow<'static, [(Text, Literal)]>),
}

/// A list of [`Literal`]s.
pub type Literals = Cow<'static, [Literal]>;

/// One `x-kubernetes-validations` entry (`+kubebuilder:validation:XValidation`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rule {
    /// The CEL expression that must hold (`self.minReplicas <= self.replicas`).
    pub rule: Text,
    /// `message`, reported when the rule fails; `None` lets the apiserver report the rule.
    pub message: Option<Text>,
    /// `messageExpression`: CEL computing the message, preferred over `message`.
    pub message_expression: Option<Text>,
    /// `reason`: the cause reported when the rule fails (`FieldValueForbidden`, ...);
    /// `None` leaves the apiserver's `FieldValueInvalid`.
    pub reason: Option<Text>,
    /// `fieldPath`: the field the failure is reported at, relative to the node
    /// (`.spec.replicas`); `None` reports it at the node.
    pub field_path: Option<Text>,
    /// `optionalOldSelf`: `Some(true)` evaluates a transition rule on create too, with
    /// `oldSelf` an optional.
    pub optional_old_self: Option<bool>,
}

/// `+kubebuilder:externalDocs`.
#[derive(Clone, Debug, PartialEq)]
pub struct Docs {
    /// `externalDocs.url`; empty leaves it out.
    pub url: Text,
    /// `externalDocs.description`; empty leaves it out.
    pub description: Text,
}

/// The value kinds, one row each: `Name(type)` for a kind with a value, `Name` for one
/// without. Expands to `$callback! { rows }`, as `kubebuilder-markers`' table does; this
/// module defines [`Value`], [`Kind`] and [`kind`] from it, and the attribute macros the code
/// that writes a value as a constant.
#[doc(hidden)]
#[macro_export]
macro_rules! value_kinds {
    ($callback:path) => {
        $callback! {
            /// A bare name (`nullable`).
            Flag,
            /// A bare name, or `= true` / `= false`.
            Bool(bool),
            /// A number.
            Number(f64),
            /// An integer.
            Integer(i64),
            /// A string.
            String($crate::Text),
            /// One of the strings the row lists.
            Choice($crate::Text),
            /// A regular expression, checked when written.
            Pattern($crate::Text),
            /// Any literal value.
            Literal($crate::schema::Literal),
            /// A string holding JSON, as the value it holds.
            Json($crate::schema::Literal),
            /// A list of literal values.
            Literals($crate::schema::Literals),
            /// `x_validation(...)`.
            Rule($crate::schema::Rule),
            /// A list of field names.
            Fields($crate::Texts),
            /// `external_docs(...)`.
            Docs($crate::schema::Docs),
        }
    };
}

/// Defines [`Value`], [`Kind`] and [`kind`] from the rows.
macro_rules! define_values {
    ($( $(#[$doc:meta])* $kind:ident $(($type:ty))?, )*) => {
        /// A marker's value, by the value kind of its row.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Value {
            $( $(#[$doc])* $kind $(($type))?, )*
        }

        /// A value kind: the `value:` column of a row of `kubebuilder-markers`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $( $(#[$doc])* $kind, )*
        }

        /// The type of each value kind that has a value, by the kind's name: what the
        /// `kubebuilder` crate's `Marker` variant of a row of that kind holds.
        pub mod kind {
            $( kind_type!($(#[$doc])* $kind $(($type))?); )*
        }
    };
}

/// The type alias of a value kind with a value; nothing for one without.
macro_rules! kind_type {
    ($(#[$doc:meta])* $kind:ident) => {};
    ($(#[$doc:meta])* $kind:ident($type:ty)) => {
        $(#[$doc])*
        pub type $kind = $type;
    };
}

value_kinds!(define_values);
