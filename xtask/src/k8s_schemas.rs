//! `cargo xtask k8s-schemas`: regenerates the table of embedded Kubernetes type schemas
//! (`kubebuilder/src/schema/k8s_schemas.json`) from controller-gen.
//!
//! controller-gen inlines k8s.io/api types with the markers of their Go sources (list and map
//! types, `+default`s, required lists), which k8s-openapi's schemas do not carry. The Go
//! module in `xtask/k8s-schemas` has one kind whose spec holds one field per type, named by
//! the type's OpenAPI definition name; the table is that spec's `properties`. It is
//! generated with `crd:generateEmbeddedObjectMeta=true`, so that every embedded `ObjectMeta`
//! refers to its entry, which the facade crate gives its properties or none as that option
//! of the project says.
//!
//! Struct types nest each other (JobTemplateSpec holds a PodSpec holds Containers), so the
//! table stores each struct schema once: a subtree equal to another entry becomes
//! `{"$ref": "<entry>", ...}` where the other keys (a field's own description, a field
//! marker's keys) replace the entry's keys. The facade crate expands these back.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value};

use kubebuilder_cli::tools;

/// Where a table entry points to another entry.
const REF: &str = "$ref";

#[derive(clap::Args)]
pub struct Args {
    /// Fail when the checked-in table differs from a fresh one instead of rewriting it.
    #[arg(long)]
    check: bool,
}

pub fn run(args: Args) -> Result<()> {
    let root = kubebuilder_cli::workspace_root();
    let table_path = root.join("kubebuilder/src/schema/k8s_schemas.json");
    let fresh = render(&compact(generate(&root.join("xtask/k8s-schemas"))?));
    if args.check {
        let current = std::fs::read_to_string(&table_path).unwrap_or_default();
        ensure!(
            current == fresh,
            "{} is out of date: run `cargo xtask k8s-schemas`",
            table_path.display()
        );
        eprintln!("xtask: {} is current", table_path.display());
    } else {
        std::fs::write(&table_path, fresh)
            .with_context(|| format!("writing {}", table_path.display()))?;
        eprintln!("xtask: wrote {}", table_path.display());
    }
    Ok(())
}

