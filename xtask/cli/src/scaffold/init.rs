//! `init <dir> --domain <domain> [--name <project>] [--local <checkout>]`
//! (`cargo kubebuilder init`, or a project's `cargo xtask init`): a new workspace with this
//! repository's layout (`api/`, `controller/` with the manager, `xtask/`, `config/`) that
//! builds, renders its manifests and passes its own `cargo xtask test` as it is.
//!
//! The project depends on the kubebuilder crates by version, as a crates.io user gets
//! them. `--local` points it at a checkout of kubebuilder for Rust instead, adding to each
//! of them a `path` relative to the project: nothing the project holds names a directory of
//! the machine it was made on.
//!
//! Not through a `[patch.crates-io]` section: a lock file does not say where a path
//! package is, and cargo takes a lock entry of a name for the last path package of that
//! name it finds, through the patches' dependencies (dev-dependencies included) after the
//! members. The checkout's own `api` is one of those, so the project's `api` would never
//! be locked, and its patched `kubebuilder` dependency would send every cargo command to
//! the crates.io index. A dependency with a path is locked by its path instead.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};
use kubebuilder::declarations::Declarations;

use super::names;
use super::plan::Plan;
use super::project::{self, Project};
use super::templates::{self, Values, config, workspace};
use crate::manifests;

/// This repository's workspace manifest: a new project shares its dependency pins. A copy
/// kept in this crate (equal to the workspace's, which a test checks), so that the
/// packaged crate has it.
const OUR_MANIFEST: &str = include_str!("../../pins/workspace.toml");
/// Its lock file, copied the same way: a new project starts from the versions this
/// repository is tested with (cargo drops the packages it does not use).
const OUR_LOCK: &str = include_str!("../../pins/workspace.lock");

/// The crates of this repository a project depends on.
const KUBEBUILDER_CRATES: &[&str] = &[
    "kubebuilder",
    "kubebuilder-cli",
    "kubebuilder-envtest",
    "kubebuilder-runtime",
];

/// A file every checkout of kubebuilder for Rust has, to tell one from another directory.
const CHECKOUT_MARKER: &str = "kubebuilder/Cargo.toml";

/// The options of `init` (kubebuilder's `init`).
#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// The new project's directory (created; if it exists, it must be empty).
    pub dir: PathBuf,
    /// The domain of the project's API groups (`<group>.<domain>`), e.g. `example.com`.
    #[arg(long)]
    pub domain: String,
    /// The project's name, which prefixes its namespace and objects (default: the
    /// directory's name).
    #[arg(long)]
    pub name: Option<String>,
    /// Use the kubebuilder crates of the checkout at this path instead of crates.io
    /// (each dependency on them gets a `path`, relative to the project).
    #[arg(long, value_name = "CHECKOUT")]
    pub local: Option<PathBuf>,
    /// Watch and be granted only the manager's own namespace: its rules are a Role, and
    /// the manager runs with `--namespace=$WATCH_NAMESPACE` (the pod's namespace).
    #[arg(long)]
    pub namespaced: bool,
    /// The license of the project's code, on each new Rust file's header and in its
    /// crates' `license`.
    #[arg(long, value_enum, default_value_t)]
    pub license: License,
    /// The copyright holder in each new Rust file's header (default: `The <name> Authors`).
    #[arg(long)]
    pub owner: Option<String>,
}

/// The licenses `init --license` knows (kubebuilder's `--license`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum License {
    /// The Apache License 2.0: `license = "Apache-2.0"`, and a copyright and SPDX header on
    /// each Rust file `init` and `create` write.
    #[default]
    Apache2,
    /// No license: no `license` field and no header.
    None,
}

/// The header `init` and `create` put on every Rust file they make, when the project has
/// one (kubebuilder's `hack/boilerplate.go.txt`): edit it to change what later files get.
pub const BOILERPLATE: &str = "hack/boilerplate.rs.txt";

