//! apiextensions' structural schema rules, as far as the import needs them to read a schema
//! as types: every node (the root, each property, item and map value) says its `type`
//! (`x-kubernetes-int-or-string` and `x-kubernetes-preserve-unknown-fields` aside), an
//! array its `items`, no object has both `properties` and `additionalProperties`, the
//! logical junctors (`allOf`, `anyOf`, `oneOf`, `not`) only validate values, and
//! `metadata` restricts `name` and `generateName` at most.

use serde_json::{Map, Value};

use super::Document;

const TYPES: [&str; 6] = ["object", "array", "string", "integer", "number", "boolean"];

/// What no structural schema has, anywhere.
const NEVER: [&str; 7] = [
    "$ref",
    "$schema",
    "id",
    "definitions",
    "dependencies",
    "patternProperties",
    "additionalItems",
];

/// What a junctor's branches may not say: they validate values, the node itself says the
/// structure.
const NOT_IN_JUNCTORS: [&str; 9] = [
    "type",
    "description",
    "default",
    "nullable",
    "additionalProperties",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
];

const JUNCTORS: [&str; 4] = ["allOf", "anyOf", "oneOf", "not"];

/// Each way the document's schemas are not structural, as `file: YAML path: what`.
pub fn problems(document: &Document) -> Vec<String> {
    let mut found = Vec::new();
    let versions = document.crd["spec"]["versions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut report = |path: &str, what: &str| {
        found.push(format!("{}: {path}: {what}", document.file.display()));
    };
    if versions.is_empty() {
        report("spec.versions", "no version is declared");
    }
    for (index, version) in versions.iter().enumerate() {
        let path = format!("spec.versions[{index}].schema.openAPIV3Schema");
        match version.pointer("/schema/openAPIV3Schema") {
            Some(schema @ Value::Object(_)) => {
                node(schema, &path, &mut report);
                metadata(schema, &path, &mut report);
            }
            _ => report(&path, "the version has no schema"),
        }
    }
    found
}

/// `metadata` may restrict `name` and `generateName`, nothing else.
fn metadata(root: &Value, path: &str, report: &mut impl FnMut(&str, &str)) {
    let properties = root["properties"]["metadata"]["properties"].as_object();
    for name in properties.into_iter().flat_map(Map::keys) {
        if name != "name" && name != "generateName" {
            report(
                &format!("{path}.properties.metadata.properties.{name}"),
                "metadata may restrict name and generateName only",
            );
        }
    }
}

/// Checks a node that says the structure (not a junctor's branch), and what it holds.
fn node(schema: &Value, path: &str, report: &mut impl FnMut(&str, &str)) {
    let Some(fields) = schema.as_object() else {
        report(path, "a schema is an object");
        return;
    };
    forbidden_everywhere(fields, path, report);
    let flag = |name: &str| fields.get(name) == Some(&Value::Bool(true));
    let int_or_string = flag("x-kubernetes-int-or-string");
    match fields.get("type").and_then(Value::as_str) {
        Some(kind) if TYPES.contains(&kind) => {}
        Some(other) => report(path, &format!("`type: {other}` is no type of OpenAPI's")),
        None if int_or_string || flag("x-kubernetes-preserve-unknown-fields") => {}
        None => report(
            path,
            "no `type` (only x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields \
             nodes may go without one)",
        ),
    }
    if fields.contains_key("properties") && fields.contains_key("additionalProperties") {
        report(path, "both `properties` and `additionalProperties`");
    }
    for (name, property) in fields
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        node(property, &format!("{path}.properties.{name}"), report);
    }
    match fields.get("items") {
        Some(items @ Value::Object(_)) => node(items, &format!("{path}.items"), report),
        Some(_) => report(
            &format!("{path}.items"),
            "`items` is one schema, not a list",
        ),
        None if fields.get("type") == Some(&Value::from("array")) => {
            report(path, "an array without `items`")
        }
        None => {}
    }
    match fields.get("additionalProperties") {
        Some(value @ Value::Object(_)) => {
            node(value, &format!("{path}.additionalProperties"), report)
        }
        Some(other) => report(
            &format!("{path}.additionalProperties"),
            &format!("`additionalProperties: {other}` says no type (a schema is needed)"),
        ),
        None => {}
    }
    for junctor in JUNCTORS {
        for (at, branch) in branches(fields, junctor) {
            let branch_path = format!("{path}.{junctor}{at}");
            if int_or_string && junctor != "not" && is_int_or_string_branch(branch) {
                continue;
            }
            value_validation(branch, &branch_path, report);
        }
    }
}

/// The branches of a junctor, with their `[index]` (empty for `not`).
fn branches<'v>(fields: &'v Map<String, Value>, junctor: &str) -> Vec<(String, &'v Value)> {
    match fields.get(junctor) {
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(index, item)| (format!("[{index}]"), item))
            .collect(),
        Some(other) => vec![(String::new(), other)],
        None => Vec::new(),
    }
}

/// `{type: integer}`, `{type: string}`, or controller-gen's `allOf` of their `anyOf`: what
/// an int-or-string node may say.
fn is_int_or_string_branch(branch: &Value) -> bool {
    let typed = |kind: &str| branch == &serde_json::json!({ "type": kind });
    typed("integer")
        || typed("string")
        || branch
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|any| any.iter().all(is_int_or_string_branch))
}

/// A junctor's branch, and everything under it, only validates values.
fn value_validation(schema: &Value, path: &str, report: &mut impl FnMut(&str, &str)) {
    let Some(fields) = schema.as_object() else {
        report(path, "a schema is an object");
        return;
    };
    forbidden_everywhere(fields, path, report);
    for name in NOT_IN_JUNCTORS {
        if fields.contains_key(name) {
            report(
                path,
                &format!(
                    "`{name}` inside {}: the logical junctors may only validate values",
                    path.rsplit('.').next().unwrap_or(path)
                ),
            );
        }
    }
    for (name, property) in fields
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        value_validation(property, &format!("{path}.properties.{name}"), report);
    }
    if let Some(items) = fields.get("items") {
        value_validation(items, &format!("{path}.items"), report);
    }
    for junctor in JUNCTORS {
        for (at, branch) in branches(fields, junctor) {
            value_validation(branch, &format!("{path}.{junctor}{at}"), report);
        }
    }
}

fn forbidden_everywhere(
    fields: &Map<String, Value>,
    path: &str,
    report: &mut impl FnMut(&str, &str),
) {
    for name in NEVER {
        if fields.contains_key(name) {
            report(
                path,
                &format!("`{name}` has no place in a structural schema"),
            );
        }
    }
}
