//! Go markers as the Rust arguments that spell them: the marker table's rows (through
//! [`spellings`]) for `#[kubebuilder(...)]` and `#[kubebuilder::schema(...)]`, the
//! arguments of `#[kubebuilder::resource(...)]` for a kind's markers.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use kubebuilder_attributes::spellings::{self, Kind, Target};
use serde_json::Value;

/// An argument list being written: bare arguments and nested lists, each nested list
/// once (`validation(min_length = 1, items(max_length = 5))`), in the order first given.
#[derive(Debug, Default)]
pub struct ArgList {
    entries: Vec<Entry>,
}

#[derive(Debug)]
enum Entry {
    Arg(String),
    List(String, ArgList),
}

impl ArgList {
    /// Adds `arg` inside the nested lists `path` (outermost first).
    pub fn push(&mut self, path: &[&str], arg: String) {
        let Some((first, rest)) = path.split_first() else {
            self.entries.push(Entry::Arg(arg));
            return;
        };
        let position = self
            .entries
            .iter()
            .position(|entry| matches!(entry, Entry::List(name, _) if name == first));
        let index = position.unwrap_or_else(|| {
            self.entries
                .push(Entry::List((*first).to_owned(), ArgList::default()));
            self.entries.len() - 1
        });
        if let Entry::List(_, list) = &mut self.entries[index] {
            list.push(rest, arg);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The arguments, comma-separated.
    pub fn render(&self) -> String {
        self.entries
            .iter()
            .map(Entry::render)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The attribute `#[<path>(<arguments>)]` at `indent`: on one line when it fits in
    /// 100 columns, else one argument per line.
    pub fn attribute(&self, path: &str, indent: &str) -> String {
        let one_line = format!("{indent}#[{path}({})]\n", self.render());
        if one_line.len() <= 101 {
            return one_line;
        }
        let mut out = format!("{indent}#[{path}(\n");
        for entry in &self.entries {
            out.push_str(&format!("{indent}    {},\n", entry.render()));
        }
        out.push_str(&format!("{indent})]\n"));
        out
    }
}

impl Entry {
    fn render(&self) -> String {
        match self {
            Entry::Arg(arg) => arg.clone(),
            Entry::List(name, list) => format!("{name}({})", list.render()),
        }
    }
}

/// Translates markers with the spellings of the marker table and the resource attribute.
pub struct Translator {
    spellings: BTreeMap<(String, Target), (String, Option<Kind>)>,
}

impl Translator {
    pub fn new() -> Self {
        let spellings = spellings::all()
            .into_iter()
            .map(|spelling| {
                (
                    (spelling.go, spelling.target),
                    (spelling.rust, spelling.value),
                )
            })
            .collect();
        Self { spellings }
    }

    /// Adds the schema marker `name` with `value`, written at a field or a type
    /// (`target`), to `args`; for the root object (`root`) inside `validation(...)`. Says
    /// what it wrote instead of the marker, when it did.
    pub fn schema_marker(
        &self,
        args: &mut ArgList,
        name: &str,
        target: Target,
        value: &Value,
        root: bool,
    ) -> Result<Option<String>> {
        if name == "kubebuilder:validation:UniqueItems" && value == &Value::Bool(true) {
            // The apiserver refuses a CRD with `uniqueItems: true` (and so does
            // `validation(unique_items = true)`); a set is what it allows.
            args.push(&[], "list_type = \"set\"".to_owned());
            return Ok(Some(
                "+kubebuilder:validation:UniqueItems=true is `list_type = \"set\"`: the \
                 apiserver refuses `uniqueItems: true` in a CRD"
                    .to_owned(),
            ));
        }
        let Some((rust, Some(kind))) = self.spellings.get(&(name.to_owned(), target)) else {
            bail!("+{name} has no Rust spelling on a {}", target.as_str());
        };
        let (mut path, arg_name) = nesting(rust);
        if root && path.first() != Some(&"validation") {
            path.insert(0, "validation");
        }
        if let Some(arg) = argument(arg_name, *kind, value)? {
            args.push(&path, arg);
        }
        Ok(None)
    }
}

/// `validation(items(max_length))` → `(["validation", "items"], "max_length")`.
fn nesting(rust: &str) -> (Vec<&str>, &str) {
    let inner = rust.trim_end_matches(')');
    let mut parts: Vec<&str> = inner.split('(').collect();
    let name = parts.pop().unwrap_or_default();
    (parts, name)
}

/// `name` with `value` written as its row's `kind` says; `None` for a flag set to false.
fn argument(name: &str, kind: Kind, value: &Value) -> Result<Option<String>> {
    let value = unwrapped(value);
    Ok(Some(match kind {
        Kind::Flag => match value {
            Value::Bool(false) => return Ok(None),
            _ => name.to_owned(),
        },
        Kind::Bool => match value {
            Value::Bool(true) => name.to_owned(),
            Value::Bool(false) => format!("{name} = false"),
            other => bail!("expected true or false, found {other}"),
        },
        Kind::Number | Kind::Integer => match value {
            Value::Number(number) => format!("{name} = {number}"),
            other => bail!("expected a number, found {other}"),
        },
        Kind::String | Kind::Choice | Kind::Pattern => match value {
            Value::String(text) => format!("{name} = {}", string_literal(text)),
            other => bail!("expected a string, found {other}"),
        },
        Kind::Literal | Kind::Literals => format!("{name} = {}", literal(value)),
        Kind::Json => format!(
            "{name} = {}",
            string_literal(&serde_json::to_string(value)?)
        ),
        Kind::Fields => format!("{name} = {}", literal(value)),
        Kind::Rule => format!(
            "{name}({})",
            fields_of(
                value,
                &[
                    ("Rule", "rule"),
                    ("Message", "message"),
                    ("MessageExpression", "message_expression"),
                    ("Reason", "reason"),
                    ("FieldPath", "field_path"),
                    ("OptionalOldSelf", "optional_old_self"),
                ]
            )
        ),
        Kind::Docs => format!(
            "{name}({})",
            fields_of(value, &[("URL", "url"), ("Description", "description")])
        ),
    }))
}

/// The value of a marker whose Go type is a struct holding one `Value` (`Default`,
/// `Example`, `Title`), or of any struct marker (`{"type": ..., "value": ...}`).
pub fn unwrapped(value: &Value) -> &Value {
    let inner = match value {
        Value::Object(object) if object.contains_key("type") => &object["value"],
        other => other,
    };
    match inner {
        Value::Object(object) if object.len() == 1 && object.contains_key("Value") => {
            &object["Value"]
        }
        other => other,
    }
}

/// The struct marker's fields that are set, as `rust = value` arguments.
pub fn fields_of(value: &Value, fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .filter_map(|(go, rust)| match value.get(go) {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) if text.is_empty() => None,
            Some(Value::Number(number)) if number.as_i64() == Some(0) => None,
            Some(Value::Array(items)) if items.is_empty() => None,
            Some(Value::Bool(true)) => Some((*rust).to_owned()),
            Some(Value::Bool(false)) => None,
            Some(other) => Some(format!("{rust} = {}", literal(other))),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A JSON value in the attributes' literal syntax.
pub fn literal(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => string_literal(text),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(literal).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(key, value)| format!("{}: {}", string_literal(key), literal(value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A Rust string literal: raw when the text has quotes or backslashes (a pattern, a CEL
/// rule), escaped otherwise.
pub fn string_literal(text: &str) -> String {
    if (text.contains('"') || text.contains('\\')) && !text.contains(['\n', '\r']) {
        let closes = |n: &usize| text.contains(&format!("\"{}", "#".repeat(*n)));
        let hashes = "#".repeat((1..).find(|n| !closes(n)).unwrap_or(1));
        format!("r{hashes}\"{text}\"{hashes}")
    } else {
        format!("{text:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_nest_once_in_first_given_order() {
        let mut args = ArgList::default();
        args.push(&[], "optional".into());
        args.push(&["validation"], "min_length = 1".into());
        args.push(&["validation", "items"], "max_length = 5".into());
        args.push(&["validation"], "max_length = 9".into());
        assert_eq!(
            args.render(),
            "optional, validation(min_length = 1, items(max_length = 5), max_length = 9)"
        );
    }

    #[test]
    fn values_are_written_as_their_rows_read_them() {
        let translator = Translator::new();
        let mut args = ArgList::default();
        for (name, value) in [
            ("optional", json!(true)),
            ("kubebuilder:validation:Pattern", json!(r"^\d+$")),
            ("kubebuilder:validation:items:MaxLength", json!(5)),
            ("kubebuilder:validation:Enum", json!(["a", 1])),
            (
                "kubebuilder:default",
                json!({"type": "Default", "value": {"Value": {"a": [1]}}}),
            ),
            (
                "kubebuilder:validation:XValidation",
                json!({"type": "XValidation", "value": {"Rule": "self.a != \"x\"", "Message": "", "OptionalOldSelf": true}}),
            ),
        ] {
            translator
                .schema_marker(&mut args, name, Target::Field, &value, false)
                .unwrap();
        }
        assert_eq!(
            args.render(),
            r##"optional, validation(pattern = r#"^\d+$"#, items(max_length = 5), enum = ["a", 1], x_validation(rule = r#"self.a != "x""#, optional_old_self)), default = {"a": [1]}"##
        );
    }
}
