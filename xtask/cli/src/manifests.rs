//! `cargo xtask manifests [--check]`: what `make manifests` (controller-gen `rbac crd
//! webhook`) writes, from the declarations of the attributes in the project's `api` and
//! `controller` crates. They are read from the sources ([`crate::source`]), as controller-gen
//! reads Go markers, in a fraction of a second; where that reading could differ from what
//! rustc compiles, or with `--build`, the project's declarations binary is built and prints
//! what the attributes registered (see [`kubebuilder::declarations`]). Either way:
//!
//! - `config/crd/bases/<group>_<plural>.yaml`, one CRD per kind;
//! - `config/rbac/role.yaml`, ClusterRole `manager-role` (and Roles for namespaced rules),
//!   with what the runtime's manager needs itself ([`rbac::RUNTIME_RULES`]) added to the
//!   manager's role;
//! - `config/rbac/<kind>_{admin,editor,viewer}_role.yaml`, roles to hand out per kind;
//! - `config/webhook/manifests.yaml`, the webhook configurations.
//!
//! Those files are rewritten whole. The kustomizations that list them are hand-editable:
//! only a missing entry for a new kind is added (as `kubebuilder create api` does), the
//! rest of the file is left alone. `--check` writes nothing and fails listing every file
//! that would change, so CI catches manifests that are out of date.
//!
//! Unlike controller-gen, a project without RBAC rules or webhooks still gets `role.yaml`
//! (`manager-role` with the runtime's rules only) and `manifests.yaml` (no configuration):
//! `config/rbac` and `config/webhook` list them, and a new project must deploy before it
//! declares any.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubebuilder::declarations::Declarations;
use kubebuilder::{rbac, yaml};

use crate::scaffold::project::{self, Project};

#[cfg(feature = "xtask")]
mod command;
#[cfg(feature = "xtask")]
pub use command::{Args, run};

/// Writes the outputs whose file is missing or out of date in the workspace at `root`,
/// saying which.
pub fn write(root: &Path, outputs: &[Output]) -> Result<()> {
    let stale = stale(root, outputs);
    for output in &stale {
        let path = root.join(&output.path);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::write(&path, &output.content).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", output.path.display());
    }
    eprintln!(
        "manifests: {} written, {} unchanged",
        stale.len(),
        outputs.len() - stale.len()
    );
    Ok(())
}

/// The outputs whose file is missing or has other content.
fn stale<'a>(root: &Path, outputs: &'a [Output]) -> Vec<&'a Output> {
    outputs
        .iter()
        .filter(|output| {
            fs::read_to_string(root.join(&output.path)).ok().as_ref() != Some(&output.content)
        })
        .collect()
}

/// A file and the content `manifests` gives it.
#[derive(Debug)]
pub struct Output {
    /// Relative to the workspace root.
    pub path: PathBuf,
    /// The whole file: YAML documents, or a kustomization with the missing entries added.
    pub content: String,
}

/// The package of a project's declarations binary, which links its `api` and `controller`
/// and prints what their attributes declare.
pub const DECLARATIONS_PACKAGE: &str = "declarations";

/// The namespace of the manager's role in the workspace at `root`, as its PROJECT file
/// says ([`Project::manager_namespace`]); `None`, a ClusterRole, without a PROJECT file.
pub fn manager_namespace(root: &Path) -> Result<Option<String>> {
    Ok(read_project(root)?.and_then(|project| project.manager_namespace()))
}

/// The CRD options the PROJECT file of the workspace at `root` records (its `crd:`); the
/// default without one.
pub fn crd_options(root: &Path) -> Result<kubebuilder::crd::Options> {
    Ok(read_project(root)?
        .map(|project| project.crd.rendering())
        .unwrap_or_default())
}

