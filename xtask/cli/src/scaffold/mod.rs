//! `init`, `create api`, `create webhook`, `edit` and `version`: what kubebuilder's CLI does, for
//! Rust projects. They are the commands of `cargo kubebuilder`, and every project's `cargo
//! xtask` has them too.
//!
//! Every command checks its arguments and computes each file it writes in memory first
//! ([`plan::Plan`]); only a complete plan touches the disk, all at once, so bad input leaves
//! the tree byte-for-byte unchanged. Existing files change only at scaffold markers
//! (`// +kubebuilder:scaffold:<what>` comment lines, above which new lines go), in
//! kustomization resource lists, in the `# [WEBHOOK]` sections of `config/` (which the first
//! `create webhook` uncomments) and in `PROJECT`. `create` then regenerates `config/` as the
//! project's `cargo xtask manifests` does, reading the new sources in-process, so that the
//! first kind of a new project has its manifests in seconds; only where that reading defers
//! to a build does it run the project's `cargo xtask manifests`, saying why.

pub mod create_api;
pub mod create_webhook;
pub mod deploy_image;
pub mod edit;
pub mod init;
pub mod layout;
pub mod names;
pub mod plan;
pub mod project;
pub mod templates;
mod versions;

use std::path::Path;

use anyhow::{Context, Result, bail};

use self::plan::Plan;
use self::project::Project;
use self::templates::Values;
use crate::manifests;
use crate::source::{self, DeferToBuild, defer_to_build};

/// kubebuilder's CLI: the commands of `cargo kubebuilder`, which a project's `cargo xtask`
/// has as well.
#[derive(clap::Subcommand, Clone, Debug)]
pub enum Command {
    /// Make a new project in a new directory (kubebuilder's `init`).
    Init(init::Args),
    /// Add a kind or its webhooks to this project (kubebuilder's `create`).
    Create {
        /// What to add.
        #[command(subcommand)]
        command: CreateCommand,
    },
    /// Change the project's layout (kubebuilder's `edit`).
    Edit(edit::Args),
    /// Make a new project from an API declared elsewhere (a Go kubebuilder project).
    Import {
        /// What to import.
        #[command(subcommand)]
        command: crate::import::Command,
    },
    /// Print the versions of the kubebuilder crates and of the tools they match.
    Version,
}

/// Runs a scaffolding command; `create` and `edit` in the workspace found by
/// [`workspace_root`](crate::workspace_root).
pub fn run(command: &Command) -> Result<()> {
    match command {
        Command::Init(args) => init::run(args),
        Command::Create { command } => create(command),
        Command::Edit(args) => edit::run_in(&crate::workspace_root(), args),
        Command::Import { command } => crate::import::run(command),
        Command::Version => {
            print!("{}", version());
            Ok(())
        }
    }
}

/// What `version` prints: this crate's version (the kubebuilder crates share one), and the
/// versions of the Kubernetes control plane and of controller-gen it is tested against.
pub fn version() -> String {
    format!(
        "kubebuilder for Rust {}\nKubernetes (envtest, API types): {KUBERNETES_VERSION}\ncontroller-gen (manifests match): {}\n",
        env!("CARGO_PKG_VERSION"),
        crate::tools::CONTROLLER_GEN.version,
    )
}

/// The Kubernetes release of the control plane, kubebuilder-envtest's pin: repeated here
/// because `cargo kubebuilder` does not link kubebuilder-envtest (a test keeps the two
/// equal).
const KUBERNETES_VERSION: &str = "v1.37.2";

/// What `create` adds to the project.
#[derive(clap::Subcommand, Clone, Debug)]
pub enum CreateCommand {
    /// A kind: its types (`api/src/<version>/<kind>_types.rs`), its reconciler
    /// (`controller/src/<kind>/`), its registration in the manager and a sample; then
    /// `manifests`. In a multigroup project (`edit --multigroup`), under the group:
    /// `api/src/<group>/<version>/`, `controller/src/<group>/<kind>/`.
    Api(create_api::Args),
    /// Admission webhooks of a kind (`controller/src/<kind>/webhook.rs`, beside the kind's
    /// controller), registered in the manager; then `manifests`.
    Webhook(create_webhook::Args),
}

