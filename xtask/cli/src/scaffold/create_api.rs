//! `cargo xtask create api`: a kind's types, its reconciler, their registration and a
//! sample, as `kubebuilder create api` scaffolds them. A new version of an existing kind
//! is not served until it converts (see `versions`).

use std::path::Path;

use anyhow::{Result, bail};
use clap::ArgAction;

use super::names::{self, Kind};
use super::plan::Plan;
use super::project::{self, Api};
use super::templates::{self, kind as template};
use super::versions;
use super::{KindArgs, insert_rendered, kind_values, read_project_for, render_into};
use crate::manifests;

/// The options of `cargo xtask create api` (kubebuilder's `create api`).
#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// The kind to scaffold: `--group`, `--version`, `--kind`.
    #[command(flatten)]
    pub kind: KindArgs,
    /// Namespaced objects (`--namespaced=false`: cluster-scoped).
    #[arg(long, default_value = "true", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub namespaced: bool,
    /// Scaffold the types (`--resource=false`: the kind exists, add a controller).
    #[arg(long, default_value = "true", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub resource: bool,
    /// Scaffold the reconciler (`--controller=false`: types only). By default, unless
    /// another version of the kind has one: a kind has one controller.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", action = ArgAction::Set)]
    pub controller: Option<bool>,
    /// The resource name, when the default plural of the kind does not fit.
    #[arg(long)]
    pub plural: Option<String>,
    /// Scaffold again over existing files.
    #[arg(long)]
    pub force: bool,
}

/// Every file `create api` writes in the workspace at `root`, or why it cannot.
pub fn plan(root: &Path, args: &Args) -> Result<Plan> {
    let mut plan = Plan::new(root);
    let mut project = read_project_for(&plan, &args.kind)?;
    let KindArgs {
        group,
        version,
        kind,
    } = &args.kind;
    if let Some(plural) = &args.plural {
        names::validate_plural(plural)?;
    }
    let other_versions: Vec<String> = project
        .versions_of(group, kind)
        .filter(|r| r.version != *version && r.api.is_some())
        .map(|r| r.version.clone())
        .collect();
    let wants_controller = args.controller.unwrap_or_else(|| {
        !project
            .versions_of(group, kind)
            .any(|r| r.version != *version && r.controller)
    });
    if !args.resource && !wants_controller {
        bail!("nothing to scaffold: --resource=false and --controller=false");
    }

    let existing = project.resource(group, version, kind).cloned();
    let full_group = format!("{group}.{}", project.domain);
    let kind = if args.resource {
        if !args.force && existing.as_ref().is_some_and(|r| r.api.is_some()) {
            bail!(
                "the API {full_group}/{version} {kind} already exists (see PROJECT); pass \
                 --force to scaffold it again"
            );
        }
        // Another version of the kind has the plural already: the versions of a CRD share it.
        let other_version_plural = project
            .versions_of(group, kind)
            .next()
            .and_then(|r| r.plural.clone());
        Kind {
            group: group.clone(),
            domain: project.domain.clone(),
            version: version.clone(),
            kind: kind.clone(),
            plural: args
                .plural
                .clone()
                .or(other_version_plural)
                .unwrap_or_else(|| names::plural(kind)),
            namespaced: args.namespaced,
        }
    } else {
        match existing.as_ref().filter(|r| r.api.is_some()) {
            Some(resource) => resource.kind(),
            None => bail!(
                "--resource=false adds a controller to an existing API, but PROJECT has no \
                 API {full_group}/{version} {kind}: create it with `cargo xtask create api`"
            ),
        }
    };
    if wants_controller
        && !args.force
        && project
            .versions_of(&kind.group, &kind.kind)
            .any(|r| r.controller)
    {
        bail!(
            "a controller for {} ({full_group}) already exists (see PROJECT); pass --force to \
             scaffold it again",
            kind.kind
        );
    }

    let mut values = kind_values(&kind, &project.project_name);
    if args.resource && !other_versions.is_empty() {
        let hub = versions::storage_version(&mut plan, &kind.kind, &other_versions)?;
        values = values.with("hub", hub.as_str());
        let unserved = templates::render(template::UNSERVED_VERSION_ARGS, &values);
        values = values.with("version_args", unserved);
    }
    if args.resource {
        plan_types(&mut plan, &kind, &values, args.force)?;
    }
    if wants_controller {
        plan_controller(&mut plan, &kind, &values, args.force)?;
    }

    let resource = project.resource_mut(&kind.group, &kind.version, &kind.kind);
    if args.resource {
        resource.api = Some(Api {
            crd_version: "v1".to_owned(),
            namespaced: kind.namespaced,
        });
        resource.path = Some(format!("api::{}", kind.version));
        resource.plural = (kind.plural != names::plural(&kind.kind)).then(|| kind.plural.clone());
    }
    resource.controller |= wants_controller;
    plan.write(project::FILE, project.to_yaml());
    plan.format_rust()?;
    Ok(plan)
}

