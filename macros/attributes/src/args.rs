//! The argument grammar every attribute of this crate shares, parsed once into a tree:
//! `name`, `name = value` and `name(args...)`, separated by commas. Values are string,
//! integer, float and boolean literals (with an optional leading `-` on numbers), lists
//! `[v, ...]`, maps `{"key": v, ...}` and paths (`status = CronJobStatus`). What each
//! attribute accepts is checked by its reader, with all errors collected in [`Errors`].

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Ident, LitStr, Token};

/// Errors collected while reading attributes, reported together.
#[derive(Default)]
pub struct Errors(Vec<syn::Error>);

impl Errors {
    /// Reports `message` at `span`.
    pub fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, message));
    }

    /// Reports a parse error.
    pub fn extend(&mut self, error: syn::Error) {
        self.0.push(error);
    }

    /// Nothing reported.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// An unknown name (`what`: "argument", "subresource"), inside the arguments of
    /// `within(...)` unless `within` is empty, with the closest known one suggested.
    pub fn unknown_in(&mut self, name: &Ident, what: &str, within: &str, known: &[&str]) {
        let text = name.to_string();
        let mut message = format!("unknown {what} `{text}`");
        if !within.is_empty() {
            message.push_str(&format!(" in `{within}(...)`"));
        }
        if let Some(suggestion) = closest(&text, known) {
            message.push_str(&format!("; did you mean `{suggestion}`?"));
        } else {
            message.push_str(&format!("; expected one of: {}", known.join(", ")));
        }
        self.push(name.span(), message);
    }

    /// A `compile_error!` per error, each at its span.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.0.iter().map(syn::Error::to_compile_error).collect()
    }

    /// `value` when nothing was reported, else the errors.
    pub fn into_result<T>(self, value: T) -> Result<T, Errors> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }

    /// The messages, in the order reported.
    pub fn messages(&self) -> Vec<String> {
        self.0.iter().map(ToString::to_string).collect()
    }
}

impl From<syn::Error> for Errors {
    fn from(error: syn::Error) -> Errors {
        Errors(vec![error])
    }
}

/// The known name nearest to `name`, if it is near enough to be a typo.
pub fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|candidate| (strsim::jaro_winkler(name, candidate), *candidate))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// One argument.
#[derive(Clone, Debug)]
pub struct Arg {
    pub name: Ident,
    pub value: ArgValue,
}

#[derive(Clone, Debug)]
pub enum ArgValue {
    /// `name`
    Flag,
    /// `name = value`
    Value(Value),
    /// `name(args...)`
    Nested(Vec<Arg>, Span),
}

#[derive(Clone, Debug)]
pub enum Value {
    Str(LitStr),
    Int(i64, Span),
    Float(f64, Span),
    Bool(bool, Span),
    List(Vec<Value>, Span),
    Map(Vec<(LitStr, Value)>, Span),
    Path(syn::Path),
}

impl Value {
    pub fn span(&self) -> Span {
        match self {
            Value::Str(lit) => lit.span(),
            Value::Int(_, span)
            | Value::Float(_, span)
            | Value::Bool(_, span)
            | Value::List(_, span)
            | Value::Map(_, span) => *span,
            Value::Path(path) => path.span(),
        }
    }

    fn describe(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(..) => "an integer",
            Value::Float(..) => "a number",
            Value::Bool(..) => "a boolean",
            Value::List(..) => "a list",
            Value::Map(..) => "a map",
            Value::Path(_) => "a path",
        }
    }
}

/// Parses the arguments of an attribute.
pub fn parse(tokens: TokenStream) -> syn::Result<Vec<Arg>> {
    parse_args.parse2(tokens)
}

fn parse_args(input: ParseStream) -> syn::Result<Vec<Arg>> {
    let mut args = Vec::new();
    while !input.is_empty() {
        args.push(parse_arg(input)?);
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(args)
}

fn parse_arg(input: ParseStream) -> syn::Result<Arg> {
    // Argument names may be Rust keywords (`type`, `enum`).
    let name: Ident = input.call(syn::ext::IdentExt::parse_any)?;
    let value = if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        ArgValue::Value(parse_value(input)?)
    } else if input.peek(syn::token::Paren) {
        let content;
        let parens = syn::parenthesized!(content in input);
        ArgValue::Nested(parse_args(&content)?, parens.span.join())
    } else {
        ArgValue::Flag
    };
    Ok(Arg { name, value })
}