/// The kind a `create` command is about.
#[derive(clap::Args, Clone, Debug)]
pub struct KindArgs {
    /// The group, without the project's domain (`ship` for `ship.<domain>`).
    #[arg(long)]
    pub group: String,
    /// The version (`v1`, `v1beta1`, `v2alpha3`, ...).
    #[arg(long)]
    pub version: String,
    /// The kind, UpperCamelCase (`Frigate`).
    #[arg(long)]
    pub kind: String,
}

/// Runs `create api` or `create webhook` in the workspace `cargo xtask` runs in.
pub fn create(command: &CreateCommand) -> Result<()> {
    create_in(&crate::workspace_root(), command)
}

/// Runs `create api` or `create webhook` in the workspace at `root`.
pub fn create_in(root: &Path, command: &CreateCommand) -> Result<()> {
    apply(plan_create(root, command)?)?;
    regenerate_manifests(root)
}

/// Every file `create api` or `create webhook` writes in the workspace at `root`, or why
/// it cannot; nothing is written yet.
pub fn plan_create(root: &Path, command: &CreateCommand) -> Result<Plan> {
    let mut plan = match command {
        CreateCommand::Api(args) => create_api::plan(root, args),
        CreateCommand::Webhook(args) => create_webhook::plan(root, args),
    }?;
    prepend_boilerplate(&mut plan)?;
    Ok(plan)
}

/// Puts the project's header ([`init::BOILERPLATE`], if it has one) on each Rust file the
/// plan creates.
fn prepend_boilerplate(plan: &mut Plan) -> Result<()> {
    if let Some(header) = plan.read(init::BOILERPLATE)? {
        plan.prepend_header_to_rust_files(&header);
    }
    Ok(())
}

