//! `cargo xtask init <dir> --domain <domain> [--name <project>]`: a new workspace with this
//! repository's layout (`api/`, `controller/` with the manager, `xtask/`, `config/`), using
//! this repository's crates by path, that builds, renders its manifests and passes its own
//! `cargo xtask test` as it is.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::names;
use super::plan::Plan;
use super::project::{self, Project};
use super::templates::{self, Values, config, workspace};
use crate::manifests::{self, Declarations};

/// This repository's workspace manifest: a new project shares its dependency pins.
const OUR_MANIFEST: &str = include_str!("../../../../Cargo.toml");
/// Its lock file: a new project starts from the versions this repository is tested with
/// (cargo drops the packages it does not use).
const OUR_LOCK: &str = include_str!("../../../../Cargo.lock");

/// The crates of this repository a project depends on.
const KUBEBUILDER_CRATES: &[&str] = &[
    "kubebuilder",
    "kubebuilder-cli",
    "kubebuilder-envtest",
    "kubebuilder-runtime",
];

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
}

pub fn run(args: &Args) -> Result<()> {
    let plan = plan(args)?;
    let root = plan.root().to_owned();
    super::apply(plan)?;
    eprintln!(
        "xtask: a new project in {}. Next:\n  cd {}\n  cargo xtask create api --group <group> \
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
            "{} is not empty: `cargo xtask init` makes a project in a new or empty directory",
            root.display()
        );
    }
    let kubebuilder_dir = kubebuilder_dir()?;

    let values = Values::default()
        .with("project_name", name.as_str())
        .with("domain", args.domain.as_str())
        .with(
            "leader_election_id",
            leader_election_id(&args.domain, &name),
        )
        .with("kubebuilder_dir", kubebuilder_dir.display().to_string());
    let mut plan = Plan::new(&root);
    for (path, template) in workspace::FILES {
        plan.write(path, templates::render(template, &values));
    }
    for (path, template) in config::FILES {
        plan.write(
            &format!("config/{path}"),
            templates::render(template, &values),
        );
    }
    plan.write("Cargo.toml", workspace_manifest(&kubebuilder_dir)?);
    plan.write("Cargo.lock", OUR_LOCK.to_owned());
    plan.write(project::FILE, Project::new(&args.domain, &name).to_yaml());
    // What `manifests` writes for a project that declares nothing yet, so that `manifests
    // --check` passes and config/ deploys from the start.
    for output in manifests::outputs(&root, &Declarations::default())? {
        plan.write(&output.path.to_string_lossy(), output.content);
    }
    plan.format_rust()?;
    Ok(plan)
}

/// This repository's root, whose crates a new project uses: where this crate was built
/// from.
fn kubebuilder_dir() -> Result<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    dir.canonicalize().with_context(|| {
        format!(
            "kubebuilder for Rust is no longer at {} (where cargo xtask was built from)",
            dir.display()
        )
    })
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

/// The new workspace's `Cargo.toml`: this repository's, with the project's members, and
/// its own crates in `[workspace.dependencies]` replaced by the project's and by absolute
/// paths to the kubebuilder crates; every other pin, and the profiles, as they are.
fn workspace_manifest(kubebuilder_dir: &Path) -> Result<String> {
    let mut manifest = String::from(
        "[workspace]\nresolver = \"3\"\nmembers = [\"api\", \"controller\", \"xtask\"]\n",
    );
    // The sections after our [workspace], whose members are ours alone.
    for section in OUR_MANIFEST.split("\n[").skip(1) {
        let section = format!("[{}", section.trim_end());
        let section = match section.strip_prefix("[workspace.dependencies]\n") {
            Some(dependencies) => dependencies_section(dependencies, kubebuilder_dir)?,
            None => section,
        };
        manifest += &format!("\n{section}\n");
    }
    Ok(manifest)
}

/// Our `[workspace.dependencies]`, which starts with the block of this repository's crates
/// (up to the first blank line), for a new project.
fn dependencies_section(dependencies: &str, kubebuilder_dir: &Path) -> Result<String> {
    let (own_crates, pins) = dependencies
        .split_once("\n\n")
        .context("our [workspace.dependencies] starts with the block of our own crates")?;
    let mut section = format!(
        "[workspace.dependencies]\n# This project's crates.\napi = {{ path = \"api\" }}\n\
         controller = {{ path = \"controller\" }}\n# kubebuilder for Rust, from {}.\n",
        kubebuilder_dir.display()
    );
    let mut found = 0;
    for line in own_crates.lines() {
        let Some((name, relative)) = line
            .strip_suffix("\" }")
            .and_then(|line| line.split_once(" = { path = \""))
        else {
            continue;
        };
        if KUBEBUILDER_CRATES.contains(&name) {
            let path = kubebuilder_dir.join(relative);
            section += &format!("{name} = {{ path = \"{}\" }}\n", path.display());
            found += 1;
        }
    }
    if found != KUBEBUILDER_CRATES.len() {
        bail!("our Cargo.toml does not name each of {KUBEBUILDER_CRATES:?} by path");
    }
    Ok(format!("{section}\n{pins}"))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
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
            let values = crate::scaffold::kind_values(kind, &project.project_name);
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
    fn our_config_is_the_init_config_with_the_cronjob_listed() {
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
            let rendered = templates::render(template, &our_values(&project));
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
    fn the_leader_election_id_is_kubebuilders() {
        // The ID of kubebuilder's tutorial project (`tutorial.kubebuilder.io/project`).
        assert_eq!(
            leader_election_id("tutorial.kubebuilder.io", "project"),
            "80807133.tutorial.kubebuilder.io"
        );
    }

    #[test]
    fn the_manifest_shares_the_pins_and_points_at_the_kubebuilder_crates() {
        let manifest = workspace_manifest(Path::new("/opt/kubebuilder-rs")).unwrap();
        assert!(manifest.starts_with(
            "[workspace]\nresolver = \"3\"\nmembers = [\"api\", \"controller\", \"xtask\"]\n\n\
             [workspace.package]\n"
        ));
        assert!(manifest.contains(
            "[workspace.dependencies]\n# This project's crates.\napi = { path = \"api\" }\n\
             controller = { path = \"controller\" }\n\
             # kubebuilder for Rust, from /opt/kubebuilder-rs.\n\
             kubebuilder = { path = \"/opt/kubebuilder-rs/macros/kubebuilder\" }\n\
             kubebuilder-cli = { path = \"/opt/kubebuilder-rs/xtask/cli\" }\n\
             kubebuilder-envtest = { path = \"/opt/kubebuilder-rs/xtask/envtest\" }\n\
             kubebuilder-runtime = { path = \"/opt/kubebuilder-rs/controller/runtime\" }\n\n"
        ));
        // Every other line of this repository's manifest is kept.
        let ours_without_own_crates: Vec<&str> = OUR_MANIFEST
            .lines()
            .skip_while(|line| !line.starts_with("[workspace.package]"))
            .filter(|line| !line.contains("{ path = ") && *line != "# Our own crates.")
            .collect();
        let theirs: Vec<&str> = manifest.lines().collect();
        for line in ours_without_own_crates {
            assert!(theirs.contains(&line), "{line:?} is missing");
        }
    }
}