/// Makes the project, then says what to run next.
pub fn run(args: &Args) -> Result<()> {
    let plan = plan(args)?;
    let root = plan.root().to_owned();
    super::apply(plan)?;
    eprintln!(
        "init: a new project in {}. Next:\n  cd {}\n  cargo xtask create api --group <group> \
         --version v1 --kind <Kind>\n  cargo xtask run",
        root.display(),
        args.dir.display()
    );
    Ok(())
}

/// Every file of the new project, or why it cannot be made.
pub fn plan(args: &Args) -> Result<Plan> {
    names::validate_domain(&args.domain)?;
    let root = std::path::absolute(&args.dir)
        .with_context(|| format!("resolving {}", args.dir.display()))?;
    let name = match &args.name {
        Some(name) => name.clone(),
        None => root
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    names::validate_project_name(&name)?;
    if root
        .read_dir()
        .is_ok_and(|mut entries| entries.next().is_some())
    {
        bail!(
            "{} is not empty: `init` makes a project in a new or empty directory",
            root.display()
        );
    }
    let local = args
        .local
        .as_deref()
        .map(|checkout| local_checkout(checkout, &root))
        .transpose()?;

    let mut plan = Plan::new(&root);
    plan_templates(&mut plan, args, &name);
    let mut project = Project::new(&args.domain, &name);
    project.namespaced = args.namespaced;
    plan.write(project::FILE, project.to_yaml());
    plan.write("Cargo.toml", workspace_manifest(local.as_deref())?);
    plan.write("Cargo.lock", OUR_LOCK.to_owned());
    // What `manifests` writes for a project that declares nothing yet, so that `manifests
    // --check` passes and config/ deploys from the start.
    let declared = Declarations::default();
    for output in manifests::outputs(&root, &declared, project.manager_namespace().as_deref())? {
        plan.write(&output.path.to_string_lossy(), output.content);
    }
    if args.license == License::None {
        without_license(&mut plan)?;
    }
    plan.format_rust()?;
    if let Some(header) = boilerplate(args.license, args.owner.as_deref(), &name) {
        plan.write(BOILERPLATE, header);
    }
    super::prepend_boilerplate(&mut plan)?;
    Ok(plan)
}

/// The workspace files and `config/`, rendered for the project `name`.
fn plan_templates(plan: &mut Plan, args: &Args, name: &str) {
    let (manager_env, manager_namespace_arg) = if args.namespaced {
        (
            config::NAMESPACED_MANAGER_ENV,
            config::NAMESPACED_MANAGER_ARG,
        )
    } else {
        ("", "")
    };
    let values = Values::default()
        .with("project_name", name)
        .with("domain", args.domain.as_str())
        .with("leader_election_id", leader_election_id(&args.domain, name))
        .with("manager_env", manager_env)
        .with("manager_namespace_arg", manager_namespace_arg);
    for (path, template) in workspace::FILES {
        plan.write(path, templates::render(template, &values));
    }
    for (path, template) in config::FILES {
        plan.write(
            &format!("config/{path}"),
            templates::render(template, &values),
        );
    }
    if args.namespaced {
        plan.write(
            "config/rbac/role_binding.yaml",
            config::NAMESPACED_ROLE_BINDING.to_owned(),
        );
    }
}

/// The Rust files' header for `license`: a copyright line for `owner` (by default the
/// project's authors) this year, and the license's SPDX identifier.
fn boilerplate(license: License, owner: Option<&str>, name: &str) -> Option<String> {
    let spdx = match license {
        License::Apache2 => "Apache-2.0",
        License::None => return None,
    };
    let owner = owner.map_or_else(|| format!("The {name} Authors"), str::to_owned);
    let year = jiff::Zoned::now().year();
    Some(format!(
        "// Copyright {year} {owner}.\n// SPDX-License-Identifier: {spdx}\n\n"
    ))
}

/// The planned manifests without their `license` (`init --license none`).
fn without_license(plan: &mut Plan) -> Result<()> {
    for path in [
        "Cargo.toml",
        "api/Cargo.toml",
        "controller/Cargo.toml",
        "xtask/Cargo.toml",
        "xtask/declarations/Cargo.toml",
    ] {
        let text = plan
            .read(path)?
            .with_context(|| format!("{path} is planned"))?;
        let kept: Vec<&str> = text
            .lines()
            .filter(|line| !line.starts_with("license = ") && *line != "license.workspace = true")
            .collect();
        plan.write(path, kept.join("\n") + "\n");
    }
    Ok(())
}

/// The checkout `--local` names, as a path relative to the project at `root`.
fn local_checkout(checkout: &Path, root: &Path) -> Result<PathBuf> {
    let checkout = checkout
        .canonicalize()
        .with_context(|| format!("--local {}", checkout.display()))?;
    if !checkout.join(CHECKOUT_MARKER).is_file() {
        bail!(
            "--local {}: not a checkout of kubebuilder for Rust (it has no {CHECKOUT_MARKER})",
            checkout.display()
        );
    }
    Ok(relative_path(&canonical_dir(root)?, &checkout))
}

/// `dir` with symbolic links resolved, although its last components may not exist yet.
fn canonical_dir(dir: &Path) -> Result<PathBuf> {
    let existing = dir
        .ancestors()
        .find(|ancestor| ancestor.exists())
        .context("no ancestor of the project directory exists")?;
    let rest = dir.strip_prefix(existing)?;
    Ok(existing
        .canonicalize()
        .with_context(|| format!("resolving {}", existing.display()))?
        .join(rest))
}

/// The path from the directory `from` to `to`, both absolute and without `..`.
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let shared = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let ups = from.components().count() - shared;
    std::iter::repeat_n(Component::ParentDir, ups)
        .map(|up| up.as_os_str().to_owned())
        .chain(
            to.components()
                .skip(shared)
                .map(|c| c.as_os_str().to_owned()),
        )
        .collect()
}

