//! The structural comparison of two CRDs and the intentional differences that excuse some of
//! its findings (listed, with their reasons, in `DIFFERENCES.md`).

use std::fmt;

use serde_json::Value;

/// One place where the two CRDs disagree. `None` means the key is absent on that side.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub crd: String,
    pub path: Vec<String>,
    pub controller_gen: Option<Value>,
    pub ours: Option<Value>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |side: &Option<Value>| match side {
            Some(value) => shorten(&value.to_string()),
            None => "absent".to_owned(),
        };
        write!(
            f,
            "{}: {}\n    controller-gen: {}\n    ours:           {}",
            self.crd,
            self.path.join("/"),
            show(&self.controller_gen),
            show(&self.ours)
        )
    }
}

fn shorten(text: &str) -> String {
    const LIMIT: usize = 300;
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
        None => text.to_owned(),
    }
}

/// How descriptions inside the schemas are compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Descriptions {
    /// Both sides must have a description at the same places; the text may differ.
    Presence,
    /// The text must be equal too.
    Exact,
}

/// The differences between controller-gen's CRD and ours: the same keys with the same values
/// (object key order never matters; array order does).
pub fn differences(
    crd: &str,
    controller_gen: &Value,
    ours: &Value,
    descriptions: Descriptions,
) -> Vec<Difference> {
    let (mut controller_gen, mut ours) = (controller_gen.clone(), ours.clone());
    if descriptions == Descriptions::Presence {
        blank_schema_descriptions(&mut controller_gen);
        blank_schema_descriptions(&mut ours);
    }
    let mut found = Vec::new();
    diff(crd, &mut Vec::new(), &controller_gen, &ours, &mut found);
    found
}

fn diff(
    crd: &str,
    path: &mut Vec<String>,
    left: &Value,
    right: &Value,
    found: &mut Vec<Difference>,
) {
    match (left, right) {
        (Value::Object(left), Value::Object(right)) => {
            let mut keys: Vec<&String> = left.keys().chain(right.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                path.push(key.clone());
                match (left.get(key), right.get(key)) {
                    (Some(l), Some(r)) => diff(crd, path, l, r, found),
                    (l, r) => found.push(Difference {
                        crd: crd.to_owned(),
                        path: path.clone(),
                        controller_gen: l.cloned(),
                        ours: r.cloned(),
                    }),
                }
                path.pop();
            }
        }
        (Value::Array(l), Value::Array(r)) if l.len() == r.len() => {
            for (index, (l, r)) in l.iter().zip(r).enumerate() {
                path.push(index.to_string());
                diff(crd, path, l, r, found);
                path.pop();
            }
        }
        (l, r) if l == r => {}
        (l, r) => found.push(Difference {
            crd: crd.to_owned(),
            path: path.clone(),
            controller_gen: Some(l.clone()),
            ours: Some(r.clone()),
        }),
    }
}

/// Replaces the description text of every schema node of every version by a marker.
fn blank_schema_descriptions(crd: &mut Value) {
    let Some(versions) = crd
        .pointer_mut("/spec/versions")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for version in versions {
        if let Some(schema) = version.pointer_mut("/schema/openAPIV3Schema") {
            blank_descriptions(schema);
        }
    }
}

fn blank_descriptions(schema: &mut Value) {
    let Some(fields) = schema.as_object_mut() else {
        return;
    };
    for (key, value) in fields.iter_mut() {
        match key.as_str() {
            "description" if value.is_string() => *value = Value::from("(text not compared)"),
            "properties" => value
                .as_object_mut()
                .into_iter()
                .flat_map(|p| p.values_mut())
                .for_each(blank_descriptions),
            "items" | "additionalProperties" | "not" => blank_descriptions(value),
            "allOf" | "anyOf" | "oneOf" => value
                .as_array_mut()
                .into_iter()
                .flatten()
                .for_each(blank_descriptions),
            _ => {}
        }
    }
}

/// What an intentional difference expects on one side.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    Absent,
    Any,
    Value(Value),
}

