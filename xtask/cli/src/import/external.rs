//! `import crd --external`: another project's kinds (cert-manager's Certificate, an
//! ExternalSecret) as a library crate of the project the import is run in, for its
//! controllers (`create api --resource=false --external-api-path`), as Go projects import
//! another module's API package. The types are those `import crd` makes for a project of
//! its own, each version module `#[kubebuilder::skip]` (controller-gen's package marker): the
//! kinds have their serde and kube impls and `crd()`, but register no CRD, so `cargo xtask
//! manifests` writes none of them. The project does not own them; the other project
//! installs them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::project::{Imported, new_directory, version_module};
use super::rust;
use crate::scaffold::plan::Plan;
use crate::scaffold::project;

/// The crate made: its name, its directory, and the project it is a member of.
pub struct Made {
    /// The package name (`external-secrets-api`).
    pub name: String,
    /// Its directory, relative to the project's root.
    pub dir: String,
    /// The project's root.
    pub root: PathBuf,
}

/// Makes the crate of `imported` at `dir` (created; if it exists, it must be empty), a
/// member of the kubebuilder-rs project it lies in, which its controller crate depends on.
pub fn write(dir: &Path, name: Option<&str>, imported: &Imported) -> Result<Made> {
    let target = new_directory(dir)?;
    let root = target
        .ancestors()
        .skip(1)
        .find(|dir| dir.join(project::FILE).is_file() && dir.join("Cargo.toml").is_file())
        .with_context(|| {
            format!(
                "--external makes a crate inside a kubebuilder-rs project (a directory with \
                 PROJECT and Cargo.toml), for its controllers; {} is in none",
                target.display()
            )
        })?
        .to_owned();
    let relative = target
        .strip_prefix(&root)
        .expect("an ancestor")
        .to_string_lossy()
        .into_owned();
    let name = match name {
        Some(name) => name.to_owned(),
        None => target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        || name.starts_with(|c: char| c.is_ascii_digit())
    {
        bail!("{name:?} is no crate name: pass --name");
    }
    let mut plan = Plan::new(&root);
    add_to_workspace(&mut plan, &name, &relative)?;
    write_sources(&mut plan, &relative, &name, imported)?;
    plan.format_rust()?;
    plan.apply()?;
    Ok(Made {
        name,
        dir: relative,
        root,
    })
}

/// The crate as a member of the workspace and one of its dependencies, which the controller
/// crate depends on.
fn add_to_workspace(plan: &mut Plan, name: &str, relative: &str) -> Result<()> {
    let manifest = plan
        .read("Cargo.toml")?
        .context("the project has no Cargo.toml")?;
    let Some(members) = manifest
        .lines()
        .find(|line| line.starts_with("members = [") && line.ends_with(']'))
    else {
        bail!("the project's Cargo.toml has no one-line `[workspace]` members list");
    };
    let dependencies = manifest
        .lines()
        .find(|line| line.starts_with("controller = { path = "))
        .or_else(|| {
            manifest
                .lines()
                .find(|line| *line == "[workspace.dependencies]")
        })
        .context("the project's Cargo.toml has no [workspace.dependencies]")?;
    if manifest.contains(&format!("\n{name} = ")) {
        bail!("the project's Cargo.toml has a dependency {name} already");
    }
    let with_member = format!("{}, \"{relative}\"]", members.trim_end_matches(']'));
    let with_dependency = format!("{dependencies}\n{name} = {{ path = \"{relative}\" }}");
    let manifest =
        manifest
            .replacen(members, &with_member, 1)
            .replacen(dependencies, &with_dependency, 1);
    plan.write("Cargo.toml", manifest);
    let controller = plan
        .read("controller/Cargo.toml")?
        .context("the project has no controller crate (controller/Cargo.toml)")?;
    plan.write(
        "controller/Cargo.toml",
        controller.replacen(
            "[dependencies]\n",
            &format!("[dependencies]\n{name}.workspace = true\n"),
            1,
        ),
    );
    Ok(())
}

/// `Cargo.toml`, `src/lib.rs` and a module per group version, each of the version's files
/// an inline module under `#[kubebuilder::skip]` (the attribute sees only inline items).
fn write_sources(plan: &mut Plan, relative: &str, name: &str, imported: &Imported) -> Result<()> {
    let groups: BTreeSet<&str> = imported.versions.iter().map(|v| v.group.as_str()).collect();
    let groups: Vec<&str> = groups.into_iter().collect();
    plan.write(
        &format!("{relative}/Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion.workspace = true\nedition.workspace = true\n\
             rust-version.workspace = true\npublish.workspace = true\ndescription = \"The kinds \
             of {}, imported from their CRDs: another project's API, which this project's \
             controllers use and whose CRDs it does not own.\"\n\n[dependencies]\n\
             k8s-openapi.workspace = true\nkubebuilder.workspace = true\n{}",
            groups.join(", "),
            if imported.uses_json() {
                "serde_json.workspace = true\n"
            } else {
                ""
            }
        ),
    );
    let mut lib = format!(
        "//! The kinds of {} as Rust types, imported from their CRDs with `cargo kubebuilder \
         import crd --external`: another project's API, for this project's controllers \
         (`cargo xtask create api --resource=false --external-api-path`). Each version \
         module is `#[kubebuilder::skip]`: its kinds register no CRD, so `cargo xtask \
         manifests` writes none of them.\n\n",
        groups.join(", ")
    );
    // The modules each file declares (`src/lib.rs`: a group's, or a version's).
    let mut parents: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for version in &imported.versions {
        let module = version_module(&version.group, &version.version, imported.multigroup);
        let path: Vec<&str> = module.trim_start_matches("crate::").split("::").collect();
        for depth in 0..path.len() {
            let parent = if depth == 0 {
                "src/lib.rs".to_owned()
            } else {
                format!("src/{}/mod.rs", path[..depth].join("/"))
            };
            parents
                .entry(parent)
                .or_default()
                .insert(path[depth].to_owned());
        }
        plan.write(
            &format!("{relative}/src/{}/mod.rs", path.join("/")),
            skipped_version(version),
        );
    }
    if let Some(kubernetes) = &imported.kubernetes {
        plan.write(
            &format!("{relative}/src/{}.rs", rust::KUBERNETES_MODULE),
            kubernetes.clone(),
        );
        parents
            .entry("src/lib.rs".to_owned())
            .or_default()
            .insert(rust::KUBERNETES_MODULE.to_owned());
    }
    for (parent, modules) in parents {
        let declared: String = modules.iter().map(|m| format!("pub mod {m};\n")).collect();
        if parent == "src/lib.rs" {
            lib.push_str(&declared);
        } else {
            plan.write(&format!("{relative}/{parent}"), declared);
        }
    }
    plan.write(&format!("{relative}/src/lib.rs"), lib);
    Ok(())
}

/// A version's module: each of its files inline under `#[kubebuilder::skip]`.
fn skipped_version(version: &rust::Version) -> String {
    let mut text = format!(
        "//! Version `{}` of the API group `{}`: another project's, whose CRDs it installs.\n",
        version.version, version.group
    );
    for (stem, source) in &version.files {
        text.push_str(&format!(
            "\n#[kubebuilder::skip]\nmod {stem} {{\n{source}\n}}\npub use {stem}::*;\n"
        ));
    }
    text
}
