//! The schema markers of `#[kubebuilder(...)]` (a field), `#[kubebuilder::schema(...)]` (a
//! type) and the `validation(...)` of `#[kubebuilder::resource]` (the root object), read with
//! the rows of `kubebuilder-markers` (`definitions.rs`): each value is parsed by its row's
//! value kind and rendered as the `kubebuilder::schema::Marker` it is, and the markers whose
//! precondition needs the node's type get a `const` check (see
//! `kubebuilder::schema::check_marker`).

use kubebuilder_model::schema::{Docs, Kind, Literal, Rule, Value};
use kubebuilder_model::{Text, Texts};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::LitStr;

use crate::args::{self, Arg, Argument, Errors, Reader, Readers};
pub use crate::definitions::Place;
use crate::definitions::{DEFINITIONS, Definition, Directive, Group, Role};
use crate::tokens::marker_value;

/// A marker as written: its name, its row's `Marker` variant and value, and where.
#[derive(Clone, Debug)]
pub struct Spanned {
    /// The name written (`minimum`).
    pub name: &'static str,
    /// The variant of `kubebuilder::schema::Marker` (`Minimum`).
    pub variant: &'static str,
    /// Whether its precondition depends on the node's type (a `const` check).
    pub checked: bool,
    /// Its value.
    pub value: Value,
    /// Where it was written.
    pub span: Span,
}

impl Spanned {
    /// Whether this is the marker `variant` of `kubebuilder::schema::Marker`.
    pub fn is(&self, variant: &str) -> bool {
        self.variant == variant
    }

