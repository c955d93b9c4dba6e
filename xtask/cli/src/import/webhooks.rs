//! The Go project's `+kubebuilder:webhook` markers in the new project: those of a kind the
//! import makes as `create webhook` scaffolds them (a defaulter, a validator), their
//! attributes then saying what the markers say; those of other kinds (Kubernetes' own, or
//! another project's: Kueue's webhooks for Jobs, JobSets, RayJobs, ...) declared in one
//! module, `controller/src/external_webhooks.rs`, for `config/webhook/manifests.yaml`, with
//! what to fill in to serve them.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::markers::fields_of;
use super::project::short_group;
use super::rust::upper_camel;
use crate::scaffold::{self, names};

/// A kind the import makes, by the names a webhook rule matches.
pub struct OwnKind {
    /// Its API group (`kueue.x-k8s.io`).
    pub group: String,
    /// Its version (`v1beta2`).
    pub version: String,
    /// The kind (`Workload`).
    pub kind: String,
    /// Its resource (`workloads`).
    pub plural: String,
}

/// One `+kubebuilder:webhook` marker (its values, as controller-tools' `Config`) and the Go
/// file it is written in.
pub type Marker = (Value, String);

/// The module of the webhooks for kinds the project does not make.
const EXTERNAL_MODULE: &str = "external_webhooks";

/// Makes the webhooks of `markers` in the project at `root` (of `domain`): those of `kinds`
/// scaffolded, the others declared in [`EXTERNAL_MODULE`]. Returns how many are declared
/// there.
pub fn create(root: &Path, domain: &str, kinds: &[OwnKind], markers: &[Marker]) -> Result<usize> {
    // By the kind's place in `kinds`.
    let mut by_kind: BTreeMap<usize, Vec<&Value>> = BTreeMap::new();
    let mut external = Vec::new();
    for (webhook, file) in markers {
        let found = kinds.iter().position(|kind| {
            strings(webhook, "Groups").contains(&kind.group.as_str())
                && strings(webhook, "Versions").contains(&kind.version.as_str())
                && strings(webhook, "Resources").contains(&kind.plural.as_str())
        });
        match found {
            Some(at) => by_kind.entry(at).or_default().push(webhook),
            None => external.push((webhook, file.as_str())),
        }
    }
    for (at, webhooks) in by_kind {
        scaffold_webhooks(root, domain, &kinds[at], &webhooks)?;
    }
    if !external.is_empty() {
        write_external(root, &external)?;
    }
    Ok(external.len())
}

/// The strings of the marker's list value `name` (`Groups`).
fn strings<'a>(webhook: &'a Value, name: &str) -> Vec<&'a str> {
    webhook[name]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// `create webhook` for the kind's version, then its attributes with the markers' values.
fn scaffold_webhooks(root: &Path, domain: &str, kind: &OwnKind, webhooks: &[&Value]) -> Result<()> {
    let mutating = |m: bool| webhooks.iter().filter(move |w| is_mutating(w) == m);
    for m in [true, false] {
        if mutating(m).count() > 1 {
            bail!(
                "{} {} has {} {} webhooks in the Go markers; the import makes one of each",
                kind.kind,
                kind.version,
                mutating(m).count(),
                if m { "mutating" } else { "validating" }
            );
        }
    }
    let args = scaffold::create_webhook::Args {
        kind: scaffold::KindArgs {
            group: short_group(&kind.group, domain),
            version: kind.version.clone(),
            kind: kind.kind.clone(),
        },
        defaulting: mutating(true).count() > 0,
        programmatic_validation: mutating(false).count() > 0,
        conversion: false,
        spokes: Vec::new(),
        force: false,
    };
    scaffold::create_webhook::plan(root, &args)?.apply()?;
    for webhook in webhooks {
        let rule = if is_for(kind, webhook) {
            format!("for = {}", kind.kind)
        } else {
            // A rule `for` cannot say (a subresource too, another path): the marker's own,
            // which the scaffolded defaulter or validator serves all the same.
            explicit_rule(webhook)
        };
        rewrite_attribute(root, kind, webhook, &attribute_args(&rule, webhook))?;
    }
    Ok(())
}

fn is_mutating(webhook: &Value) -> bool {
    webhook["Mutating"] == Value::Bool(true)
}