/// Writes the plan and says what it wrote.
fn apply(plan: Plan) -> Result<()> {
    for path in plan.apply()? {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// The manifests of the workspace at `root` over the new code, as its `cargo xtask manifests`
/// writes them: from its sources, read here, when this is the kubebuilder-cli it locks (that
/// of its xtask); otherwise, or where the reading defers to a build, by its `cargo xtask
/// manifests`, which builds the project's xtask first.
fn regenerate_manifests(root: &Path) -> Result<()> {
    let options = manifests::crd_options(root)?;
    match locks_this_cli(root).and_then(|()| source::read(root, &options)) {
        Ok(declarations) => {
            let namespace = manifests::manager_namespace(root)?;
            let outputs = manifests::outputs(root, &declarations, namespace.as_deref())?;
            manifests::write(root, &outputs)
        }
        Err(deferred) => {
            eprintln!("create: running the project's `cargo xtask manifests`, since {deferred}");
            project_manifests(root)
        }
    }
}

/// Whether the `Cargo.lock` of the workspace at `root` locks this version of kubebuilder-cli,
/// which then renders the manifests as the project's xtask would.
fn locks_this_cli(root: &Path) -> Result<(), DeferToBuild> {
    let ours = env!("CARGO_PKG_VERSION");
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    let locked = lock
        .parse::<toml::Table>()
        .ok()
        .and_then(|lock| lock.get("package")?.as_array().cloned())
        .into_iter()
        .flatten()
        .find(|package| {
            package.get("name").and_then(toml::Value::as_str) == Some(env!("CARGO_PKG_NAME"))
        })
        .and_then(|package| package.get("version")?.as_str().map(str::to_owned));
    match locked {
        Some(version) if version == ours => Ok(()),
        Some(version) => defer_to_build!(
            "the project's {} is {version}, not {ours}",
            env!("CARGO_PKG_NAME")
        ),
        None => defer_to_build!("Cargo.lock locks no {}", env!("CARGO_PKG_NAME")),
    }
}

/// The project's own `cargo xtask manifests`, over the new code.
fn project_manifests(root: &Path) -> Result<()> {
    eprintln!("xtask: cargo xtask manifests");
    let status = crate::cargo()
        .current_dir(root)
        .args(["xtask", "manifests"])
        .status()
        .context("running cargo xtask manifests")?;
    if !status.success() {
        bail!(
            "`cargo xtask manifests` failed ({status}); the scaffolded files are written: \
             fix the build, then run it again"
        );
    }
    Ok(())
}

/// The project's `PROJECT` file, which `create` needs, once the names of the kind to
/// create are known to be valid in it.
fn read_project_for(plan: &Plan, kind: &KindArgs) -> Result<Project> {
    let text = plan.read(project::FILE)?.with_context(|| {
        format!(
            "no {} file in {}: `cargo xtask create` works in projects made by `cargo xtask init`",
            project::FILE,
            plan.root().display()
        )
    })?;
    let project = Project::parse(&text)?;
    names::validate_group(&kind.group, &project.domain)?;
    names::validate_version(&kind.version)?;
    names::validate_kind(&kind.kind)?;
    Ok(project)
}

/// Plans `template` rendered with `values` at `path`.
fn render_into(plan: &mut Plan, path: &str, template: &str, values: &Values) {
    plan.write(path, templates::render(template, values));
}

/// Plans `template`'s lines rendered with `values` above `marker` in `path`.
fn insert_rendered(
    plan: &mut Plan,
    path: &str,
    marker: &str,
    template: &str,
    values: &Values,
) -> Result<()> {
    plan.insert_at_marker(path, marker, &templates::render(template, values))
}

/// Declares `version`'s types module (placeholder `version`) where `layout` has it:
/// `api/src/lib.rs`, or the group's `api/src/<group>/mod.rs`, made and declared if new.
fn declare_version_module(
    plan: &mut Plan,
    layout: &layout::KindLayout,
    values: &Values,
) -> Result<()> {
    use self::templates::kind as template;
    declare_module(
        plan,
        layout,
        ("api/src/lib.rs", &layout.api_parent_module_file()),
        template::GROUP_API_MOD_RS,
        template::VERSIONS_MARKER,
        template::VERSION_MODULE_LINE,
        values,
    )
}

/// Declares the kind's controller module where `layout` has it: `controller/src/lib.rs`, or
/// the group's `controller/src/<group>/mod.rs`, made and declared if new.
fn declare_controller_module(
    plan: &mut Plan,
    layout: &layout::KindLayout,
    values: &Values,
) -> Result<()> {
    use self::templates::kind as template;
    declare_module(
        plan,
        layout,
        (
            "controller/src/lib.rs",
            &layout.controller_parent_module_file(),
        ),
        template::GROUP_CONTROLLER_MOD_RS,
        template::MODULES_MARKER,
        template::KIND_MODULE_LINE,
        values,
    )
}

/// Plans `line` at `marker` in `parent` (the crate root, or in the multigroup layout the
/// group's module, which is made from `group_template` and declared in the crate root if
/// it is new: both have the same marker).
fn declare_module(
    plan: &mut Plan,
    layout: &layout::KindLayout,
    (crate_root, parent): (&str, &str),
    group_template: &str,
    marker: &str,
    line: &str,
    values: &Values,
) -> Result<()> {
    if layout.group_module().is_some() {
        if !plan.exists(parent) {
            render_into(plan, parent, group_template, values);
        }
        insert_rendered(
            plan,
            crate_root,
            marker,
            templates::kind::GROUP_MODULE_LINE,
            values,
        )?;
    }
    insert_rendered(plan, parent, marker, line, values)
}

/// The `namespace` argument of the RBAC attributes of a reconciler of a kind (placeholder
/// `rbac_namespace`): a namespaced project's reconciler is granted a namespaced kind in the
/// manager's namespace only (a Role); a cluster-scoped kind can only be granted by a
/// ClusterRole.
fn rbac_namespace(project: &Project, kind_namespaced: bool) -> String {
    match project.manager_namespace() {
        Some(namespace) if kind_namespaced => format!("\n    namespace = \"{namespace}\","),
        _ => String::new(),
    }
}

/// The placeholders of the kind templates that do not depend on the webhooks, for the
/// kind's files in `layout`.
fn kind_values(kind: &names::Kind, project: &Project, layout: &layout::KindLayout) -> Values {
    let snake = kind.snake();
    // A namespaced project's reconciler is granted its kind in the manager's namespace
    // only (a Role); a cluster-scoped kind can only be granted by a ClusterRole.
    let rbac_namespace = rbac_namespace(project, kind.namespaced);
    let mut resource_args = Vec::new();
    if kind.plural != names::plural(&kind.kind) {
        resource_args.push(format!("path = \"{}\"", kind.plural));
    }
    if !kind.namespaced {
        resource_args.push("scope = \"Cluster\"".to_owned());
    }
    let resource_args = if resource_args.is_empty() {
        String::new()
    } else {
        format!("\n    resource({}),", resource_args.join(", "))
    };
    let test_api = if kind.namespaced {
        "Api::namespaced(client, &namespace)"
    } else {
        "Api::all(client)"
    };
    Values::default()
        .with("project_name", project.project_name.as_str())
        .with("rbac_namespace", rbac_namespace)
        .with("kind", kind.kind.as_str())
        .with("kind_snake", snake.as_str())
        .with("kind_lower", kind.lower())
        .with("plural", kind.plural.as_str())
        .with("group", kind.group.as_str())
        .with("full_group", kind.full_group())
        .with("rbac_group", kind.full_group())
        .with("version", kind.version.as_str())
        .with("resource_args", resource_args)
        .with("spec_schema", "")
        .with("status_schema_args", "")
        .with("test_api", test_api)
        .with("mutating_path", kind.webhook_path(true))
        .with("validating_path", kind.webhook_path(false))
        .with("version_args", "")
        .with("webhook_module", "webhook")
        .with("api_module", layout.api_path(&kind.version))
        .with("types_dir", layout.api_dir(&kind.version))
        .with("controller_module", layout.controller_module(&snake))
        .with("group_module", layout.group_module().unwrap_or_default())
        // Unique among the project's kinds: the manager refuses two controllers of one name,
        // the apiserver two webhooks of one name in a configuration.
        .with(
            "unique_name",
            layout.unique_name(&kind.group, &kind.lower()),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_are_rendered_here_only_for_the_kubebuilder_cli_the_project_locks() {
        let dir = tempfile::tempdir().unwrap();
        let lock = |version: &str| {
            let text = format!(
                "version = 4\n\n[[package]]\nname = \"anyhow\"\nversion = \"1.0.0\"\n\n\
                 [[package]]\nname = \"kubebuilder-cli\"\nversion = \"{version}\"\n"
            );
            std::fs::write(dir.path().join("Cargo.lock"), text).unwrap();
            locks_this_cli(dir.path())
        };
        assert_eq!(lock(env!("CARGO_PKG_VERSION")), Ok(()));
        assert_eq!(
            lock("0.0.1"),
            Err(DeferToBuild(format!(
                "the project's kubebuilder-cli is 0.0.1, not {}",
                env!("CARGO_PKG_VERSION")
            )))
        );
        std::fs::remove_file(dir.path().join("Cargo.lock")).unwrap();
        assert_eq!(
            locks_this_cli(dir.path()),
            Err(DeferToBuild(
                "Cargo.lock locks no kubebuilder-cli".to_owned()
            ))
        );
    }

    #[test]
    fn version_names_envtests_kubernetes_release() {
        assert_eq!(
            KUBERNETES_VERSION,
            kubebuilder_envtest::assets::KUBERNETES_VERSION
        );
    }
}