fn read_project(root: &Path) -> Result<Option<Project>> {
    let path = root.join(project::FILE);
    match fs::read_to_string(&path) {
        Ok(text) => Project::parse(&text).map(Some),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
}

/// Every file `manifests` writes for `declarations` in the workspace at `root`, with its
/// content; the runtime's rules go to the manager's role in `manager_namespace` (see
/// [`manager_namespace`]), or to its ClusterRole.
pub fn outputs(
    root: &Path,
    declarations: &Declarations,
    manager_namespace: Option<&str>,
) -> Result<Vec<Output>> {
    let crds = &declarations.crds;
    let mut outputs = Vec::new();

    let mut crd_files = Vec::new();
    for crd in crds {
        let file = format!("bases/{}_{}.yaml", crd.spec.group, crd.spec.names.plural);
        let value = serde_json::to_value(crd)?;
        outputs.push(Output {
            path: PathBuf::from("config/crd").join(&file),
            content: yaml::to_documents([&value]),
        });
        crd_files.push(file);
    }
    outputs.extend(listed_in(
        root,
        "config/crd/kustomization.yaml",
        &crd_files,
    )?);

    let roles = rbac::with_runtime_rules(declarations.roles.clone(), manager_namespace);
    outputs.push(Output {
        path: "config/rbac/role.yaml".into(),
        content: rbac::to_yaml(&roles),
    });
    let mut role_files = Vec::new();
    for crd in crds {
        for role in kind_roles(crd, crds) {
            outputs.push(Output {
                path: PathBuf::from("config/rbac").join(&role.file),
                content: role.content,
            });
            role_files.push(role.file);
        }
    }
    outputs.extend(listed_in(
        root,
        "config/rbac/kustomization.yaml",
        &role_files,
    )?);

    outputs.push(Output {
        path: "config/webhook/manifests.yaml".into(),
        content: if declarations.webhooks.is_empty() {
            NO_WEBHOOKS.to_owned()
        } else {
            declarations.webhooks.to_yaml()
        },
    });
    Ok(outputs)
}

/// `config/webhook/manifests.yaml` while no webhook is declared.
const NO_WEBHOOKS: &str = "\
# No #[kubebuilder::webhook] is declared yet (`cargo xtask create webhook` scaffolds some):
# `cargo xtask manifests` writes their configurations here.
";

/// A per-kind role file.
struct KindRole {
    file: String,
    content: String,
}

/// What each per-kind role may do with the kind's objects; all three may read the status.
const KIND_ROLES: &[(&str, &[&str], &str)] = &[
    ("admin", &["*"], "full access ('*')"),
    (
        "editor",
        &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ],
        "read-write access",
    ),
    ("viewer", &["get", "list", "watch"], "read-only access"),
];

/// The admin, editor and viewer ClusterRoles of one kind, for cluster admins to bind to
/// users; the manager itself does not use them.
fn kind_roles(crd: &CustomResourceDefinition, crds: &[CustomResourceDefinition]) -> Vec<KindRole> {
    let spec = &crd.spec;
    let kind = spec.names.kind.to_lowercase();
    // Two groups with the same kind would write the same files: name both by group too.
    let shared_kind = crds
        .iter()
        .filter(|other| other.spec.names.kind.to_lowercase() == kind)
        .count()
        > 1;
    let stem = if shared_kind {
        format!(
            "{}_{kind}",
            spec.group.split('.').next().unwrap_or_default()
        )
    } else {
        kind.clone()
    };
    let has_status = spec.versions.iter().any(|version| {
        version
            .subresources
            .as_ref()
            .is_some_and(|s| s.status.is_some())
    });
    KIND_ROLES
        .iter()
        .map(|(role, verbs, meaning)| {
            let rule = |resource: String, verbs: &[&str]| PolicyRule {
                api_groups: Some(vec![spec.group.clone()]),
                resources: Some(vec![resource]),
                verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
                ..Default::default()
            };
            let mut rules = vec![rule(spec.names.plural.clone(), verbs)];
            if has_status {
                rules.push(rule(format!("{}/status", spec.names.plural), &["get"]));
            }
            let generated = rbac::GeneratedRole::Cluster(ClusterRole {
                metadata: ObjectMeta {
                    name: Some(format!("{}-{role}-role", stem.replace('_', "-"))),
                    ..Default::default()
                },
                rules: Some(rbac::normalize_rules(rules)),
                ..Default::default()
            });
            let header = format!(
                "# Generated by `cargo xtask manifests`: {meaning} to {} ({}) objects.\n\
                 # For cluster admins to bind to users and groups; the manager does not use it.\n",
                spec.names.kind, spec.group
            );
            KindRole {
                file: format!("{stem}_{role}_role.yaml"),
                content: header + &rbac::to_yaml(&[generated]),
            }
        })
        .collect()
}