/// The types file, its version module, and the sample.
fn plan_types(plan: &mut Plan, kind: &Kind, values: &templates::Values, force: bool) -> Result<()> {
    let version_dir = format!("api/src/{}", kind.version);
    plan.create(
        &format!("{version_dir}/{}_types.rs", kind.snake()),
        templates::render(template::TYPES_RS, values),
        force,
    )?;
    let version_module = format!("{version_dir}/mod.rs");
    if !plan.exists(&version_module) {
        render_into(plan, &version_module, template::VERSION_MOD_RS, values);
    }
    insert_rendered(
        plan,
        "api/src/lib.rs",
        template::VERSIONS_MARKER,
        template::VERSION_MODULE_LINE,
        values,
    )?;
    for line in [template::KIND_TYPES_MODULE_LINE, template::KIND_EXPORT_LINE] {
        insert_rendered(plan, &version_module, template::KINDS_MARKER, line, values)?;
    }

    let sample = format!("{}_{}_{}.yaml", kind.group, kind.version, kind.lower());
    plan.create(
        &format!("config/samples/{sample}"),
        templates::render(template::SAMPLE_YAML, values),
        force,
    )?;
    let samples = "config/samples/kustomization.yaml";
    let listed = plan.read(samples)?.unwrap_or_default();
    if let Some(updated) = manifests::with_resources(&listed, &[sample])? {
        plan.write(samples, updated);
    }
    Ok(())
}

/// The controller module with its reconciler, and its registrations.
fn plan_controller(
    plan: &mut Plan,
    kind: &Kind,
    values: &templates::Values,
    force: bool,
) -> Result<()> {
    let dir = format!("controller/src/{}", kind.snake());
    plan.create(
        &format!("{dir}/reconciler.rs"),
        templates::render(template::RECONCILER_RS, values),
        force,
    )?;
    plan.create(
        &format!("controller/tests/{}_controller.rs", kind.snake()),
        templates::render(template::CONTROLLER_TEST_RS, values),
        force,
    )?;
    // A module made for webhooks alone gets the controller; its submodules stay.
    let module = format!("{dir}/mod.rs");
    let previous = plan.read(&module)?.unwrap_or_default();
    render_into(plan, &module, template::CONTROLLER_MOD_RS, values);
    for submodule in previous.lines().filter(|line| line.starts_with("pub mod ")) {
        plan.insert_at_marker(&module, template::SUBMODULES_MARKER, submodule)?;
    }
    insert_rendered(
        plan,
        "controller/src/lib.rs",
        template::MODULES_MARKER,
        template::KIND_MODULE_LINE,
        values,
    )?;
    insert_rendered(
        plan,
        "controller/src/main.rs",
        template::CONTROLLERS_MARKER,
        template::CONTROLLER_REGISTRATION_LINE,
        values,
    )
}