/// Runs controller-gen on the Go module and returns its kind's spec properties: one schema
/// per type, keyed by the type's definition name.
fn generate(go_module: &Path) -> Result<Map<String, Value>> {
    let controller_gen: PathBuf = tools::CONTROLLER_GEN.install()?;
    let output = Command::new(&controller_gen)
        .current_dir(go_module)
        .args([
            "crd:generateEmbeddedObjectMeta=true",
            "paths=./...",
            "output:crd:stdout",
        ])
        .output()
        .with_context(|| format!("running {}", controller_gen.display()))?;
    if !output.status.success() {
        bail!(
            "controller-gen failed on {}:\n{}",
            go_module.display(),
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    let yaml = String::from_utf8(output.stdout).context("controller-gen printed non-UTF-8")?;
    let crd: Value = serde_saphyr::from_str(&yaml).context("parsing controller-gen's CRD")?;
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .context("the CRD has no versions")?;
    ensure!(
        versions.len() == 1,
        "expected one version, found {}",
        versions.len()
    );
    match versions[0].pointer("/schema/openAPIV3Schema/properties/spec/properties") {
        Some(Value::Object(properties)) => Ok(properties.clone()),
        _ => bail!("the CRD's spec schema has no properties"),
    }
}

/// Replaces, in every entry, each proper subtree that contains another struct entry with a
/// reference to it. Subtrees are matched top-down, so the largest entry wins.
fn compact(table: Map<String, Value>) -> Map<String, Value> {
    let structs: Vec<(&String, &Map<String, Value>)> = table
        .iter()
        .filter_map(|(name, schema)| Some((name, schema.as_object()?)))
        .filter(|(_, schema)| schema.contains_key("properties"))
        .collect();
    table
        .iter()
        .map(|(name, schema)| {
            let mut schema = schema.clone();
            for child in children(&mut schema) {
                reference_entries(child, &structs);
            }
            (name.clone(), schema)
        })
        .collect()
}

fn reference_entries(node: &mut Value, structs: &[(&String, &Map<String, Value>)]) {
    let Some(fields) = node.as_object() else {
        return;
    };
    if let Some((name, entry)) = structs.iter().find(|(_, entry)| contains(fields, entry)) {
        // Only the keys the entry does not already give are kept beside the reference, so
        // expanding `entry` and laying them over it restores `node` exactly.
        let mut reference = Map::new();
        reference.insert(REF.to_owned(), Value::String((*name).clone()));
        for (key, value) in fields {
            if entry.get(key) != Some(value) {
                reference.insert(key.clone(), value.clone());
            }
        }
        *node = Value::Object(reference);
        return;
    }
    for child in children(node) {
        reference_entries(child, structs);
    }
}

/// Whether `node` holds every key of `entry` with the same value, the description aside
/// (a field's doc replaces its type's).
fn contains(node: &Map<String, Value>, entry: &Map<String, Value>) -> bool {
    entry
        .iter()
        .all(|(key, value)| key == "description" || node.get(key) == Some(value))
}

/// The schemas directly below a schema: properties, items and additionalProperties.
fn children(node: &mut Value) -> Vec<&mut Value> {
    let Some(fields) = node.as_object_mut() else {
        return Vec::new();
    };
    let mut children = Vec::new();
    for (key, value) in fields.iter_mut() {
        match key.as_str() {
            "properties" => children.extend(
                value
                    .as_object_mut()
                    .into_iter()
                    .flat_map(|p| p.values_mut()),
            ),
            "items" | "additionalProperties" => children.push(value),
            _ => {}
        }
    }
    children
}

/// Pretty JSON with keys sorted, so regenerating gives the same bytes.
fn render(table: &Map<String, Value>) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(fields) => {
                let mut keys: Vec<&String> = fields.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&fields[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let mut text = serde_json::to_string_pretty(&sorted(&Value::Object(table.clone())))
        .expect("a JSON value always serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn table(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn nested_struct_entries_become_references_with_their_overrides() {
        let inner = json!({"description": "Inner type.", "type": "object",
                           "properties": {"name": {"type": "string"}}});
        let mut as_field = inner.clone();
        as_field["description"] = json!("A field's own doc.");
        as_field["default"] = json!({});
        let compacted = compact(table(json!({
            "Inner": inner,
            "Outer": {"type": "object", "properties": {
                "same": inner,
                "documented": as_field,
                "list": {"type": "array", "items": inner},
            }},
        })));
        assert_eq!(
            compacted["Outer"],
            json!({"type": "object", "properties": {
                "same": {"$ref": "Inner"},
                "documented": {"$ref": "Inner", "description": "A field's own doc.", "default": {}},
                "list": {"type": "array", "items": {"$ref": "Inner"}},
            }})
        );
        assert_eq!(compacted["Inner"], inner, "an entry never refers to itself");
    }

    #[test]
    fn subtrees_that_differ_from_an_entry_stay_inline() {
        let inner = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let other = json!({"type": "object", "properties": {"name": {"type": "integer"}}});
        let compacted = compact(table(
            json!({"Inner": inner, "Outer": {"properties": {"x": other}}}),
        ));
        assert_eq!(compacted["Outer"]["properties"]["x"], other);
    }

    #[test]
    fn scalar_entries_are_never_referenced() {
        let time = json!({"type": "string", "format": "date-time"});
        let compacted = compact(table(
            json!({"Time": time, "Outer": {"properties": {"at": time}}}),
        ));
        assert_eq!(compacted["Outer"]["properties"]["at"], time);
    }

    #[test]
    fn rendering_sorts_keys() {
        let rendered = render(&table(json!({"b": {"z": 1, "a": 2}, "a": []})));
        assert_eq!(
            rendered,
            "{\n  \"a\": [],\n  \"b\": {\n    \"a\": 2,\n    \"z\": 1\n  }\n}\n"
        );
    }
}