/// kubebuilder's leader-election ID: the FNV-1a hash of the project's repository
/// (`<domain>/<name>` here), in hex, then the domain.
fn leader_election_id(domain: &str, name: &str) -> String {
    let hash = format!("{domain}/{name}")
        .bytes()
        .fold(0x811c_9dc5_u32, |hash, byte| {
            (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
        });
    format!("{hash:08x}.{domain}")
}

/// The new workspace's `Cargo.toml`: this repository's, with the project's members, its
/// own crates in `[workspace.dependencies]` replaced by the project's and by the
/// kubebuilder crates' versions, with the paths of `local` (a checkout, relative to the
/// project) when given; every other pin, and the profiles, as they are.
fn workspace_manifest(local: Option<&Path>) -> Result<String> {
    let mut manifest = String::from(
        "[workspace]\nresolver = \"3\"\n\
         members = [\"api\", \"controller\", \"xtask\", \"xtask/declarations\"]\n",
    );
    // The sections after our [workspace], whose members are ours alone.
    for section in OUR_MANIFEST.split("\n[").skip(1) {
        let section = format!("[{}", section.trim_end());
        let section = match section.strip_prefix("[workspace.dependencies]\n") {
            Some(dependencies) => dependencies_section(dependencies, local)?,
            None => section,
        };
        manifest += &format!("\n{section}\n");
    }
    Ok(manifest)
}

/// One of our own crates as our `[workspace.dependencies]` names it:
/// `<name> = { version = "<version>", path = "<path>" }`.
struct OwnCrate<'a> {
    name: &'a str,
    version: &'a str,
    path: &'a str,
}

impl<'a> OwnCrate<'a> {
    /// The crate a line of our own crates' block names, if it is a published one (it has
    /// a version).
    fn parse(line: &'a str) -> Option<Self> {
        let (name, rest) = line.split_once(" = { version = \"")?;
        let (version, rest) = rest.split_once("\", path = \"")?;
        let path = rest.strip_suffix("\" }")?;
        Some(Self {
            name,
            version,
            path,
        })
    }
}