/// Whether the webhook's rule and path are those `for = Kind` gives: the kind's group,
/// version and resource, and kubebuilder's path.
fn is_for(kind: &OwnKind, webhook: &Value) -> bool {
    let path = names::webhook_path(is_mutating(webhook), &kind.group, &kind.version, &kind.kind);
    strings(webhook, "Groups") == [kind.group.as_str()]
        && strings(webhook, "Versions") == [kind.version.as_str()]
        && strings(webhook, "Resources") == [kind.plural.as_str()]
        && webhook["Path"]
            .as_str()
            .is_none_or(|p| p.is_empty() || p == path)
}

/// The marker's groups, versions, resources and path as the attribute's arguments.
fn explicit_rule(webhook: &Value) -> String {
    arguments(
        webhook,
        &[
            ("Groups", "groups"),
            ("Versions", "versions"),
            ("Resources", "resources"),
            ("Path", "path"),
        ],
    )
    .join(",\n    ")
}

/// The arguments spelling the marker's values `fields` (Go name, Rust name) it has.
fn arguments(webhook: &Value, fields: &[(&str, &str)]) -> Vec<String> {
    fields
        .iter()
        .map(|field| fields_of(webhook, std::slice::from_ref(field)))
        .filter(|arg| !arg.is_empty())
        .collect()
}

/// The attribute's arguments: `rule` (`for = Kind`, or groups, versions, resources and
/// path), then the marker's other values.
fn attribute_args(rule: &str, webhook: &Value) -> String {
    let mut args = vec![rule.to_owned()];
    args.push(format!("mutating = {}", is_mutating(webhook)));
    args.extend(arguments(
        webhook,
        &[
            ("FailurePolicy", "failure_policy"),
            ("MatchPolicy", "match_policy"),
            ("SideEffects", "side_effects"),
            ("TimeoutSeconds", "timeout_seconds"),
            ("Verbs", "verbs"),
            ("Name", "name"),
            ("URL", "url"),
            ("ServiceName", "service_name"),
            ("ServiceNamespace", "service_namespace"),
            ("ServicePort", "service_port"),
            ("WebhookVersions", "webhook_versions"),
            ("AdmissionReviewVersions", "admission_review_versions"),
            ("ReinvocationPolicy", "reinvocation_policy"),
            ("Patch", "patch"),
        ],
    ));
    args.join(",\n    ")
}

/// Replaces the scaffolded `#[kubebuilder::webhook(...)]` of the kind's version (found by
/// its scaffolded name, `m<kind>-<version>.kb.io` or `v...`) with `args`.
fn rewrite_attribute(root: &Path, kind: &OwnKind, webhook: &Value, args: &str) -> Result<()> {
    let mut pending = vec![root.join("controller/src")];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let text = fs::read_to_string(&path).unwrap_or_default();
            if let Some(rewritten) = with_args(&text, kind, is_mutating(webhook), args) {
                fs::write(&path, rewritten)
                    .with_context(|| format!("writing {}", path.display()))?;
                return Ok(());
            }
        }
    }
    bail!(
        "the scaffolded webhook of {} {} was not found to write the Go marker's values",
        kind.kind,
        kind.version
    )
}

/// `text` with the webhook attribute scaffolded for the kind's version (mutating or not)
/// given `args`; `None` when the text has no such attribute.
fn with_args(text: &str, kind: &OwnKind, mutating: bool, args: &str) -> Option<String> {
    let mut from = 0;
    while let Some(at) = text[from..].find("#[kubebuilder::webhook(") {
        let start = from + at;
        let end = start + text[start..].find(")]\n")? + 3;
        let block = &text[start..end];
        if block.contains(&format!("for = {},", kind.kind))
            && block.contains(&format!("mutating = {mutating},"))
            && block.contains(&format!("-{}.kb.io\"", kind.version))
        {
            return Some(format!(
                "{}#[kubebuilder::webhook(\n    {args}\n)]\n{}",
                &text[..start],
                &text[end..]
            ));
        }
        from = end;
    }
    None
}