fn parse_value(input: ParseStream) -> syn::Result<Value> {
    if input.peek(syn::token::Bracket) {
        let content;
        let brackets = syn::bracketed!(content in input);
        let mut items = Vec::new();
        while !content.is_empty() {
            items.push(parse_value(&content)?);
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        return Ok(Value::List(items, brackets.span.join()));
    }
    if input.peek(syn::token::Brace) {
        let content;
        let braces = syn::braced!(content in input);
        let mut entries = Vec::new();
        while !content.is_empty() {
            let key: LitStr = content.parse()?;
            content.parse::<Token![:]>()?;
            entries.push((key, parse_value(&content)?));
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        return Ok(Value::Map(entries, braces.span.join()));
    }
    if input.peek(Token![-]) {
        let minus = input.parse::<Token![-]>()?;
        let span = minus.span.join(input.span()).unwrap_or(minus.span);
        return match input.parse::<syn::Lit>()? {
            syn::Lit::Int(int) => Ok(Value::Int(-int.base10_parse::<i64>()?, span)),
            syn::Lit::Float(float) => Ok(Value::Float(-float.base10_parse::<f64>()?, span)),
            other => Err(syn::Error::new(other.span(), "expected a number after `-`")),
        };
    }
    if input.peek(syn::Lit) {
        return match input.parse::<syn::Lit>()? {
            syn::Lit::Str(lit) => Ok(Value::Str(lit)),
            syn::Lit::Int(int) => Ok(Value::Int(int.base10_parse()?, int.span())),
            syn::Lit::Float(float) => Ok(Value::Float(float.base10_parse()?, float.span())),
            syn::Lit::Bool(lit) => Ok(Value::Bool(lit.value, lit.span)),
            other => Err(syn::Error::new(
                other.span(),
                "expected a string, number, boolean, list `[...]` or map `{...}`",
            )),
        };
    }
    if input.peek(Ident)
        || input.peek(Token![::])
        || input.peek(Token![crate])
        || input.peek(Token![super])
    {
        return Ok(Value::Path(input.call(syn::Path::parse_mod_style)?));
    }
    Err(input.error("expected a string, number, boolean, list `[...]`, map `{...}` or path"))
}

impl Arg {
    pub fn key(&self) -> String {
        self.name.to_string()
    }

    pub fn span(&self) -> Span {
        self.name.span()
    }

    fn value(&self, errors: &mut Errors, expected: &str) -> Option<&Value> {
        match &self.value {
            ArgValue::Value(value) => Some(value),
            _ => {
                errors.push(
                    self.span(),
                    format!("`{}` expects {expected}: `{} = ...`", self.name, self.name),
                );
                None
            }
        }
    }

    fn mismatch(&self, errors: &mut Errors, value: &Value, expected: &str) {
        errors.push(
            value.span(),
            format!(
                "`{}` expects {expected}, found {}",
                self.name,
                value.describe()
            ),
        );
    }

    pub fn string(&self, errors: &mut Errors) -> Option<LitStr> {
        match self.value(errors, "a string")? {
            Value::Str(lit) => Some(lit.clone()),
            other => {
                self.mismatch(errors, other, "a string");
                None
            }
        }
    }

    pub fn int(&self, errors: &mut Errors) -> Option<i64> {
        match self.value(errors, "an integer")? {
            Value::Int(value, _) => Some(*value),
            other => {
                self.mismatch(errors, other, "an integer");
                None
            }
        }
    }

    /// An integer or a float.
    pub fn number(&self, errors: &mut Errors) -> Option<f64> {
        match self.value(errors, "a number")? {
            Value::Int(value, _) => Some(*value as f64),
            Value::Float(value, _) => Some(*value),
            other => {
                self.mismatch(errors, other, "a number");
                None
            }
        }
    }

    /// `name` alone means `true`; `name = true|false` is accepted too.
    pub fn boolean(&self, errors: &mut Errors) -> Option<bool> {
        match &self.value {
            ArgValue::Flag => Some(true),
            ArgValue::Value(Value::Bool(value, _)) => Some(*value),
            ArgValue::Value(other) => {
                self.mismatch(errors, other, "a boolean");
                None
            }
            ArgValue::Nested(_, span) => {
                errors.push(*span, format!("`{}` expects a boolean", self.name));
                None
            }
        }
    }

    /// A bare flag: `name`.
    pub fn flag(&self, errors: &mut Errors) -> bool {
        match &self.value {
            ArgValue::Flag => true,
            ArgValue::Value(value) => {
                errors.push(value.span(), format!("`{}` takes no value", self.name));
                false
            }
            ArgValue::Nested(_, span) => {
                errors.push(*span, format!("`{}` takes no arguments", self.name));
                false
            }
        }
    }

    /// A list of strings: `["a", "b"]` (a single string is accepted as a list of one).
    pub fn strings(&self, errors: &mut Errors) -> Option<Vec<LitStr>> {
        match self.value(errors, "a list of strings")? {
            Value::Str(lit) => Some(vec![lit.clone()]),
            Value::List(items, _) => {
                let mut strings = Vec::new();
                for item in items {
                    match item {
                        Value::Str(lit) => strings.push(lit.clone()),
                        other => self.mismatch(errors, other, "a list of strings"),
                    }
                }
                Some(strings)
            }
            other => {
                self.mismatch(errors, other, "a list of strings");
                None
            }
        }
    }

    pub fn path(&self, errors: &mut Errors) -> Option<syn::Path> {
        match self.value(errors, "a type path")? {
            Value::Path(path) => Some(path.clone()),
            other => {
                self.mismatch(errors, other, "a type path");
                None
            }
        }
    }

    /// Any literal value (defaults, examples, enum members).
    pub fn any(&self, errors: &mut Errors) -> Option<&Value> {
        match self.value(errors, "a value")? {
            Value::Path(path) => {
                errors.push(
                    path.span(),
                    format!(
                        "`{}` expects a literal value (string, number, boolean, list or map)",
                        self.name
                    ),
                );
                None
            }
            value => Some(value),
        }
    }

    /// `name(args...)`.
    pub fn nested(&self, errors: &mut Errors) -> Option<&[Arg]> {
        match &self.value {
            ArgValue::Nested(args, _) => Some(args),
            _ => {
                errors.push(
                    self.span(),
                    format!("`{}` expects arguments: `{}(...)`", self.name, self.name),
                );
                None
            }
        }
    }
}

/// An entry of an attribute's table of accepted arguments.
pub trait Named {
    fn name(&self) -> &'static str;
    fn repeatable(&self) -> bool;
}

/// Checks each argument of a list against its table: an unknown name is reported with the
/// closest known one, a repeated argument unless it is repeatable. One reader serves every
/// occurrence of a list (two `validation(...)` on one field count as one list).
pub struct Reader<P> {
    params: Vec<P>,
    /// The enclosing argument, for messages: `validation` in "... in `validation(...)`".
    within: &'static str,
    /// What an argument is called in messages ("argument", "subresource").
    what: &'static str,
    seen: Vec<&'static str>,
    /// The names written, known or the closest known to a misspelling: an argument that is
    /// missing but mentioned already has its error.
    pub mentioned: Vec<&'static str>,
}

impl<P: Named + Copy> Reader<P> {
    pub fn new(
        params: impl IntoIterator<Item = P>,
        within: &'static str,
        what: &'static str,
    ) -> Self {
        Reader {
            params: params.into_iter().collect(),
            within,
            what,
            seen: Vec::new(),
            mentioned: Vec::new(),
        }
    }

    /// The entry for `arg`, or `None` after reporting why there is none.
    pub fn accept(&mut self, arg: &Arg, errors: &mut Errors) -> Option<P> {
        let key = arg.key();
        let Some(param) = self.params.iter().copied().find(|p| p.name() == key) else {
            let known = self.names();
            errors.unknown_in(&arg.name, self.what, self.within, &known);
            self.mentioned.extend(closest(&key, &known));
            return None;
        };
        self.mentioned.push(param.name());
        if self.seen.contains(&param.name()) && !param.repeatable() {
            errors.push(arg.span(), format!("duplicate argument `{key}`"));
            return None;
        }
        self.seen.push(param.name());
        Some(param)
    }

    /// Whether `name` is in the table.
    pub fn knows(&self, name: &str) -> bool {
        self.params.iter().any(|p| p.name() == name)
    }

    /// The known names, in table order, once each.
    fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        for param in &self.params {
            if !names.contains(&param.name()) {
                names.push(param.name());
            }
        }
        names
    }
}

/// An argument of `#[kubebuilder::resource]`, `rbac` and `webhook`, or of a list nested in
/// one, read into the attribute's model `T`.
pub struct Argument<T: 'static> {
    pub name: &'static str,
    pub repeatable: bool,
    /// The controller-gen markers it spells.
    pub controller_gen: &'static [&'static str],
    pub read: Read<T>,
}