/// Our `[workspace.dependencies]`, which starts with the block of this repository's crates
/// (up to the first blank line), for a new project: the kubebuilder crates by version, and
/// with `local` from that checkout; then the pins its crates use.
fn dependencies_section(dependencies: &str, local: Option<&Path>) -> Result<String> {
    let (own_crates, pins) = dependencies
        .split_once("\n\n")
        .context("our [workspace.dependencies] starts with the block of our own crates")?;
    let pins = used_pins(pins, &workspace::member_dependencies());
    let own_crates: Vec<OwnCrate> = own_crates.lines().filter_map(OwnCrate::parse).collect();
    let mut section = String::from(
        "[workspace.dependencies]\n# This project's crates.\napi = { path = \"api\" }\n\
         controller = { path = \"controller\" }\n",
    );
    section += match local {
        None => "# kubebuilder for Rust.\n",
        Some(_) => {
            "# kubebuilder for Rust, from a checkout (`init --local`); without the paths, from \
             crates.io.\n"
        }
    };
    for name in KUBEBUILDER_CRATES {
        let own = own_crates
            .iter()
            .find(|own| own.name == *name)
            .with_context(|| format!("our Cargo.toml does not give {name} a version and a path"))?;
        section += &match local {
            None => format!("{name} = \"{}\"\n", own.version),
            Some(checkout) => format!(
                "{name} = {{ version = \"{}\", path = \"{}\" }}\n",
                own.version,
                checkout.join(own.path).display()
            ),
        };
    }
    Ok(format!("{section}\n{pins}"))
}