impl Expected {
    fn matches(&self, side: &Option<Value>) -> bool {
        match (self, side) {
            (Expected::Any, _) => true,
            (Expected::Absent, None) => true,
            (Expected::Value(expected), Some(actual)) => expected == actual,
            _ => false,
        }
    }
}

/// One row of `DIFFERENCES.md`.
#[derive(Clone, Debug, PartialEq)]
pub struct Exception {
    pub id: String,
    /// A CRD name, `*` for every CRD, or `*.<group>` for a group's.
    pub crd: String,
    /// `/`-separated segments; `*` matches one segment, `**` any number of them. Written
    /// `.` in the table for the whole CRD (one side has no such CRD).
    pub path: Vec<String>,
    pub controller_gen: Expected,
    pub ours: Expected,
}

impl Exception {
    /// Whether the row is about the CRD `name`: `*` is every CRD, `*.<group>` those of a
    /// group.
    pub fn is_about(&self, name: &str) -> bool {
        self.crd == "*"
            || self.crd == name
            || self
                .crd
                .strip_prefix('*')
                .is_some_and(|group| group.starts_with('.') && name.ends_with(group))
    }

    pub fn excuses(&self, difference: &Difference) -> bool {
        self.is_about(&difference.crd)
            && path_matches(&self.path, &difference.path)
            && self.controller_gen.matches(&difference.controller_gen)
            && self.ours.matches(&difference.ours)
    }
}

fn path_matches(pattern: &[String], path: &[String]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=path.len()).any(|skip| path_matches(rest, &path[skip..]))
        }
        Some((first, rest)) => match path.split_first() {
            Some((segment, path_rest)) => {
                (first == "*" || first == segment) && path_matches(rest, path_rest)
            }
            None => false,
        },
    }
}

/// Reads the table of `DIFFERENCES.md`: the rows whose first cell is an id like `D1`,
/// with the cells `id | CRD | path | controller-gen | ours | reason`. Values are JSON in
/// backticks, or the words `absent` / `any`.
pub fn parse_exceptions(markdown: &str) -> Result<Vec<Exception>, String> {
    parse_exceptions_with_ids(markdown, 'D')
}

/// [`parse_exceptions`] of a list whose ids are `letter` and a number (`C1`), so that
/// lists read together name their rows apart.
pub fn parse_exceptions_with_ids(markdown: &str, letter: char) -> Result<Vec<Exception>, String> {
    let mut exceptions = Vec::new();
    for (number, line) in markdown.lines().enumerate() {
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        let is_row = line.trim_start().starts_with('|')
            && cells[0].starts_with(letter)
            && cells[0][1..].chars().all(|c| c.is_ascii_digit())
            && cells[0].len() > 1;
        if !is_row {
            continue;
        }
        let at = |what: &str| format!("DIFFERENCES.md line {}: {what}", number + 1);
        let [id, crd, path, controller_gen, ours, reason] = cells[..] else {
            return Err(at(
                "expected 6 cells: id | CRD | path | controller-gen | ours | reason",
            ));
        };
        if reason.is_empty() {
            return Err(at("every difference needs its reason"));
        }
        exceptions.push(Exception {
            id: id.to_owned(),
            crd: unquote(crd).to_owned(),
            path: match unquote(path) {
                "." => Vec::new(),
                path => path.split('/').map(str::to_owned).collect(),
            },
            controller_gen: expected(controller_gen).map_err(|e| at(&e))?,
            ours: expected(ours).map_err(|e| at(&e))?,
        });
    }
    Ok(exceptions)
}

fn unquote(cell: &str) -> &str {
    cell.trim_matches('`')
}

fn expected(cell: &str) -> Result<Expected, String> {
    match cell {
        "absent" => Ok(Expected::Absent),
        "any" => Ok(Expected::Any),
        _ => serde_json::from_str(unquote(cell))
            .map(Expected::Value)
            .map_err(|e| format!("{cell} is not JSON in backticks, `absent` or `any`: {e}")),
    }
}