pub enum Read<T: 'static> {
    /// Reads the argument's value.
    Value(fn(&Arg, &mut T, &mut Errors)),
    /// `name(...)`: a list read with its own table (one reader for all its occurrences),
    /// whose entries are called the second value in messages.
    List(&'static [Argument<T>], &'static str),
}

impl<T> Argument<T> {
    /// An argument that may be given once.
    pub const fn once(name: &'static str, read: fn(&Arg, &mut T, &mut Errors)) -> Self {
        Argument {
            name,
            repeatable: false,
            controller_gen: &[],
            read: Read::Value(read),
        }
    }

    /// An argument that may be repeated.
    pub const fn repeated(name: &'static str, read: fn(&Arg, &mut T, &mut Errors)) -> Self {
        Argument {
            name,
            repeatable: true,
            controller_gen: &[],
            read: Read::Value(read),
        }
    }

    /// `name(...)`, a nested list of the arguments in `table`; it may be written more than
    /// once, each of its arguments once.
    pub const fn list(name: &'static str, table: &'static [Argument<T>]) -> Self {
        Argument::list_of(name, "argument", table)
    }

    /// [`list`](Argument::list), with its arguments called `what` in messages.
    pub const fn list_of(
        name: &'static str,
        what: &'static str,
        table: &'static [Argument<T>],
    ) -> Self {
        Argument {
            name,
            repeatable: true,
            controller_gen: &[],
            read: Read::List(table, what),
        }
    }