/// `controller/src/external_webhooks.rs`: a type per webhook, declared as its marker says,
/// in the order of the Go files; declared in `controller/src/lib.rs`.
fn write_external(root: &Path, webhooks: &[(&Value, &str)]) -> Result<()> {
    let mut text = String::from(
        "//! The Go project's admission webhooks for kinds this project does not make\n\
         //! (Kubernetes' own, or another project's), declared as its `+kubebuilder:webhook`\n\
         //! markers say: `cargo xtask manifests` writes them into\n\
         //! `config/webhook/manifests.yaml`.\n\
         //!\n\
         //! Nothing serves them yet, and the apiserver calls each for the objects its rule\n\
         //! matches: before deploying, implement `kubebuilder_runtime::webhook::Defaulter`\n\
         //! (a mutating webhook) or `Validator` for the kind's Rust type (k8s-openapi's, or\n\
         //! the one `cargo kubebuilder import crd --external` makes of its CRD) on each type\n\
         //! below, as the Go file named above it does, and serve it with the manager's\n\
         //! webhooks (`Webhooks::new().defaulter(...)`), or remove the type.\n",
    );
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    let mut ordered: Vec<&(&Value, &str)> = webhooks.iter().collect();
    ordered.sort_by_key(|(_, file)| *file);
    for (webhook, file) in ordered {
        let name = type_name(webhook);
        let seen = names.entry(name.clone()).or_default();
        *seen += 1;
        let name = if *seen == 1 {
            name
        } else {
            format!("{name}{seen}")
        };
        let args = attribute_args(&explicit_rule(webhook), webhook);
        text.push_str(&format!(
            "\n/// `{}` of `{file}`.\n#[kubebuilder::webhook(\n    {args}\n)]\npub struct {name};\n",
            webhook["Name"].as_str().unwrap_or_default(),
        ));
    }
    let path = root.join(format!("controller/src/{EXTERNAL_MODULE}.rs"));
    fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    let lib = root.join("controller/src/lib.rs");
    let modules = fs::read_to_string(&lib).with_context(|| format!("reading {}", lib.display()))?;
    let marker = scaffold::templates::kind::MODULES_MARKER;
    let declared = modules.replacen(marker, &format!("pub mod {EXTERNAL_MODULE};\n{marker}"), 1);
    fs::write(&lib, declared).with_context(|| format!("writing {}", lib.display()))
}

/// The type of a webhook for another project's kind: its path in UpperCamelCase
/// (`/mutate-batch-v1-job`: `MutateBatchV1Job`), else its name's.
fn type_name(webhook: &Value) -> String {
    let path = webhook["Path"].as_str().filter(|path| !path.is_empty());
    upper_camel(path.or(webhook["Name"].as_str()).unwrap_or("webhook"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn workload() -> OwnKind {
        OwnKind {
            group: "kueue.x-k8s.io".to_owned(),
            version: "v1beta2".to_owned(),
            kind: "Workload".to_owned(),
            plural: "workloads".to_owned(),
        }
    }

    #[test]
    fn a_rule_for_the_kind_alone_at_its_path_is_for_the_kind() {
        let webhook = json!({
            "Mutating": true, "Groups": ["kueue.x-k8s.io"], "Versions": ["v1beta2"],
            "Resources": ["workloads"], "Path": "/mutate-kueue-x-k8s-io-v1beta2-workload",
        });
        assert!(is_for(&workload(), &webhook));
    }

    #[test]
    fn a_subresource_or_another_path_keeps_the_markers_rule() {
        let status = json!({
            "Mutating": false, "Groups": ["kueue.x-k8s.io"], "Versions": ["v1beta2"],
            "Resources": ["workloads", "workloads/status"],
            "Path": "/validate-kueue-x-k8s-io-v1beta2-workload",
        });
        assert!(!is_for(&workload(), &status));
        assert_eq!(
            explicit_rule(&status),
            "groups = [\"kueue.x-k8s.io\"],\n    versions = [\"v1beta2\"],\n    resources = \
             [\"workloads\", \"workloads/status\"],\n    path = \
             \"/validate-kueue-x-k8s-io-v1beta2-workload\""
        );
        let elsewhere = json!({
            "Mutating": true, "Groups": ["kueue.x-k8s.io"], "Versions": ["v1beta2"],
            "Resources": ["workloads"], "Path": "/mutate-workloads",
        });
        assert!(!is_for(&workload(), &elsewhere));
    }

    #[test]
    fn another_kinds_webhook_is_named_by_its_path() {
        assert_eq!(
            type_name(&json!({"Path": "/mutate-batch-v1-job", "Name": "mjob.kb.io"})),
            "MutateBatchV1Job"
        );
        assert_eq!(type_name(&json!({"Name": "mjob.kb.io"})), "MjobKbIo");
    }
}