/// Splits the differences into the excused and the unexcused ones, and names the exceptions
/// that excused nothing (a stale list is a failure too).
pub struct Verdict {
    pub unexcused: Vec<Difference>,
    pub excused: Vec<(String, Difference)>,
    pub unused: Vec<String>,
}

impl Verdict {
    /// Fails with every unexcused difference and every row of `list` that excused nothing.
    pub fn assert_clean(&self, list: &str) {
        for (id, difference) in &self.excused {
            eprintln!("excused by {id}: {difference}");
        }
        let mut report = String::new();
        for difference in &self.unexcused {
            report.push_str(&format!("\n{difference}"));
        }
        for id in &self.unused {
            report.push_str(&format!(
                "\n{id} in {list} excuses no difference: remove it"
            ));
        }
        assert!(
            report.is_empty(),
            "{} difference(s) from controller-gen not listed in {list}, {} stale row(s):{report}",
            self.unexcused.len(),
            self.unused.len()
        );
    }
}

pub fn judge(found: Vec<Difference>, exceptions: &[Exception]) -> Verdict {
    let mut verdict = Verdict {
        unexcused: Vec::new(),
        excused: Vec::new(),
        unused: Vec::new(),
    };
    for difference in found {
        match exceptions.iter().find(|e| e.excuses(&difference)) {
            Some(exception) => verdict.excused.push((exception.id.clone(), difference)),
            None => verdict.unexcused.push(difference),
        }
    }
    verdict.unused = exceptions
        .iter()
        .filter(|e| !verdict.excused.iter().any(|(id, _)| *id == e.id))
        .map(|e| e.id.clone())
        .collect();
    verdict
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn crd(schema: Value) -> Value {
        json!({"metadata": {"name": "things.example.com"},
               "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]}})
    }

    fn paths(found: &[Difference]) -> Vec<String> {
        found.iter().map(|d| d.path.join("/")).collect()
    }

    #[test]
    fn equal_documents_have_no_differences_whatever_the_key_order() {
        let a = json!({"a": 1, "b": {"c": [1, 2], "d": "x"}});
        let b = json!({"b": {"d": "x", "c": [1, 2]}, "a": 1});
        assert!(differences("c", &a, &b, Descriptions::Exact).is_empty());
    }

    #[test]
    fn missing_keys_changed_values_and_reordered_arrays_are_found() {
        let a = json!({"a": 1, "b": [1, 2], "c": {"d": true}, "e": [1]});
        let b = json!({"a": 2, "b": [2, 1], "c": {}, "e": [1, 2], "f": null});
        let found = differences("c", &a, &b, Descriptions::Exact);
        assert_eq!(paths(&found), ["a", "b/0", "b/1", "c/d", "e", "f"]);
        assert_eq!(found[3].ours, None);
        assert_eq!(found[3].controller_gen, Some(json!(true)));
        assert_eq!(found[4].ours, Some(json!([1, 2])));
        assert_eq!(found[5].controller_gen, None);
    }

    #[test]
    fn integers_and_floats_differ() {
        let found = differences(
            "c",
            &json!({"m": 1}),
            &json!({"m": 1.0}),
            Descriptions::Exact,
        );
        assert_eq!(paths(&found), ["m"]);
    }

    #[test]
    fn schema_description_text_is_ignored_but_not_its_presence() {
        let ours = crd(json!({"description": "Ours.", "properties": {
            "a": {"description": "A.", "type": "string"},
            "b": {"type": "string"},
            "description": {"type": "string"}}}));
        let theirs = crd(json!({"description": "Theirs.", "properties": {
            "a": {"description": "Other a.", "type": "string"},
            "b": {"description": "B.", "type": "string"},
            "description": {"type": "string"}}}));
        let found = differences("c", &theirs, &ours, Descriptions::Presence);
        assert_eq!(
            paths(&found),
            ["spec/versions/0/schema/openAPIV3Schema/properties/b/description"]
        );
        assert_eq!(
            differences("c", &theirs, &ours, Descriptions::Exact).len(),
            3
        );
    }

    #[test]
    fn descriptions_outside_schemas_are_compared() {
        let column = |text: &str| json!({"spec": {"versions": [{"additionalPrinterColumns": [{"description": text}]}]}});
        let found = differences("c", &column("a"), &column("b"), Descriptions::Presence);
        assert_eq!(found.len(), 1);
    }

    #[test]
    fn a_row_is_about_one_crd_every_crd_or_a_groups() {
        let row = |crd: &str| Exception {
            id: "D1".to_owned(),
            crd: crd.to_owned(),
            path: Vec::new(),
            controller_gen: Expected::Any,
            ours: Expected::Any,
        };
        assert!(row("*").is_about("things.example.com"));
        assert!(row("things.example.com").is_about("things.example.com"));
        assert!(!row("things.example.com").is_about("others.example.com"));
        assert!(row("*.example.com").is_about("things.example.com"));
        assert!(!row("*.example.com").is_about("things.example.org"));
        assert!(!row("*example.com").is_about("things.example.com"));
    }

    #[test]
    fn exceptions_match_crd_path_and_both_values() {
        let table = "\
| id | CRD | path | controller-gen | ours | reason |
|---|---|---|---|---|---|
| D1 | `*` | `metadata/annotations/x` | `\"v1\"` | absent | ours has no version |
| D2 | `a.example.com` | `spec/**/maximum` | `5` | any | why not |
";
        let exceptions = parse_exceptions(table).unwrap();
        assert_eq!(exceptions.len(), 2);
        let difference =
            |crd: &str, path: &str, cg: Option<Value>, ours: Option<Value>| Difference {
                crd: crd.to_owned(),
                path: path.split('/').map(str::to_owned).collect(),
                controller_gen: cg,
                ours,
            };
        let annotation = difference(
            "b.example.com",
            "metadata/annotations/x",
            Some(json!("v1")),
            None,
        );
        assert!(exceptions[0].excuses(&annotation));
        let changed = difference(
            "b.example.com",
            "metadata/annotations/x",
            Some(json!("v1")),
            Some(json!("v2")),
        );
        assert!(!exceptions[0].excuses(&changed));
        let deep = difference(
            "a.example.com",
            "spec/versions/0/maximum",
            Some(json!(5)),
            Some(json!(6)),
        );
        assert!(exceptions[1].excuses(&deep));
        let other_crd = difference(
            "b.example.com",
            "spec/versions/0/maximum",
            Some(json!(5)),
            None,
        );
        assert!(!exceptions[1].excuses(&other_crd));

        let verdict = judge(vec![annotation.clone(), changed.clone()], &exceptions);
        assert_eq!(verdict.excused, vec![("D1".to_owned(), annotation)]);
        assert_eq!(verdict.unexcused, vec![changed]);
        assert_eq!(verdict.unused, ["D2"]);
    }

    #[test]
    fn a_dot_path_is_a_whole_crd_missing_on_one_side() {
        let exceptions = parse_exceptions(
            "| D7 | `gone.example.com` | `.` | any | absent | ours refuses it |\n",
        )
        .unwrap();
        let missing = Difference {
            crd: "gone.example.com".to_owned(),
            path: Vec::new(),
            controller_gen: Some(json!({"kind": "CustomResourceDefinition"})),
            ours: None,
        };
        assert!(exceptions[0].excuses(&missing));
        let field = Difference {
            path: vec!["spec".to_owned()],
            ..missing
        };
        assert!(!exceptions[0].excuses(&field));
    }

    #[test]
    fn malformed_rows_are_errors() {
        assert!(parse_exceptions("| D1 | `*` | `a` | `1` | absent |\n").is_err());
        assert!(parse_exceptions("| D1 | `*` | `a` | `1` | absent | |\n").is_err());
        assert!(parse_exceptions("| D1 | `*` | `a` | `nope` | absent | r |\n").is_err());
        assert!(
            parse_exceptions("| Do | this | not | a | row | x |\n")
                .unwrap()
                .is_empty()
        );
    }
}