    /// The controller-gen markers this argument spells.
    pub const fn spells(self, controller_gen: &'static [&'static str]) -> Self {
        Argument {
            controller_gen,
            ..self
        }
    }
}

impl<T> Named for &'static Argument<T> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn repeatable(&self) -> bool {
        self.repeatable
    }
}

/// One reader per argument list of an attribute, by the list's key: a list written twice
/// (`validation(...), validation(...)`) is read as one.
pub struct Readers<K, P> {
    readers: Vec<(K, Reader<P>)>,
}

impl<K: PartialEq + Copy, P: Named + Copy> Readers<K, P> {
    pub fn new() -> Self {
        Readers {
            readers: Vec::new(),
        }
    }

    /// The reader of the list `key`, made by `new` the first time.
    pub fn get(&mut self, key: K, new: impl FnOnce() -> Reader<P>) -> &mut Reader<P> {
        let at = match self.readers.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                self.readers.push((key, new()));
                self.readers.len() - 1
            }
        };
        &mut self.readers[at].1
    }
}

/// Reads `args` with the table `arguments` into `target`; returns the names mentioned.
pub fn read<T>(
    args: &[Arg],
    arguments: &'static [Argument<T>],
    within: &'static str,
    target: &mut T,
    errors: &mut Errors,
) -> Vec<&'static str> {
    let mut readers = Readers::new();
    read_list(
        &mut readers,
        args,
        arguments,
        within,
        "argument",
        target,
        errors,
    );
    readers
        .get(within, || Reader::new(arguments, within, "argument"))
        .mentioned
        .clone()
}

fn read_list<T>(
    readers: &mut Readers<&'static str, &'static Argument<T>>,
    args: &[Arg],
    table: &'static [Argument<T>],
    within: &'static str,
    what: &'static str,
    target: &mut T,
    errors: &mut Errors,
) {
    // Entries with a name of their own ("unknown subresource `x`") need no
    // "in `subresource(...)`".
    let shown = if what == "argument" { within } else { "" };
    for arg in args {
        let reader = readers.get(within, || Reader::new(table, shown, what));
        let Some(argument) = reader.accept(arg, errors) else {
            continue;
        };
        match argument.read {
            Read::Value(read) => read(arg, target, errors),
            Read::List(inner, what) => {
                if let Some(nested) = arg.nested(errors) {
                    read_list(readers, nested, inner, argument.name, what, target, errors);
                }
            }
        }
    }
}

/// A value read from an argument, with where the argument was written.
pub struct Given<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Given<T> {
    pub fn of(arg: &Arg, value: Option<T>) -> Option<Given<T>> {
        value.map(|value| Given {
            value,
            span: arg.span(),
        })
    }
}

/// Splits the tokens of `#[name(...)]`-style attribute contents off a `syn::Attribute`.
pub fn attribute_args(attr: &syn::Attribute) -> syn::Result<Vec<Arg>> {
    match &attr.meta {
        syn::Meta::Path(_) => Ok(Vec::new()),
        syn::Meta::List(list) => parse(list.tokens.clone()),
        syn::Meta::NameValue(nv) => Err(syn::Error::new(
            nv.eq_token.span,
            format!("expected `#[{}(...)]`", attr.path().to_token_stream()),
        )),
    }
}
