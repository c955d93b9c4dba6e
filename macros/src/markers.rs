//! The schema markers: parsed from `#[kubebuilder(...)]` on a field or
//! `#[kubebuilder::schema(...)]` on a type, validated as far as the syntax allows, and
//! rendered as `kubebuilder::schema::Marker` values plus the `const` checks that need the
//! field's type (see `kubebuilder::schema::check_marker`). Each marker is parsed in
//! [`parse_validation`] or [`parse`], held in [`Marker`] and rendered in its `ToTokens`.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::LitStr;

use crate::args::{Arg, Errors, Value};
use crate::tokens::optional;

/// Where an attribute sits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Field,
    Type,
}

/// A literal value of `default`, `example` and `enum`.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    List(Vec<Literal>),
    Map(Vec<(String, Literal)>),
}

impl Literal {
    fn from_value(value: &Value) -> Literal {
        match value {
            Value::Str(lit) => Literal::String(lit.value()),
            Value::Int(i, _) => Literal::Int(*i),
            Value::Float(f, _) => Literal::Float(*f),
            Value::Bool(b, _) => Literal::Bool(*b),
            Value::List(items, _) => Literal::List(items.iter().map(Literal::from_value).collect()),
            Value::Map(entries, _) => Literal::Map(
                entries
                    .iter()
                    .map(|(key, value)| (key.value(), Literal::from_value(value)))
                    .collect(),
            ),
            // Rejected by `Arg::any` before this is called.
            Value::Path(_) => Literal::Null,
        }
    }

    fn from_json(value: &serde_json::Value) -> Literal {
        use serde_json::Value as Json;
        match value {
            Json::Null => Literal::Null,
            Json::Bool(b) => Literal::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Literal::Int(i),
                None => Literal::Float(n.as_f64().unwrap_or_default()),
            },
            Json::String(s) => Literal::String(s.clone()),
            Json::Array(items) => Literal::List(items.iter().map(Literal::from_json).collect()),
            Json::Object(entries) => Literal::Map(
                entries
                    .iter()
                    .map(|(key, value)| (key.clone(), Literal::from_json(value)))
                    .collect(),
            ),
        }
    }
}