/// The kustomization at `path` with every `entries` item in its `resources`, when some
/// are missing (see [`with_resources`]).
fn listed_in(root: &Path, path: &str, entries: &[String]) -> Result<Option<Output>> {
    let text = fs::read_to_string(root.join(path)).unwrap_or_default();
    let content =
        with_resources(&text, entries).with_context(|| format!("{path}: invalid YAML"))?;
    Ok(content.map(|content| Output {
        path: path.into(),
        content,
    }))
}

/// `kustomization` (a kustomization file's text) with every `entries` item in its
/// `resources`, or `None` when all are listed. Missing ones are added at the end of the list
/// (after its comments, unless a comment sits right on top of the next key), indented as the
/// listed ones; the rest of the (hand-edited) text is kept as it is. An empty `resources:
/// []` (kustomize refuses a kustomization with nothing in it) becomes a block list.
pub fn with_resources(kustomization: &str, entries: &[String]) -> Result<Option<String>> {
    if entries.is_empty() {
        return Ok(None);
    }
    let listed: Vec<String> = if kustomization.trim().is_empty() {
        Vec::new()
    } else {
        let parsed: serde_json::Value = serde_saphyr::from_str(kustomization)?;
        parsed["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.as_str().map(str::to_owned))
            .collect()
    };
    let missing: Vec<&String> = entries.iter().filter(|e| !listed.contains(e)).collect();
    if missing.is_empty() {
        return Ok(None);
    }
    let mut lines: Vec<String> = kustomization.lines().map(str::to_owned).collect();
    let added = missing.iter().map(|entry| format!("- {entry}"));
    let key = lines
        .iter()
        .position(|line| matches!(line.trim_end(), "resources:" | "resources: []"));
    match key {
        Some(start) => {
            lines[start] = "resources:".to_owned();
            // The block ends at the next top-level key, less the comment lines right on
            // top of that key (they are about it) and blank lines.
            let mut end = lines[start + 1..]
                .iter()
                .position(|line| !line.is_empty() && !line.starts_with(['-', '#', ' ']))
                .map_or(lines.len(), |offset| start + 1 + offset);
            if end < lines.len() {
                while end > start + 1 && lines[end - 1].starts_with('#') {
                    end -= 1;
                }
            }
            while end > start + 1 && lines[end - 1].trim().is_empty() {
                end -= 1;
            }
            // New items take the indentation of the listed ones.
            let indent = lines[start + 1..end]
                .iter()
                .rfind(|line| line.trim_start().starts_with('-'))
                .map(|line| line[..line.len() - line.trim_start().len()].to_owned())
                .unwrap_or_default();
            lines.splice(end..end, added.map(|item| format!("{indent}{item}")));
        }
        None => {
            lines.push("resources:".to_owned());
            lines.extend(added);
        }
    }
    Ok(Some(lines.join("\n") + "\n"))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceDefinitionSpec, CustomResourceDefinitionVersion, CustomResourceValidation,
        JSONSchemaProps,
    };

    use super::*;

    #[test]
    fn declarations_read_back_to_the_last_digit() {
        // serde_json reads this one a unit in the last place off unless told to round-trip.
        let maximum = 985.690_694_632_869_5;
        let version = CustomResourceDefinitionVersion {
            schema: Some(CustomResourceValidation {
                open_api_v3_schema: Some(JSONSchemaProps {
                    maximum: Some(maximum),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        };
        let declarations = Declarations {
            crds: vec![CustomResourceDefinition {
                spec: CustomResourceDefinitionSpec {
                    versions: vec![version],
                    ..Default::default()
                },
                ..Default::default()
            }],
            ..Default::default()
        };
        let json = serde_json::to_vec(&declarations).unwrap();
        assert_eq!(
            serde_json::from_slice::<Declarations>(&json).unwrap(),
            declarations
        );
    }

    fn kustomization(text: &str, entries: &[&str]) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("kustomization.yaml"), text).unwrap();
        let entries: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
        listed_in(dir.path(), "kustomization.yaml", &entries)
            .unwrap()
            .map(|output| output.content)
    }

    #[test]
    fn missing_and_different_files_are_stale() {
        let root = tempfile::tempdir().unwrap();
        let output = |path: &str, content: &str| Output {
            path: path.into(),
            content: content.into(),
        };
        let outputs = [
            output("same.yaml", "a: 1\n"),
            output("changed.yaml", "a: 2\n"),
            output("missing.yaml", "a: 3\n"),
        ];
        fs::write(root.path().join("same.yaml"), "a: 1\n").unwrap();
        fs::write(root.path().join("changed.yaml"), "a: 1\n").unwrap();
        let stale: Vec<_> = stale(root.path(), &outputs)
            .iter()
            .map(|o| o.path.clone())
            .collect();
        assert_eq!(
            stale,
            [PathBuf::from("changed.yaml"), PathBuf::from("missing.yaml")]
        );
    }

    #[test]
    fn listed_entries_leave_the_file_alone() {
        assert_eq!(kustomization("resources:\n- a.yaml\n", &["a.yaml"]), None);
    }

    #[test]
    fn missing_entries_go_after_the_last_resource_keeping_comments_and_other_keys() {
        let text =
            "# mine\nresources:\n- a.yaml\n# a comment\n- b.yaml\n\npatches:\n- path: p.yaml\n";
        assert_eq!(
            kustomization(text, &["a.yaml", "c.yaml"]).unwrap(),
            "# mine\nresources:\n- a.yaml\n# a comment\n- b.yaml\n- c.yaml\n\npatches:\n- path: p.yaml\n"
        );
    }

    #[test]
    fn indented_lists_stay_indented() {
        assert_eq!(
            kustomization("resources:\n  - a.yaml\n", &["b.yaml"]).unwrap(),
            "resources:\n  - a.yaml\n  - b.yaml\n"
        );
    }

    #[test]
    fn an_empty_list_becomes_a_block() {
        assert_eq!(
            kustomization("# samples\nresources: []\n", &["a.yaml", "b.yaml"]).unwrap(),
            "# samples\nresources:\n- a.yaml\n- b.yaml\n"
        );
    }

    #[test]
    fn trailing_comments_belong_to_the_list_unless_they_sit_on_the_next_key() {
        assert_eq!(
            kustomization("resources:\n- a.yaml\n# Per kind:\n", &["b.yaml"]).unwrap(),
            "resources:\n- a.yaml\n# Per kind:\n- b.yaml\n"
        );
        assert_eq!(
            kustomization(
                "resources:\n- a.yaml\n# Per kind:\n\n# The patches:\npatches: []\n",
                &["b.yaml"]
            )
            .unwrap(),
            "resources:\n- a.yaml\n# Per kind:\n- b.yaml\n\n# The patches:\npatches: []\n"
        );
        assert_eq!(
            kustomization(
                "resources:\n- a.yaml\n# The patches:\npatches: []\n",
                &["b.yaml"]
            )
            .unwrap(),
            "resources:\n- a.yaml\n- b.yaml\n# The patches:\npatches: []\n"
        );
    }

    #[test]
    fn a_kustomization_without_resources_gets_the_key() {
        assert_eq!(
            kustomization("namespace: x\n", &["a.yaml"]).unwrap(),
            "namespace: x\nresources:\n- a.yaml\n"
        );
        assert_eq!(
            kustomization("", &["a.yaml"]).unwrap(),
            "resources:\n- a.yaml\n"
        );
    }
}