    /// `::kubebuilder::schema::Marker::<Variant>(value)`.
    pub fn tokens(&self) -> TokenStream {
        let variant = format_ident!("{}", self.variant);
        let marker = quote!(::kubebuilder::schema::Marker::#variant);
        match marker_value(&self.value) {
            Some(value) => quote!(#marker(#value)),
            None => marker,
        }
    }
}

/// Which of the required/optional markers a field carries.
#[derive(Clone, Copy, Default)]
struct Requirement {
    validation_optional: bool,
    validation_required: bool,
    optional: bool,
    required: bool,
}

/// The markers of one node: a field, a type or a root object.
#[derive(Default)]
pub struct Markers {
    /// The markers of the node itself, in the order written.
    pub own: Vec<Spanned>,
    /// The `validation(items(...))` markers, for the items of an array node.
    pub items: Vec<Spanned>,
    requirement: Requirement,
    /// `allow_dangerous_types`: floats allowed.
    pub allow_dangerous_types: bool,
    /// `schemaless`: the field's type contributes no schema.
    pub schemaless: bool,
    /// Where `custom_serde` was written.
    pub custom_serde: Option<Span>,
    /// `apply_configuration`: the type gets an apply configuration.
    pub apply_configuration: bool,
    /// Where `required` (any spelling) was written, for errors about it.
    pub required_span: Option<Span>,
    /// The deprecated arguments written: where, and the warning.
    deprecated: Vec<(Span, &'static str)>,
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

    /// The node's own marker `variant`, if written.
    pub fn find(&self, variant: &str) -> Option<&Spanned> {
        self.own.iter().find(|m| m.is(variant))
    }

    /// The OneOf markers with their field names.
    pub fn one_of_groups(&self) -> impl Iterator<Item = (&Spanned, &[Text])> {
        self.own.iter().filter_map(|m| match &m.value {
            Value::Fields(fields) => Some((m, fields.as_ref())),
            _ => None,
        })
    }

    /// `&[Marker, ...]` of the node's own markers and of its `items(...)` markers.
    pub fn render(&self) -> (TokenStream, TokenStream) {
        let own = self.own.iter().map(Spanned::tokens);
        let items = self.items.iter().map(Spanned::tokens);
        (quote!(&[#(#own),*]), quote!(&[#(#items),*]))
    }

    /// `const` items checking every marker that depends on the node's type against
    /// `shape` (an expression of type `Shape`, before this node's markers), and the
    /// warnings of the deprecated arguments.
    pub fn checks(&self, shape: &TokenStream) -> TokenStream {
        let (own, _) = self.render();
        // `with_markers` picks the markers that change the type (`type`, `enum`, ...).
        let node_shape = quote!(::kubebuilder::schema::Shape::with_markers(#shape, #own));
        let own = self.own.iter().filter(|m| m.checked).map(|m| {
            check(
                m,
                quote!(::kubebuilder::__private::schema::check_marker),
                &node_shape,
            )
        });
        let items = self.items.iter().filter(|m| m.checked).map(|m| {
            check(
                m,
                quote!(::kubebuilder::__private::schema::check_items_marker),
                &node_shape,
            )
        });
        own.chain(items).chain(self.warnings()).collect()
    }

    /// A deprecated argument is a warning at compile time: the use, spanned on the argument,
    /// of a constant marked `#[deprecated]` with the argument's warning.
    fn warnings(&self) -> impl Iterator<Item = TokenStream> + '_ {
        self.deprecated.iter().map(|(span, warning)| {
            quote_spanned! {*span=>
                const _: () = {
                    #[deprecated(note = #warning)]
                    #[allow(non_upper_case_globals)]
                    const deprecated_argument: () = ();
                    deprecated_argument
                };
            }
        })
    }

    fn apply(&mut self, directive: Directive, arg: &Arg, errors: &mut Errors) {
        if !arg.flag(errors) {
            return;
        }
        let requirement = &mut self.requirement;
        match directive {
            Directive::Optional => requirement.optional = true,
            Directive::Required => requirement.required = true,
            Directive::ValidationOptional => requirement.validation_optional = true,
            Directive::ValidationRequired => requirement.validation_required = true,
            Directive::Schemaless => self.schemaless = true,
            Directive::AllowDangerousTypes => self.allow_dangerous_types = true,
            Directive::CustomSerde => self.custom_serde = Some(arg.span()),
            Directive::ApplyConfiguration => self.apply_configuration = true,
        }
        if matches!(
            directive,
            Directive::Required | Directive::ValidationRequired
        ) {
            self.required_span = Some(arg.span());
        }
    }
}

fn check(marker: &Spanned, function: TokenStream, shape: &TokenStream) -> TokenStream {
    let name = marker.name;
    let value = marker.tokens();
    // Spanned on the marker, so the compile error points at it.
    quote_spanned! {marker.span=>
        const _: () = if let ::core::option::Option::Some(error) = #function(&#shape, #name, &#value) {
            ::core::panic!("{}", error.as_str())
        };
    }
}

/// Parses the arguments of `#[kubebuilder(...)]` (a field) or `#[kubebuilder::schema(...)]`
/// (a type).
pub fn parse(args: &[Arg], place: Place, errors: &mut Errors) -> Markers {
    parse_list(args, Group::Top, place, errors)
}

/// Parses the argument lists of the `validation(...)` of `#[kubebuilder::resource(...)]`.
pub fn parse_root(args: &[Arg], errors: &mut Errors) -> Markers {
    parse_list(args, Group::Validation, Place::Resource, errors)
}

fn parse_list(args: &[Arg], group: Group, place: Place, errors: &mut Errors) -> Markers {
    let mut lists = Lists {
        place,
        readers: Readers::new(),
        markers: Markers::default(),
    };
    lists.read(args, group, errors);
    check_list_map_keys(&lists.markers, errors);
    lists.markers
}

/// The argument lists of one node: one reader per group, so that a marker repeated in two
/// `validation(...)` lists is found.
struct Lists {
    place: Place,
    readers: Readers<Group, &'static Definition>,
    markers: Markers,
}

impl Lists {
    fn read(&mut self, args: &[Arg], group: Group, errors: &mut Errors) {
        for arg in args {
            let reader = self.readers.get(group, || new_reader(group));
            if !reader.knows(&arg.key())
                && let Some(list) = written_elsewhere(&arg.key(), group, self.place)
            {
                errors.push(
                    arg.span(),
                    format!(
                        "`{}` is not an argument of {}: write it {list}",
                        arg.key(),
                        shown(group)
                    ),
                );
                continue;
            }
            let Some(definition) = reader.accept(arg, errors) else {
                continue;
            };
            if group != Group::Items && !definition.stands_at(self.place) {
                errors.push(arg.span(), misplaced(definition));
                continue;
            }
            if let Some(warning) = definition.deprecated {
                self.markers.deprecated.push((arg.span(), warning));
            }
            match definition.role {
                Role::Group(inner) => {
                    if let Some(nested) = arg.nested(errors) {
                        self.read(nested, inner, errors);
                    }
                }
                Role::Directive(directive) => self.markers.apply(directive, arg, errors),
                Role::Marker {
                    variant,
                    value,
                    choices,
                    checked,
                } => {
                    if let Some(value) = parse_value(arg, value, choices, errors) {
                        if variant == "NonEmpty" {
                            // `+k8s:required` requires the field as `+required` does.
                            self.markers.requirement.required = true;
                            self.markers.required_span = Some(arg.span());
                        }
                        let marker = Spanned {
                            name: definition.name,
                            variant,
                            checked,
                            value,
                            span: arg.span(),
                        };
                        if group == Group::Items {
                            self.markers.items.push(marker);
                        } else {
                            self.markers.own.push(marker);
                        }
                    }
                }
            }
        }
    }
}

/// Where a name unknown in `group` is written instead, if it is a row that stands at
/// `place` in another list.
fn written_elsewhere(name: &str, group: Group, place: Place) -> Option<String> {
    let definition = DEFINITIONS.iter().find(|d| {
        d.name == name
            && d.group != group
            && !matches!(d.role, Role::Group(_))
            && (d.stands_at(place) || d.group == Group::Validation)
    })?;
    Some(match definition.group {
        Group::Top => format!("beside {}", shown(group)),
        other => format!("in {}", shown(other)),
    })
}

/// `validation(...)`, or "the attribute" for the top-level list.
fn shown(group: Group) -> String {
    DEFINITIONS
        .iter()
        .find(|d| matches!(d.role, Role::Group(g) if g == group))
        .map_or_else(
            || "the attribute".to_owned(),
            |d| format!("`{}(...)`", d.name),
        )
}

/// The rows a list accepts: its group's, and in `items(...)` the validation rows that stand
/// there.
fn new_reader(group: Group) -> Reader<&'static Definition> {
    let within = match group {
        Group::Top => "",
        _ => DEFINITIONS
            .iter()
            .find(|d| matches!(d.role, Role::Group(g) if g == group))
            .map_or("", |d| d.name),
    };
    let rows = DEFINITIONS.iter().filter(move |d| match group {
        Group::Items => d.group == Group::Validation && d.stands_at(Place::Items),
        _ => d.group == group,
    });
    Reader::new(rows, within, "argument")
}

fn misplaced(definition: &Definition) -> String {
    let name = definition.name;
    if definition.stands_at(Place::Field) {
        format!("`{name}` applies to fields; put it in `#[kubebuilder(...)]` on the field")
    } else {
        format!("`{name}` applies to types; put it in `#[kubebuilder::schema(...)]` on the struct")
    }
}

/// Reads an argument's value as its row's value kind.
fn parse_value(arg: &Arg, kind: Kind, choices: &[&str], errors: &mut Errors) -> Option<Value> {
    let value = match kind {
        Kind::Flag => arg.flag(errors).then_some(Value::Flag)?,
        Kind::Bool => Value::Bool(arg.boolean(errors)?),
        Kind::Number => Value::Number(arg.number(errors)?),
        Kind::Integer => Value::Integer(arg.int(errors)?),
        Kind::String => Value::String(arg.string(errors)?.value().into()),
        Kind::Choice => Value::Choice(one_of(arg, choices, errors)?.into()),
        Kind::Pattern => Value::Pattern(parse_pattern(&arg.string(errors)?, errors)?.into()),
        Kind::Literal => Value::Literal(literal(arg.any(errors)?)),
        Kind::Json => Value::Json(parse_json(&arg.string(errors)?, errors)?),
        Kind::Literals => Value::Literals(parse_literals(arg, errors)?.into()),
        Kind::Rule => Value::Rule(parse_rule(arg, arg.nested(errors)?, errors)?),
        Kind::Fields => Value::Fields(one_of_fields(arg, errors)?),
        Kind::Docs => Value::Docs(parse_external_docs(arg, arg.nested(errors)?, errors)?),
    };
    // Structural schemas forbid it; the CRD would be refused.
    if arg.key() == "unique_items" && matches!(value, Value::Bool(true)) {
        errors.push(
            arg.span(),
            "the apiserver refuses `uniqueItems: true` in CRDs; use `list_type = \"set\"` instead",
        );
        return None;
    }
    Some(value)
}

/// A literal argument value.
fn literal(value: &args::Value) -> Literal {
    match value {
        args::Value::Str(lit) => Literal::String(lit.value().into()),
        args::Value::Int(i, _) => Literal::Int(*i),
        args::Value::Float(f, _) => Literal::Float(*f),
        args::Value::Bool(b, _) => Literal::Bool(*b),
        args::Value::List(items, _) => Literal::List(items.iter().map(literal).collect()),
        args::Value::Map(entries, _) => Literal::Map(
            entries
                .iter()
                .map(|(key, value)| (key.value().into(), literal(value)))
                .collect(),
        ),
        // Refused by `Arg::any` before this is called.
        args::Value::Path(_) => Literal::Null,
    }
}

/// A JSON value as a literal.
fn json_literal(value: &serde_json::Value) -> Literal {
    use serde_json::Value as Json;
    match value {
        Json::Null => Literal::Null,
        Json::Bool(b) => Literal::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Literal::Int(i),
            None => Literal::Float(n.as_f64().unwrap_or_default()),
        },
        Json::String(s) => Literal::String(s.clone().into()),
        Json::Array(items) => Literal::List(items.iter().map(json_literal).collect()),
        Json::Object(entries) => Literal::Map(
            entries
                .iter()
                .map(|(key, value)| (key.clone().into(), json_literal(value)))
                .collect(),
        ),
    }
}

/// `enum = [...]`.
fn parse_literals(arg: &Arg, errors: &mut Errors) -> Option<Vec<Literal>> {
    match arg.any(errors)? {
        args::Value::List(items, _) => Some(items.iter().map(literal).collect()),
        other => {
            errors.push(
                other.span(),
                "`enum` expects a list of values: `enum = [\"a\", \"b\"]`",
            );
            None
        }
    }
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
        Ok(value) => Some(json_literal(&value)),
        Err(error) => {
            errors.push(
                json.span(),
                format!("`default_json` is not valid JSON: {error}"),
            );
            None
        }
    }
}

#[derive(Default)]
struct ExternalDocs {
    url: Option<LitStr>,
    description: Option<LitStr>,
}

const EXTERNAL_DOCS: &[Argument<ExternalDocs>] = &[
    Argument::once("url", |arg, docs: &mut ExternalDocs, errors| {
        docs.url = arg.string(errors)
    }),
    Argument::once("description", |arg, docs: &mut ExternalDocs, errors| {
        docs.description = arg.string(errors)
    }),
];

fn parse_external_docs(arg: &Arg, args: &[Arg], errors: &mut Errors) -> Option<Docs> {
    let mut docs = ExternalDocs::default();
    let mentioned = args::read(args, EXTERNAL_DOCS, "external_docs", &mut docs, errors);
    let Some(url) = docs.url else {
        if !mentioned.contains(&"url") {
            errors.push(arg.span(), "`external_docs` needs `url = \"...\"`");
        }
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
    let description = docs.description.map(|d| d.value()).unwrap_or_default();
    Some(Docs {
        url: text.into(),
        description: description.into(),
    })
}

/// The arguments of `x_validation(...)` as read, `rule` not yet required.
#[derive(Default)]
struct RuleArgs {
    rule: Option<String>,
    message: Option<String>,
    message_expression: Option<String>,
    reason: Option<String>,
    field_path: Option<String>,
    optional_old_self: Option<bool>,
}

const RULE: &[Argument<RuleArgs>] = &[
    Argument::once("rule", |arg, rule: &mut RuleArgs, errors| {
        rule.rule = text(arg, errors)
    }),
    Argument::once("message", |arg, rule: &mut RuleArgs, errors| {
        rule.message = text(arg, errors)
    }),
    Argument::once("message_expression", |arg, rule: &mut RuleArgs, errors| {
        rule.message_expression = text(arg, errors)
    }),
    Argument::once("reason", |arg, rule: &mut RuleArgs, errors| {
        rule.reason = reason(arg, errors)
    }),
    Argument::once("field_path", |arg, rule: &mut RuleArgs, errors| {
        rule.field_path = text(arg, errors)
    }),
    Argument::once("optional_old_self", |arg, rule: &mut RuleArgs, errors| {
        rule.optional_old_self = arg.boolean(errors)
    }),
];

fn text(arg: &Arg, errors: &mut Errors) -> Option<String> {
    arg.string(errors).map(|s| s.value())
}

fn reason(arg: &Arg, errors: &mut Errors) -> Option<String> {
    const REASONS: &[&str] = &[
        "FieldValueRequired",
        "FieldValueInvalid",
        "FieldValueForbidden",
        "FieldValueDuplicate",
    ];
    let reason = arg.string(errors)?;
    if REASONS.contains(&reason.value().as_str()) {
        return Some(reason.value());
    }
    errors.push(
        reason.span(),
        format!(
            "invalid reason {}, valid values are FieldValueRequired, FieldValueInvalid, FieldValueForbidden and FieldValueDuplicate",
            reason.value()
        ),
    );
    None
}

fn parse_rule(arg: &Arg, args: &[Arg], errors: &mut Errors) -> Option<Rule> {
    let mut read = RuleArgs::default();
    let mentioned = args::read(args, RULE, "x_validation", &mut read, errors);
    let Some(rule) = read.rule else {
        if !mentioned.contains(&"rule") {
            errors.push(arg.span(), "`x_validation` needs `rule = \"...\"`");
        }
        return None;
    };
    Some(Rule {
        rule: rule.into(),
        message: read.message.map(Text::from),
        message_expression: read.message_expression.map(Text::from),
        reason: read.reason.map(Text::from),
        field_path: read.field_path.map(Text::from),
        optional_old_self: read.optional_old_self,
    })
}

fn one_of_fields(arg: &Arg, errors: &mut Errors) -> Option<Texts> {
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
    Some(kubebuilder_model::texts(fields.iter().map(LitStr::value)))
}

/// controller-gen: `listMapKey` needs `listType=map` on the same node.
fn check_list_map_keys(markers: &Markers, errors: &mut Errors) {
    let is_map_list = markers
        .own
        .iter()
        .any(|m| m.is("ListType") && matches!(&m.value, Value::Choice(t) if t == "map"));
    for marker in &markers.own {
        if marker.is("ListMapKey") && !is_map_list {
            errors.push(
                marker.span,
                "`list_map_key` needs `list_type = \"map\"` on the same field or type",
            );
        }
    }
}

#[cfg(test)]
mod tests;