impl ToTokens for Literal {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let literal = quote!(::kubebuilder::schema::Literal);
        tokens.extend(match self {
            Literal::Null => quote!(#literal::Null),
            Literal::Bool(b) => quote!(#literal::Bool(#b)),
            Literal::Int(i) => quote!(#literal::Int(#i)),
            Literal::Float(f) => quote!(#literal::Float(#f)),
            Literal::String(s) => quote!(#literal::String(#s)),
            Literal::List(items) => quote!(#literal::List(&[#(#items),*])),
            Literal::Map(entries) => {
                let entries = entries.iter().map(|(key, value)| quote!((#key, #value)));
                quote!(#literal::Map(&[#(#entries),*]))
            }
        });
    }
}

/// An `x_validation(...)` rule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rule {
    rule: String,
    message: Option<String>,
    message_expression: Option<String>,
    reason: Option<String>,
    field_path: Option<String>,
    optional_old_self: Option<bool>,
}

/// One marker, by its Rust spelling.
#[derive(Clone, Debug, PartialEq)]
pub enum Marker {
    Maximum(f64),
    Minimum(f64),
    ExclusiveMaximum(bool),
    ExclusiveMinimum(bool),
    MultipleOf(f64),
    MaxLength(i64),
    MinLength(i64),
    Pattern(String),
    MaxItems(i64),
    MinItems(i64),
    UniqueItems(bool),
    MaxProperties(i64),
    MinProperties(i64),
    Enum(Vec<Literal>),
    Format(String),
    Type(String),
    PreserveUnknownFields,
    EmbeddedResource,
    IntOrString,
    XValidation(Rule),
    AtMostOneOf(Vec<String>),
    ExactlyOneOf(Vec<String>),
    AtLeastOneOf(Vec<String>),
    Nullable,
    Default(Literal),
    DefaultJson(Literal),
    Example(Literal),
    Title(String),
    ExternalDocs { url: String, description: String },
    ListType(String),
    ListMapKey(String),
    MapType(String),
    StructType(String),
}

impl Marker {
    /// Markers whose preconditions depend on the node's type, checked in `const` items.
    fn needs_type(&self) -> bool {
        matches!(
            self,
            Marker::Maximum(_)
                | Marker::Minimum(_)
                | Marker::ExclusiveMaximum(_)
                | Marker::ExclusiveMinimum(_)
                | Marker::MultipleOf(_)
                | Marker::MaxLength(_)
                | Marker::MinLength(_)
                | Marker::Pattern(_)
                | Marker::MaxItems(_)
                | Marker::MinItems(_)
                | Marker::UniqueItems(_)
                | Marker::MaxProperties(_)
                | Marker::MinProperties(_)
                | Marker::Default(_)
                | Marker::DefaultJson(_)
                | Marker::ListType(_)
                | Marker::ListMapKey(_)
                | Marker::MapType(_)
                | Marker::StructType(_)
        )
    }

    /// Markers that change what the others are checked against.
    fn changes_type(&self) -> bool {
        matches!(
            self,
            Marker::Type(_) | Marker::IntOrString | Marker::Enum(_) | Marker::PreserveUnknownFields
        )
    }
}

impl ToTokens for Marker {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let m = quote!(::kubebuilder::schema::Marker);
        tokens.extend(match self {
            Marker::Maximum(v) => quote!(#m::Maximum(#v)),
            Marker::Minimum(v) => quote!(#m::Minimum(#v)),
            Marker::ExclusiveMaximum(b) => quote!(#m::ExclusiveMaximum(#b)),
            Marker::ExclusiveMinimum(b) => quote!(#m::ExclusiveMinimum(#b)),
            Marker::MultipleOf(v) => quote!(#m::MultipleOf(#v)),
            Marker::MaxLength(n) => quote!(#m::MaxLength(#n)),
            Marker::MinLength(n) => quote!(#m::MinLength(#n)),
            Marker::Pattern(p) => quote!(#m::Pattern(#p)),
            Marker::MaxItems(n) => quote!(#m::MaxItems(#n)),
            Marker::MinItems(n) => quote!(#m::MinItems(#n)),
            Marker::UniqueItems(b) => quote!(#m::UniqueItems(#b)),
            Marker::MaxProperties(n) => quote!(#m::MaxProperties(#n)),
            Marker::MinProperties(n) => quote!(#m::MinProperties(#n)),
            Marker::Enum(values) => quote!(#m::Enum(&[#(#values),*])),
            Marker::Format(f) => quote!(#m::Format(#f)),
            Marker::Type(t) => quote!(#m::Type(#t)),
            Marker::PreserveUnknownFields => quote!(#m::PreserveUnknownFields),
            Marker::EmbeddedResource => quote!(#m::EmbeddedResource),
            Marker::IntOrString => quote!(#m::IntOrString),
            Marker::XValidation(rule) => {
                let text = &rule.rule;
                let message = optional(rule.message.as_ref());
                let message_expression = optional(rule.message_expression.as_ref());
                let reason = optional(rule.reason.as_ref());
                let field_path = optional(rule.field_path.as_ref());
                let optional_old_self = optional(rule.optional_old_self);
                quote!(#m::XValidation(::kubebuilder::schema::Rule {
                    rule: #text,
                    message: #message,
                    message_expression: #message_expression,
                    reason: #reason,
                    field_path: #field_path,
                    optional_old_self: #optional_old_self,
                }))
            }
            Marker::AtMostOneOf(fields) => quote!(#m::AtMostOneOf(&[#(#fields),*])),
            Marker::ExactlyOneOf(fields) => quote!(#m::ExactlyOneOf(&[#(#fields),*])),
            Marker::AtLeastOneOf(fields) => quote!(#m::AtLeastOneOf(&[#(#fields),*])),
            Marker::Nullable => quote!(#m::Nullable),
            Marker::Default(value) => quote!(#m::Default(#value)),
            Marker::DefaultJson(value) => quote!(#m::DefaultJson(#value)),
            Marker::Example(value) => quote!(#m::Example(#value)),
            Marker::Title(t) => quote!(#m::Title(#t)),
            Marker::ExternalDocs { url, description } => {
                quote!(#m::ExternalDocs { url: #url, description: #description })
            }
            Marker::ListType(t) => quote!(#m::ListType(#t)),
            Marker::ListMapKey(k) => quote!(#m::ListMapKey(#k)),
            Marker::MapType(t) => quote!(#m::MapType(#t)),
            Marker::StructType(t) => quote!(#m::StructType(#t)),
        });
    }
}

/// A marker with the name it was written as and where.
#[derive(Clone, Debug)]
pub struct Spanned {
    pub marker: Marker,
    pub name: String,
    pub span: Span,
}

/// Which of the required/optional markers a field carries.
#[derive(Clone, Copy, Default)]
struct Requirement {
    validation_optional: bool,
    validation_required: bool,
    optional: bool,
    required: bool,
}

/// The markers of one node: a field, or a type.
#[derive(Default)]
pub struct Markers {
    pub own: Vec<Spanned>,
    pub items: Vec<Spanned>,
    requirement: Requirement,
    pub allow_dangerous_types: bool,
    pub schemaless: bool,
    /// Where `required` (any spelling) was written, for errors about it.
    pub required_span: Option<Span>,
}

impl Markers {
    /// controller-gen's precedence: `validation(optional)`, `validation(required)`,
    /// `optional`, `required`, then the default (required unless the field is an
    /// `Option`, flattened, or skipped when empty).
    pub fn is_required(&self, by_default: bool) -> bool {
        let r = self.requirement;
        if r.validation_optional {
            false
        } else if r.validation_required {
            true
        } else if r.optional {
            false
        } else if r.required {
            true
        } else {
            by_default
        }
    }

    /// Explicitly optional (so a non-`Option` field is skipped when empty).
    pub fn is_marked_optional(&self) -> bool {
        !self.is_required(true)
    }

    pub fn one_of_groups(&self) -> impl Iterator<Item = (&Spanned, &[String])> {
        self.own.iter().filter_map(|m| match &m.marker {
            Marker::AtMostOneOf(fields)
            | Marker::ExactlyOneOf(fields)
            | Marker::AtLeastOneOf(fields) => Some((m, fields.as_slice())),
            _ => None,
        })
    }

    /// `&[Marker, ...]` of the node's own markers and of its `items(...)` markers.
    pub fn render(&self) -> (TokenStream, TokenStream) {
        let own = self.own.iter().map(|m| &m.marker);
        let items = self.items.iter().map(|m| &m.marker);
        (quote!(&[#(#own),*]), quote!(&[#(#items),*]))
    }

    /// The type-changing markers of the node, as `&[Marker, ...]`.
    pub fn type_changers(&self) -> TokenStream {
        let changers = self
            .own
            .iter()
            .filter(|m| m.marker.changes_type())
            .map(|m| &m.marker);
        quote!(&[#(#changers),*])
    }

    /// `const` items checking every marker that depends on the node's type against
    /// `shape` (an expression of type `Shape`, before this node's markers).
    pub fn checks(&self, shape: &TokenStream) -> TokenStream {
        let changers = self.type_changers();
        let node_shape = quote!(::kubebuilder::schema::Shape::with_markers(#shape, #changers));
        let own = self
            .own
            .iter()
            .filter(|m| m.marker.needs_type())
            .map(|m| check(m, quote!(::kubebuilder::schema::check_marker), &node_shape));
        let items = self
            .items
            .iter()
            .filter(|m| m.marker.needs_type())
            .map(|m| {
                check(
                    m,
                    quote!(::kubebuilder::schema::check_items_marker),
                    &node_shape,
                )
            });
        own.chain(items).collect()
    }
}

fn check(marker: &Spanned, function: TokenStream, shape: &TokenStream) -> TokenStream {
    let Spanned { marker, name, span } = marker;
    // Spanned on the marker, so the compile error points at it.
    quote_spanned! {*span=>
        const _: () = if let ::core::option::Option::Some(error) = #function(&#shape, #name, &#marker) {
            ::core::panic!("{}", error.as_str())
        };
    }
}

const TOP_LEVEL: &[&str] = &[
    "validation",
    "optional",
    "required",
    "nullable",
    "default",
    "default_json",
    "example",
    "title",
    "external_docs",
    "list_type",
    "list_map_key",
    "map_type",
    "struct_type",
    "pruning",
    "allow_dangerous_types",
];

const FIELD_ONLY: &[&str] = &[
    "optional",
    "required",
    "nullable",
    "default",
    "default_json",
    "example",
    "embedded_resource",
    "schemaless",
];

const TYPE_ONLY: &[&str] = &["at_most_one_of", "exactly_one_of", "at_least_one_of"];

/// The `validation(...)` family; the part before `embedded_resource` is also what
/// `items(...)` accepts.
const VALIDATION: &[&str] = &[
    "minimum",
    "maximum",
    "exclusive_minimum",
    "exclusive_maximum",
    "multiple_of",
    "min_length",
    "max_length",
    "pattern",
    "min_items",
    "max_items",
    "unique_items",
    "min_properties",
    "max_properties",
    "enum",
    "format",
    "type",
    "x_preserve_unknown_fields",
    "x_embedded_resource",
    "x_int_or_string",
    "x_validation",
    "embedded_resource",
    "schemaless",
    "optional",
    "required",
    "at_most_one_of",
    "exactly_one_of",
    "at_least_one_of",
    "items",
];

/// What `items(...)` accepts: `VALIDATION` up to `embedded_resource`.
const ITEMS: &[&str] = VALIDATION.split_at(ITEMS_LEN).0;
const ITEMS_LEN: usize = 20;

/// Rejects a marker placed on the wrong kind of item; true when it may be used here.
fn allowed_here(arg: &Arg, target: Target, errors: &mut Errors) -> bool {
    let key = arg.key();
    match target {
        Target::Type if FIELD_ONLY.contains(&key.as_str()) => {
            errors.push(
                arg.span(),
                format!("`{key}` applies to fields; put it in `#[kubebuilder(...)]` on the field"),
            );
            false
        }
        Target::Field if TYPE_ONLY.contains(&key.as_str()) => {
            errors.push(
                arg.span(),
                format!("`{key}` applies to types; put it in `#[kubebuilder::schema(...)]` on the struct"),
            );
            false
        }
        _ => true,
    }
}

/// Parses the arguments of `#[kubebuilder(...)]` (a field) or `#[kubebuilder::schema(...)]`
/// (a type).
pub fn parse(args: &[Arg], target: Target, errors: &mut Errors) -> Markers {
    let mut markers = Markers::default();
    for arg in args {
        if !TOP_LEVEL.contains(&arg.key().as_str()) {
            errors.unknown(&arg.name, "argument", TOP_LEVEL);
            continue;
        }
        if !allowed_here(arg, target, errors) {
            continue;
        }
        let marker = match arg.key().as_str() {
            "validation" => {
                if let Some(nested) = arg.nested(errors) {
                    parse_validation(nested, target, &mut markers, errors);
                }
                None
            }
            "optional" => {
                markers.requirement.optional |= arg.flag(errors);
                None
            }
            "required" => {
                markers.requirement.required |= arg.flag(errors);
                markers.required_span = Some(arg.span());
                None
            }
            "allow_dangerous_types" => {
                markers.allow_dangerous_types |= arg.flag(errors);
                None
            }
            "nullable" => arg.flag(errors).then_some(Marker::Nullable),
            "default" => arg
                .any(errors)
                .map(|v| Marker::Default(Literal::from_value(v))),
            "default_json" => arg
                .string(errors)
                .and_then(|json| parse_json(&json, errors))
                .map(Marker::DefaultJson),
            "example" => arg
                .any(errors)
                .map(|v| Marker::Example(Literal::from_value(v))),
            "title" => arg.string(errors).map(|t| Marker::Title(t.value())),
            "external_docs" => arg
                .nested(errors)
                .and_then(|nested| parse_external_docs(arg, nested, errors)),
            "list_type" => one_of(arg, &["map", "set", "atomic"], errors).map(Marker::ListType),
            "list_map_key" => arg.string(errors).map(|k| Marker::ListMapKey(k.value())),
            "map_type" => one_of(arg, &["granular", "atomic"], errors).map(Marker::MapType),
            "struct_type" => one_of(arg, &["granular", "atomic"], errors).map(Marker::StructType),
            "pruning" => arg
                .nested(errors)
                .and_then(|nested| parse_pruning(nested, errors)),
            _ => unreachable!("every name of TOP_LEVEL is handled"),
        };
        if let Some(marker) = marker {
            markers.own.push(Spanned {
                marker,
                name: arg.key(),
                span: arg.span(),
            });
        }
    }
    check_list_map_keys(&markers, errors);
    markers
}

/// `pruning(preserve_unknown_fields)`.
fn parse_pruning(args: &[Arg], errors: &mut Errors) -> Option<Marker> {
    let mut marker = None;
    for inner in args {
        if inner.key() == "preserve_unknown_fields" {
            if inner.flag(errors) {
                marker = Some(Marker::PreserveUnknownFields);
            }
        } else {
            errors.unknown_in(
                &inner.name,
                "argument",
                "pruning",
                &["preserve_unknown_fields"],
            );
        }
    }
    marker
}

/// `validation(...)`, and `items(...)` inside it.
fn parse_validation(args: &[Arg], target: Target, markers: &mut Markers, errors: &mut Errors) {
    for arg in args {
        let key = arg.key();
        if !VALIDATION.contains(&key.as_str()) {
            errors.unknown_in(&arg.name, "argument", "validation", VALIDATION);
            continue;
        }
        if !allowed_here(arg, target, errors) {
            continue;
        }
        match key.as_str() {
            "items" => {
                if let Some(nested) = arg.nested(errors) {
                    for inner in nested {
                        if !ITEMS.contains(&inner.key().as_str()) {
                            errors.unknown_in(&inner.name, "argument", "items", ITEMS);
                        } else if let Some(marker) = parse_schema_marker(inner, errors) {
                            markers.items.push(Spanned {
                                marker,
                                name: inner.key(),
                                span: inner.span(),
                            });
                        }
                    }
                }
            }
            "optional" => markers.requirement.validation_optional |= arg.flag(errors),
            "required" => {
                markers.requirement.validation_required |= arg.flag(errors);
                markers.required_span = Some(arg.span());
            }
            "schemaless" => markers.schemaless |= arg.flag(errors),
            _ => {
                if let Some(marker) = parse_schema_marker(arg, errors) {
                    markers.own.push(Spanned {
                        marker,
                        name: key,
                        span: arg.span(),
                    });
                }
            }
        }
    }
}

/// One marker of the validation family (also valid inside `items(...)`), or a OneOf marker.
fn parse_schema_marker(arg: &Arg, errors: &mut Errors) -> Option<Marker> {
    Some(match arg.key().as_str() {
        "minimum" => Marker::Minimum(arg.number(errors)?),
        "maximum" => Marker::Maximum(arg.number(errors)?),
        "exclusive_minimum" => Marker::ExclusiveMinimum(arg.boolean(errors)?),
        "exclusive_maximum" => Marker::ExclusiveMaximum(arg.boolean(errors)?),
        "multiple_of" => Marker::MultipleOf(arg.number(errors)?),
        "min_length" => Marker::MinLength(arg.int(errors)?),
        "max_length" => Marker::MaxLength(arg.int(errors)?),
        "pattern" => Marker::Pattern(parse_pattern(&arg.string(errors)?, errors)?),
        "min_items" => Marker::MinItems(arg.int(errors)?),
        "max_items" => Marker::MaxItems(arg.int(errors)?),
        "unique_items" => {
            let unique = arg.boolean(errors)?;
            if unique {
                // Structural schemas forbid it; the CRD would be refused.
                errors.push(
                    arg.span(),
                    "the apiserver refuses `uniqueItems: true` in CRDs; use `list_type = \"set\"` instead",
                );
                return None;
            }
            Marker::UniqueItems(unique)
        }
        "min_properties" => Marker::MinProperties(arg.int(errors)?),
        "max_properties" => Marker::MaxProperties(arg.int(errors)?),
        "enum" => match arg.any(errors)? {
            Value::List(items, _) => Marker::Enum(items.iter().map(Literal::from_value).collect()),
            other => {
                errors.push(
                    other.span(),
                    "`enum` expects a list of values: `enum = [\"a\", \"b\"]`",
                );
                return None;
            }
        },
        "format" => Marker::Format(arg.string(errors)?.value()),
        "type" => Marker::Type(one_of(
            arg,
            &["array", "boolean", "integer", "number", "object", "string"],
            errors,
        )?),
        "x_preserve_unknown_fields" => arg.flag(errors).then_some(Marker::PreserveUnknownFields)?,
        "x_embedded_resource" | "embedded_resource" => {
            arg.flag(errors).then_some(Marker::EmbeddedResource)?
        }
        "x_int_or_string" => arg.flag(errors).then_some(Marker::IntOrString)?,
        "x_validation" => Marker::XValidation(parse_rule(arg, arg.nested(errors)?, errors)?),
        "at_most_one_of" => Marker::AtMostOneOf(one_of_fields(arg, errors)?),
        "exactly_one_of" => Marker::ExactlyOneOf(one_of_fields(arg, errors)?),
        "at_least_one_of" => Marker::AtLeastOneOf(one_of_fields(arg, errors)?),
        _ => unreachable!("callers pass names of the validation family"),
    })
}

fn one_of(arg: &Arg, allowed: &[&str], errors: &mut Errors) -> Option<String> {
    let value = arg.string(errors)?;
    if allowed.contains(&value.value().as_str()) {
        Some(value.value())
    } else {
        let quoted: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
        errors.push(
            value.span(),
            format!("`{}` must be one of {}", arg.name, quoted.join(", ")),
        );
        None
    }
}

/// The pattern must be a regular expression the apiserver (Go's RE2) can compile; RE2
/// and the `regex` crate share their syntax.
fn parse_pattern(pattern: &LitStr, errors: &mut Errors) -> Option<String> {
    let text = pattern.value();
    match regex_syntax::Parser::new().parse(&text) {
        Ok(_) => Some(text),
        Err(error) => {
            let reason = match &error {
                regex_syntax::Error::Parse(error) => error.kind().to_string(),
                regex_syntax::Error::Translate(error) => error.kind().to_string(),
                other => other.to_string(),
            };
            errors.push(
                pattern.span(),
                format!("invalid regular expression in `pattern`: {reason}"),
            );
            None
        }
    }
}

fn parse_json(json: &LitStr, errors: &mut Errors) -> Option<Literal> {
    let text = json.value();
    if text.trim_start().starts_with("ref(") {
        errors.push(
            json.span(),
            "`default_json` takes JSON; `ref(...)` defaults are not supported (controller-gen ignores them)",
        );
        return None;
    }
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) => Some(Literal::from_json(&value)),
        Err(error) => {
            errors.push(
                json.span(),
                format!("`default_json` is not valid JSON: {error}"),
            );
            None
        }
    }
}

fn parse_external_docs(arg: &Arg, args: &[Arg], errors: &mut Errors) -> Option<Marker> {
    let mut url = None;
    let mut description = String::new();
    for inner in args {
        match inner.key().as_str() {
            "url" => url = inner.string(errors),
            "description" => description = inner.string(errors)?.value(),
            _ => errors.unknown_in(
                &inner.name,
                "argument",
                "external_docs",
                &["url", "description"],
            ),
        }
    }
    let Some(url) = url else {
        errors.push(arg.span(), "`external_docs` needs `url = \"...\"`");
        return None;
    };
    // Go's url.ParseRequestURI: an absolute URI (with a scheme) or an absolute path.
    let text = url.value();
    let scheme_end = text.find(':').unwrap_or(0);
    let has_scheme = scheme_end > 0
        && text[..scheme_end].starts_with(|c: char| c.is_ascii_alphabetic())
        && text[..scheme_end]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !has_scheme && !text.starts_with('/') || text.contains(char::is_whitespace) {
        errors.push(
            url.span(),
            format!("invalid url \"{text}\" in `external_docs`: expected an absolute URL or path"),
        );
        return None;
    }
    Some(Marker::ExternalDocs {
        url: text,
        description,
    })
}

fn parse_rule(arg: &Arg, args: &[Arg], errors: &mut Errors) -> Option<Rule> {
    const KNOWN: &[&str] = &[
        "rule",
        "message",
        "message_expression",
        "reason",
        "field_path",
        "optional_old_self",
    ];
    const REASONS: &[&str] = &[
        "FieldValueRequired",
        "FieldValueInvalid",
        "FieldValueForbidden",
        "FieldValueDuplicate",
    ];
    let mut rule = Rule::default();
    let mut has_rule = false;
    for inner in args {
        let string = |errors: &mut Errors| inner.string(errors).map(|s| s.value());
        match inner.key().as_str() {
            "rule" => {
                if let Some(text) = string(errors) {
                    rule.rule = text;
                    has_rule = true;
                }
            }
            "message" => rule.message = string(errors),
            "message_expression" => rule.message_expression = string(errors),
            "reason" => {
                if let Some(reason) = inner.string(errors) {
                    if REASONS.contains(&reason.value().as_str()) {
                        rule.reason = Some(reason.value());
                    } else {
                        errors.push(
                            reason.span(),
                            format!(
                                "invalid reason {}, valid values are FieldValueRequired, FieldValueInvalid, FieldValueForbidden and FieldValueDuplicate",
                                reason.value()
                            ),
                        );
                    }
                }
            }
            "field_path" => rule.field_path = string(errors),
            "optional_old_self" => rule.optional_old_self = inner.boolean(errors),
            _ => errors.unknown_in(&inner.name, "argument", "x_validation", KNOWN),
        }
    }
    if !has_rule {
        errors.push(arg.span(), "`x_validation` needs `rule = \"...\"`");
        return None;
    }
    Some(rule)
}

fn one_of_fields(arg: &Arg, errors: &mut Errors) -> Option<Vec<String>> {
    let fields = arg.strings(errors)?;
    let nested: Vec<String> = fields
        .iter()
        .map(LitStr::value)
        .filter(|f| f.contains('.'))
        .collect();
    if !nested.is_empty() {
        errors.push(
            arg.span(),
            format!(
                "`{}` cannot reference nested fields: {}",
                arg.name,
                nested.join(",")
            ),
        );
        return None;
    }
    Some(fields.iter().map(LitStr::value).collect())
}

/// controller-gen: `listMapKey` needs `listType=map` on the same node.
fn check_list_map_keys(markers: &Markers, errors: &mut Errors) {
    let is_map_list = markers
        .own
        .iter()
        .any(|m| m.marker == Marker::ListType("map".into()));
    for marker in &markers.own {
        if matches!(marker.marker, Marker::ListMapKey(_)) && !is_map_list {
            errors.push(
                marker.span,
                "`list_map_key` needs `list_type = \"map\"` on the same field or type",
            );
        }
    }
}

#[cfg(test)]
mod tests;