/// The blocks of `pins` (separated by blank lines) cut to the dependencies named `used`: a
/// comment before a pin goes with it, and a block's heading (the comments it starts with)
/// stays when one of its pins does.
fn used_pins(pins: &str, used: &BTreeSet<&str>) -> String {
    let mut blocks = Vec::new();
    for block in pins.split("\n\n") {
        let lines: Vec<&str> = block.lines().collect();
        let heading = lines
            .iter()
            .take_while(|line| line.starts_with('#'))
            .count();
        let mut kept = Vec::new();
        let mut comments = Vec::new();
        for line in &lines[heading..] {
            if line.starts_with('#') {
                comments.push(*line);
                continue;
            }
            let name = line.split([' ', '=']).next().unwrap_or_default();
            if used.contains(name) {
                kept.append(&mut comments);
                kept.push(*line);
            }
            comments.clear();
        }
        if !kept.is_empty() {
            blocks.push([&lines[..heading], &kept[..]].concat().join("\n"));
        }
    }
    blocks.join("\n\n")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::scaffold::layout::KindLayout;
    use crate::scaffold::names::Kind;
    use crate::scaffold::templates::kind::{CONTROLLERS_MARKER, WEBHOOKS_MARKER};

    /// This repository, which `init` would have made for its project, then `create` and
    /// `manifests` extended with the CronJob: the templates and it must not drift apart.
    fn ours(path: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn our_project() -> Project {
        Project::parse(&ours(project::FILE)).unwrap()
    }

    fn our_values(project: &Project) -> Values {
        Values::default()
            .with("project_name", project.project_name.as_str())
            .with("domain", project.domain.as_str())
            .with(
                "leader_election_id",
                leader_election_id(&project.domain, &project.project_name),
            )
            .with("manager_env", "")
            .with("manager_namespace_arg", "")
    }

    #[test]
    fn our_manager_is_the_init_template_with_the_cronjob_registered() {
        let project = our_project();
        let dir = tempfile::tempdir().unwrap();
        let mut plan = Plan::new(dir.path());
        plan.write(
            "main.rs",
            templates::render(workspace::MAIN_RS, &our_values(&project)),
        );
        // The CronJob's module predates the scaffolds' naming (`cronjob`, not `cron_job`)
        // and its setup takes a clock too; a scaffolded kind's takes the manager alone.
        plan.insert_at_marker(
            "main.rs",
            CONTROLLERS_MARKER,
            "manager = controller::cronjob::setup_with_manager(manager, \
             std::sync::Arc::new(kubebuilder_runtime::SystemClock));",
        )
        .unwrap();
        for line in [
            "manager = manager.webhooks(controller::cronjob::webhook::webhooks());",
            "manager = manager.webhooks(controller::cronjob::webhook_v2::webhooks());",
            "manager = manager.conversion::<api::v1::CronJob>();",
        ] {
            plan.insert_at_marker("main.rs", WEBHOOKS_MARKER, line)
                .unwrap();
        }
        plan.format_rust().unwrap();
        assert_eq!(
            plan.read("main.rs").unwrap().unwrap(),
            ours("controller/src/main.rs")
        );
    }

    /// The kustomization entries `manifests` and `create api` add for `kinds` (once per kind
    /// for CRDs and roles, once per version for samples).
    fn kind_entries(path: &str, kinds: &[Kind]) -> Vec<String> {
        let mut entries = kind_entries_per_version(path, kinds);
        let mut seen = BTreeSet::new();
        entries.retain(|entry| seen.insert(entry.clone()));
        entries
    }

    fn kind_entries_per_version(path: &str, kinds: &[Kind]) -> Vec<String> {
        match path {
            "crd/kustomization.yaml" => kinds
                .iter()
                .map(|k| format!("bases/{}_{}.yaml", k.full_group(), k.plural))
                .collect(),
            "rbac/kustomization.yaml" => kinds
                .iter()
                .flat_map(|k| {
                    ["admin", "editor", "viewer"]
                        .map(|role| format!("{}_{role}_role.yaml", k.lower()))
                })
                .collect(),
            "samples/kustomization.yaml" => kinds
                .iter()
                .map(|k| format!("{}_{}_{}.yaml", k.group, k.version, k.lower()))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// `config/default/kustomization.yaml` with the CA injection `create webhook
    /// --conversion` adds for each kind that converts; other files as they are.
    fn with_ca_injection(
        path: &str,
        text: String,
        converting: &[Kind],
        project: &Project,
    ) -> String {
        use crate::scaffold::templates::kind as template;
        if path != "default/kustomization.yaml" {
            return text;
        }
        let mut plan = crate::scaffold::plan::Plan::new(Path::new("/nonexistent"));
        plan.write(path, text);
        for kind in converting {
            let values = crate::scaffold::kind_values(kind, project, &KindLayout::flat());
            for (marker, line) in [
                (
                    template::CRD_CA_INJECTION_NAMESPACE_MARKER,
                    template::CRD_CA_INJECTION_NAMESPACE_LINE,
                ),
                (
                    template::CRD_CA_INJECTION_NAME_MARKER,
                    template::CRD_CA_INJECTION_NAME_LINE,
                ),
            ] {
                let line = templates::render(line, &values);
                plan.insert_at_marker(path, marker, &line).unwrap();
            }
        }
        plan.read(path).unwrap().unwrap()
    }

    #[test]
    fn our_config_is_the_init_config_with_its_webhooks_on_and_the_cronjob_listed() {
        let project = our_project();
        let kinds: Vec<Kind> = project
            .resources
            .iter()
            .map(project::Resource::kind)
            .collect();
        let converting: Vec<Kind> = project
            .resources
            .iter()
            .filter(|r| r.webhooks.as_ref().is_some_and(|w| w.conversion))
            .map(project::Resource::kind)
            .collect();
        for (path, template) in config::FILES {
            // Ours has webhooks: its webhook sections are on.
            let rendered =
                config::with_webhook_sections(&templates::render(template, &our_values(&project)));
            let listed = manifests::with_resources(&rendered, &kind_entries(path, &kinds))
                .unwrap()
                .unwrap_or(rendered);
            let expected = with_ca_injection(path, listed, &converting, &project);
            assert_eq!(expected, ours(&format!("config/{path}")), "config/{path}");
        }

        // And every file of our config/ is a template, or generated per kind.
        let generated: BTreeSet<String> = ["rbac/role.yaml", "webhook/manifests.yaml"]
            .into_iter()
            .map(str::to_owned)
            .chain(kinds.iter().flat_map(|kind| {
                kind_entries("crd/kustomization.yaml", std::slice::from_ref(kind))
                    .into_iter()
                    .map(|file| format!("crd/{file}"))
                    .chain(
                        kind_entries("rbac/kustomization.yaml", std::slice::from_ref(kind))
                            .into_iter()
                            .map(|file| format!("rbac/{file}")),
                    )
                    .chain(
                        kind_entries("samples/kustomization.yaml", std::slice::from_ref(kind))
                            .into_iter()
                            .map(|file| format!("samples/{file}")),
                    )
            }))
            .collect();
        let templated: BTreeSet<String> = config::FILES
            .iter()
            .map(|(path, _)| (*path).to_owned())
            .collect();
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
        let mut untracked = Vec::new();
        let mut dirs = vec![config.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let relative = path
                    .strip_prefix(&config)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if !templated.contains(&relative) && !generated.contains(&relative) {
                    untracked.push(relative);
                }
            }
        }
        assert!(
            untracked.is_empty(),
            "config/ files init does not write: {untracked:?}"
        );
    }

    #[test]
    fn our_declarations_binary_is_the_init_template() {
        assert_eq!(
            workspace::DECLARATIONS_CARGO_TOML,
            ours("xtask/declarations/Cargo.toml")
        );
        assert_eq!(
            workspace::DECLARATIONS_MAIN_RS,
            ours("xtask/declarations/src/main.rs")
        );
        assert!(workspace::DECLARATIONS_CARGO_TOML.contains(&format!(
            "\nname = \"{}\"\n",
            manifests::DECLARATIONS_PACKAGE
        )));
    }

    #[test]
    fn our_dockerfile_is_the_init_template() {
        assert_eq!(workspace::DOCKERFILE, ours("Dockerfile"));
    }

    #[test]
    fn the_leader_election_id_is_kubebuilders() {
        // The ID of kubebuilder's tutorial project (`tutorial.kubebuilder.io/project`).
        assert_eq!(
            leader_election_id("tutorial.kubebuilder.io", "project"),
            "80807133.tutorial.kubebuilder.io"
        );
    }

    #[test]
    fn the_pins_are_this_workspaces() {
        for (copy, ours_at) in [(OUR_MANIFEST, "Cargo.toml"), (OUR_LOCK, "Cargo.lock")] {
            assert!(
                copy == ours(ours_at),
                "xtask/cli/pins/ is stale: cp {ours_at} xtask/cli/pins/workspace.{}",
                ours_at.rsplit('.').next().unwrap()
            );
        }
    }

    #[test]
    fn the_manifest_shares_the_pins_and_names_the_kubebuilder_crates_by_version() {
        let manifest = workspace_manifest(None).unwrap();
        assert!(manifest.starts_with(
            "[workspace]\nresolver = \"3\"\n\
             members = [\"api\", \"controller\", \"xtask\", \"xtask/declarations\"]\n\n\
             [workspace.package]\n"
        ));
        assert!(manifest.contains(
            "[workspace.dependencies]\n# This project's crates.\napi = { path = \"api\" }\n\
             controller = { path = \"controller\" }\n\
             # kubebuilder for Rust.\n\
             kubebuilder = \"0.1.0\"\n\
             kubebuilder-cli = \"0.1.0\"\n\
             kubebuilder-envtest = \"0.1.0\"\n\
             kubebuilder-runtime = \"0.1.0\"\n\n"
        ));
        assert!(!manifest.contains("[patch"));
        assert!(!manifest.contains("path = \"/"), "{manifest}");
        // Every line of this repository's manifest outside its dependencies is kept.
        let (ours_before, ours_after) = sections_around_dependencies(OUR_MANIFEST);
        let (theirs_before, theirs_after) = sections_around_dependencies(&manifest);
        assert_eq!(theirs_after, ours_after);
        assert!(ours_before.ends_with(theirs_before.split_once("[workspace.package]").unwrap().1));
    }

    /// A manifest's text before its `[workspace.dependencies]` and after that section.
    fn sections_around_dependencies(manifest: &str) -> (&str, &str) {
        let (before, rest) = manifest.split_once("[workspace.dependencies]").unwrap();
        let after = &rest[rest.find("\n[").unwrap()..];
        (before, after)
    }

    /// The names of a manifest's `[workspace.dependencies]`.
    fn pinned(manifest: &str) -> BTreeSet<String> {
        let section = sections_around_dependencies(manifest).1;
        let rest = manifest.split_once("[workspace.dependencies]\n").unwrap().1;
        rest[..rest.len() - section.len()]
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| line.split([' ', '=']).next().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn a_project_pins_what_its_crates_use_with_this_workspaces_versions() {
        let manifest = workspace_manifest(None).unwrap();
        let used: BTreeSet<String> = workspace::member_dependencies()
            .into_iter()
            .map(str::to_owned)
            .collect();
        assert_eq!(pinned(&manifest), used);
        let ours: Vec<&str> = OUR_MANIFEST.lines().collect();
        for line in manifest
            .lines()
            .skip_while(|line| !line.starts_with("# Kubernetes."))
        {
            assert!(
                ours.contains(&line) || line.is_empty(),
                "{line:?} is not ours"
            );
        }
        assert!(
            manifest.contains("k8s-openapi = { version = \"0.29\""),
            "{manifest}"
        );
        for framework_only in ["syn", "trybuild", "proptest", "croner", "axum"] {
            assert!(
                !pinned(&manifest).contains(framework_only),
                "{framework_only}"
            );
        }
    }

    #[test]
    fn unused_pins_go_with_their_comments_and_an_emptied_block_goes_whole() {
        let pins = "# Data.\na = \"1\"\n# Why b.\nb = \"2\"\nc = \"3\"\n\n# Tests.\nd = \"4\"";
        let used = BTreeSet::from(["a", "c"]);
        assert_eq!(used_pins(pins, &used), "# Data.\na = \"1\"\nc = \"3\"");
        let used = BTreeSet::from(["b", "d"]);
        assert_eq!(
            used_pins(pins, &used),
            "# Data.\n# Why b.\nb = \"2\"\n\n# Tests.\nd = \"4\""
        );
    }

    #[test]
    fn a_local_checkout_gives_every_kubebuilder_crate_a_relative_path() {
        let manifest = workspace_manifest(Some(Path::new("../kubebuilder-rs"))).unwrap();
        assert!(manifest.contains(
            "# kubebuilder for Rust, from a checkout (`init --local`); without the paths, from \
             crates.io.\n\
             kubebuilder = { version = \"0.1.0\", path = \"../kubebuilder-rs/kubebuilder\" }\n\
             kubebuilder-cli = { version = \"0.1.0\", path = \"../kubebuilder-rs/xtask/cli\" }\n\
             kubebuilder-envtest = { version = \"0.1.0\", path = \"../kubebuilder-rs/xtask/envtest\" }\n\
             kubebuilder-runtime = { version = \"0.1.0\", path = \"../kubebuilder-rs/controller/runtime\" }\n\n"
        ), "{manifest}");
        assert!(!manifest.contains("[patch"));
    }

    #[test]
    fn relative_paths_climb_to_the_shared_ancestor() {
        for (from, to, relative) in [
            (
                "/tmp/projects/fleet",
                "/work/kubebuilder-rs",
                "../../../work/kubebuilder-rs",
            ),
            ("/work/fleet", "/work/kubebuilder-rs", "../kubebuilder-rs"),
            (
                "/work/kubebuilder-rs/examples/fleet",
                "/work/kubebuilder-rs",
                "../..",
            ),
        ] {
            assert_eq!(
                relative_path(Path::new(from), Path::new(to)),
                Path::new(relative),
                "{from} -> {to}"
            );
        }
    }

    #[test]
    fn local_refuses_what_is_no_checkout() {
        let dir = tempfile::tempdir().unwrap();
        let error = local_checkout(dir.path(), &dir.path().join("fleet")).unwrap_err();
        assert!(
            error.to_string().ends_with(
                "not a checkout of kubebuilder for Rust (it has no kubebuilder/Cargo.toml)"
            ),
            "{error}"
        );
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        assert_eq!(
            local_checkout(&here, &here.join("examples/fleet")).unwrap(),
            Path::new("../..")
        );
    }
}
