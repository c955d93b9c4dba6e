//! `cargo xtask create api`: a kind's types, its reconciler, their registration and a
//! sample, as `kubebuilder create api` scaffolds them. A new version of an existing kind
//! is not served until it converts (see `versions`). With `--resource=false`, a controller
//! for a kind this project does not own: one of Kubernetes' (`--group apps --version v1
//! --kind Deployment`), or another project's, whose Rust types a dependency has
//! (`--external-api-path`), as kubebuilder's core and external types. With `--plugins
//! deploy-image/v1-alpha`, a kind whose controller runs a container image (see
//! `deploy_image`).

use std::path::Path;

use anyhow::{Context as _, Result, bail};
use clap::ArgAction;
use serde_json::{Map, Value, json};

use super::deploy_image;
use super::layout::{self, KindLayout};
use super::names::{self, Kind, core_kinds};
use super::plan::Plan;
use super::project::{self, Api, Project, Resource};
use super::templates::{self, Values, external, kind as template};
use super::versions;
use super::{
    KindArgs, declare_controller_module, declare_version_module, insert_rendered, kind_values,
    read_project_for, render_into,
};
use crate::manifests;

/// The options of `cargo xtask create api` (kubebuilder's `create api`).
#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// The kind to scaffold: `--group`, `--version`, `--kind`.
    #[command(flatten)]
    pub kind: KindArgs,
    /// Namespaced objects (`--namespaced=false`: cluster-scoped). The default: namespaced,
    /// or as Kubernetes has it for one of its kinds.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", action = ArgAction::Set)]
    pub namespaced: Option<bool>,
    /// Scaffold the types (`--resource=false`: the kind exists, add a controller: to a kind
    /// of PROJECT, to one of Kubernetes' when `--group` is one of its groups (`core`,
    /// `apps`, `batch`, `networking`, ...), or with `--external-api-path`).
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
    /// With `--resource=false`, a controller for another project's kind: the Rust module
    /// of its type, `<module>::<Kind>` (`other_crate::v1`; kubebuilder's Go import path),
    /// from a dependency of the `controller` crate.
    #[arg(long, value_name = "RUST_PATH", requires = "external_api_domain")]
    pub external_api_path: Option<String>,
    /// The domain of that kind's API group, which is `<group>.<domain>` as in kubebuilder
    /// (`--group gadgets --external-api-domain example.org`: `gadgets.example.org`).
    #[arg(long, value_name = "DOMAIN", requires = "external_api_path")]
    pub external_api_domain: Option<String>,
    /// (Alpha, as in kubebuilder v4.16) apply configurations of the kind's spec and status
    /// for server-side apply (`apply_configuration`: `<Kind>ApplyConfiguration`, every field
    /// optional), recorded in PROJECT (`ssa: true`) and kept by a `--force` re-run.
    #[arg(long)]
    pub ssa: bool,
    /// Scaffold again over existing files.
    #[arg(long)]
    pub force: bool,
    /// kubebuilder's `--plugins`, and the plugin's options.
    #[command(flatten)]
    pub deploy_image: deploy_image::PluginArgs,
}

/// The templates of a kind's own files: the usual ones, or a plugin's.
pub struct KindTemplates {
    /// `api/src/<version>/<kind>_types.rs`.
    pub types: &'static str,
    /// `config/samples/<group>_<version>_<kind>.yaml`.
    pub sample: &'static str,
    /// `controller/src/<kind>/mod.rs`.
    pub controller_mod: &'static str,
    /// `controller/src/<kind>/reconciler.rs`.
    pub reconciler: &'static str,
    /// `controller/tests/<kind>_controller.rs`.
    pub controller_test: &'static str,
}

/// The usual templates of a kind (kubebuilder's `go/v4` plugin's files).
const USUAL: KindTemplates = KindTemplates {
    types: template::TYPES_RS,
    sample: template::SAMPLE_YAML,
    controller_mod: template::CONTROLLER_MOD_RS,
    reconciler: template::RECONCILER_RS,
    controller_test: template::CONTROLLER_TEST_RS,
};

/// The templates of a kind `import go` makes, whose types are replaced by the Go
/// project's: a reconciler stub and a test that do not depend on the kind's fields.
pub const IMPORTED: KindTemplates = KindTemplates {
    reconciler: templates::imported::RECONCILER_RS,
    controller_test: templates::imported::CONTROLLER_TEST_RS,
    ..USUAL
};

/// Every file `create api` writes in the workspace at `root`, or why it cannot.
pub fn plan(root: &Path, args: &Args) -> Result<Plan> {
    plan_with(root, args, &USUAL)
}

/// [`plan`], with the kind's files from `usual` unless a plugin gives them.
pub fn plan_with(root: &Path, args: &Args, usual: &KindTemplates) -> Result<Plan> {
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
    let operand = args.deploy_image.operand()?;
    if operand.is_some() {
        deploy_image::check_fits(args, &project)?;
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
    if args.ssa && !args.resource {
        bail!(
            "--ssa gives the kind's types apply configurations, and --resource=false \
             scaffolds no types: add `#[kubebuilder::schema(apply_configuration)]` to them \
             by hand, or create the API with --ssa"
        );
    }
    if let Some(foreign) = foreign_kind(&plan, &project, args)? {
        return plan_foreign(plan, project, args, &foreign);
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
            namespaced: args.namespaced.unwrap_or(true),
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

    let layout = layout_of(&plan, &project, &kind, args.resource)?;
    let mut values = kind_values(&kind, &project, &layout);
    // A `--force` re-run keeps PROJECT's opt-in.
    let ssa = args.ssa
        || existing
            .as_ref()
            .and_then(|r| r.api.as_ref())
            .is_some_and(|api| api.ssa);
    if ssa {
        values = values
            .with(
                "spec_schema",
                "\n#[kubebuilder::schema(apply_configuration)]",
            )
            .with("status_schema_args", "(apply_configuration)");
    }
    if args.resource && !other_versions.is_empty() {
        let hub = versions::storage_version(&mut plan, &layout, &kind.kind, &other_versions)?;
        values = values.with("hub", hub.as_str());
        let unserved = templates::render(template::UNSERVED_VERSION_ARGS, &values);
        values = values.with("version_args", unserved);
    }
    let files = match &operand {
        Some(operand) => {
            values = operand.values(values, &kind, &layout);
            &deploy_image::TEMPLATES
        }
        None => usual,
    };
    if args.resource {
        plan_types(&mut plan, &kind, &layout, &values, files, args.force)?;
    }
    if wants_controller {
        plan_controller(&mut plan, &kind, &layout, &values, files, args.force)?;
    }
    if let Some(operand) = &operand {
        operand.plan(&mut plan, &mut project, &kind, &layout)?;
    }

    let resource = project.resource_mut(&kind.group, &kind.version, &kind.kind);
    if args.resource {
        resource.api = Some(Api {
            crd_version: "v1".to_owned(),
            namespaced: kind.namespaced,
            ssa,
        });
        resource.path = Some(layout.api_path(&kind.version));
        resource.plural = (kind.plural != names::plural(&kind.kind)).then(|| kind.plural.clone());
    }
    resource.controller |= wants_controller;
    plan.write(project::FILE, project.to_yaml());
    plan.format_rust()?;
    Ok(plan)
}

/// Where `kind`'s files go (see [`layout`]), once its group may have them there: a new kind
/// (`new_types`) of a project that is not multigroup may not take the name of another
/// group's kind, whose files would be the same.
fn layout_of(plan: &Plan, project: &Project, kind: &Kind, new_types: bool) -> Result<KindLayout> {
    let layout = layout::kind_layout(project, &kind.group, &kind.kind);
    let is_new = project
        .versions_of(&kind.group, &kind.kind)
        .all(|resource| resource.api.is_none());
    if layout.group_module().is_none() && new_types && is_new {
        let same_kind_elsewhere = project.resources.iter().find(|resource| {
            resource.api.is_some()
                && resource.domain == project.domain
                && resource.group != kind.group
                && resource.kind == kind.kind
                && layout::kind_layout(project, &resource.group, &resource.kind) == layout
        });
        if let Some(other) = same_kind_elsewhere {
            bail!(
                "{} exists already in group {}.{} (see PROJECT), and in this project's \
                 layout the kinds of all groups share api/src/<version>/ and \
                 controller/src/<kind>/: switch to the multigroup layout first with \
                 `cargo xtask edit --multigroup` (new kinds then go under their group), \
                 then create {} in {} again",
                kind.kind,
                other.group,
                other.domain,
                kind.kind,
                kind.full_group()
            );
        }
    }
    layout::validate_group_module(plan, project, &kind.group, &layout)?;
    Ok(layout)
}

/// The types file, its version module, and the sample, from `files`.
fn plan_types(
    plan: &mut Plan,
    kind: &Kind,
    layout: &KindLayout,
    values: &templates::Values,
    files: &KindTemplates,
    force: bool,
) -> Result<()> {
    let version_dir = layout.api_dir(&kind.version);
    plan.create(
        &format!("{version_dir}/{}_types.rs", kind.snake()),
        templates::render(files.types, values),
        force,
    )?;
    let version_module = format!("{version_dir}/mod.rs");
    if !plan.exists(&version_module) {
        render_into(plan, &version_module, template::VERSION_MOD_RS, values);
    }
    declare_version_module(plan, layout, values)?;
    for line in [template::KIND_TYPES_MODULE_LINE, template::KIND_EXPORT_LINE] {
        insert_rendered(plan, &version_module, template::KINDS_MARKER, line, values)?;
    }

    let sample = kind.sample_name();
    plan.create(
        &format!("config/samples/{sample}"),
        templates::render(files.sample, values),
        force,
    )?;
    let samples = "config/samples/kustomization.yaml";
    let listed = plan.read(samples)?.unwrap_or_default();
    if let Some(updated) = manifests::with_resources(&listed, &[sample])? {
        plan.write(samples, updated);
    }
    Ok(())
}

/// The controller module with its reconciler, from `files`, and its registrations.
fn plan_controller(
    plan: &mut Plan,
    kind: &Kind,
    layout: &KindLayout,
    values: &templates::Values,
    files: &KindTemplates,
    force: bool,
) -> Result<()> {
    let dir = layout.controller_dir(&kind.snake());
    plan.create(
        &format!("{dir}/reconciler.rs"),
        templates::render(files.reconciler, values),
        force,
    )?;
    plan.create(
        &format!(
            "controller/tests/{}_controller.rs",
            layout.test_stem(&kind.snake())
        ),
        templates::render(files.controller_test, values),
        force,
    )?;
    // A module made for webhooks alone gets the controller; its submodules stay.
    let module = format!("{dir}/mod.rs");
    let previous = plan.read(&module)?.unwrap_or_default();
    render_into(plan, &module, files.controller_mod, values);
    for submodule in previous.lines().filter(|line| line.starts_with("pub mod ")) {
        plan.insert_at_marker(&module, template::SUBMODULES_MARKER, submodule)?;
    }
    declare_controller_module(plan, layout, values)?;
    insert_rendered(
        plan,
        "controller/src/main.rs",
        template::CONTROLLERS_MARKER,
        template::CONTROLLER_REGISTRATION_LINE,
        values,
    )
}

/// A kind this project does not own, which `create api --resource=false` gives a
/// controller: one of Kubernetes' (k8s-openapi's type), or another project's.
struct Foreign {
    /// The group as PROJECT records it (kubebuilder's: `apps`, `networking`, `certmanager`).
    group: String,
    /// The domain PROJECT records with it (none for `apps`, `k8s.io` for `networking`).
    domain: String,
    version: String,
    kind: String,
    plural: String,
    namespaced: bool,
    /// Kubernetes' kind (PROJECT's `core: true`), else another project's (`external: true`).
    core: bool,
    /// The Rust module of the type (`k8s_openapi::api::apps::v1`).
    module: String,
    /// The API group: `""` (the core group), `apps`, `cert-manager.io`.
    api_group: String,
    /// The fields of the object the controller's test creates, `metadata` included.
    object: Map<String, Value>,
}

impl Foreign {
    fn api_version(&self) -> String {
        match self.api_group.as_str() {
            "" => self.version.clone(),
            group => format!("{group}/{}", self.version),
        }
    }

    fn type_path(&self) -> String {
        format!("{}::{}", self.module, self.kind)
    }
}

/// The kind this project does not own that `args` name, if they name one: with
/// `--external-api-path`, or `--resource=false` for a kind PROJECT lacks in one of
/// Kubernetes' groups.
fn foreign_kind(plan: &Plan, project: &Project, args: &Args) -> Result<Option<Foreign>> {
    let KindArgs {
        group,
        version,
        kind,
    } = &args.kind;
    if let Some(path) = &args.external_api_path {
        return external_kind(plan, project, args, path).map(Some);
    }
    let own = project
        .resource(group, version, kind)
        .is_some_and(|resource| resource.api.is_some());
    if args.resource || own || !core_kinds::is_core_group(group) {
        return Ok(None);
    }
    let core = core_kinds::find(group, version, kind).map_err(|err| {
        anyhow::anyhow!(
            "--resource=false: PROJECT has no API {group}.{}/{version} {kind}, and {err}",
            project.domain
        )
    })?;
    if let Some(plural) = args.plural.as_ref().filter(|plural| *plural != core.plural) {
        bail!(
            "--plural {plural}: the resource of {} {kind} is {}",
            core.api_version(),
            core.plural
        );
    }
    if let Some(namespaced) = args
        .namespaced
        .filter(|namespaced| *namespaced != core.namespaced)
    {
        bail!(
            "--namespaced={namespaced}: {} {kind} is {}",
            core.api_version(),
            if core.namespaced {
                "namespaced"
            } else {
                "cluster-scoped"
            }
        );
    }
    Ok(Some(Foreign {
        group: core.group().to_owned(),
        domain: core.domain().to_owned(),
        version: core.version.to_owned(),
        kind: core.kind.to_owned(),
        plural: core.plural.to_owned(),
        namespaced: core.namespaced,
        core: true,
        module: core.module.to_owned(),
        api_group: core.api_group.to_owned(),
        object: core.sample_fields(),
    }))
}

/// Another project's kind, from `--external-api-path` and `--external-api-domain`.
fn external_kind(plan: &Plan, project: &Project, args: &Args, path: &str) -> Result<Foreign> {
    let KindArgs {
        group,
        version,
        kind,
    } = &args.kind;
    let domain = args
        .external_api_domain
        .as_deref()
        .context("--external-api-path needs --external-api-domain")?;
    names::validate_rust_path(path)?;
    names::validate_external_domain(domain, group)?;
    if args.resource {
        bail!(
            "--external-api-path scaffolds a controller for another project's kind, whose types \
             are that project's: pass --resource=false"
        );
    }
    if domain == project.domain {
        bail!(
            "--external-api-domain {domain} is this project's domain, whose kinds are its own: \
             `create api` scaffolds them, with --resource=false a controller for one"
        );
    }
    // The module, or the type itself.
    let module = path.strip_suffix(&format!("::{kind}")).unwrap_or(path);
    let crate_name = module.split("::").next().unwrap_or(module);
    let manifest = plan.read("controller/Cargo.toml")?.unwrap_or_default();
    if !dependencies(&manifest)
        .iter()
        .any(|name| name == crate_name)
    {
        bail!(
            "--external-api-path {path}: the controller crate has no dependency `{crate_name}`; \
             add the crate that defines {kind} to controller/Cargo.toml (`cargo add --package \
             controller <crate>`), then run this again"
        );
    }
    let api_group = format!("{group}.{domain}");
    // One of Kubernetes' types by its module (an alpha or beta version, say): the plural,
    // scope and sample of the kind (in its GA version) by default.
    let known = core_kinds::by_api_group(&api_group, version, kind)
        .or_else(|| {
            core_kinds::CORE_KINDS
                .iter()
                .find(|known| known.api_group == api_group && known.kind == *kind)
        })
        .filter(|_| crate_name == "k8s_openapi");
    let plural = args
        .plural
        .clone()
        .or_else(|| known.map(|known| known.plural.to_owned()))
        .unwrap_or_else(|| names::plural(kind));
    let namespaced = args
        .namespaced
        .or_else(|| known.map(|known| known.namespaced))
        .unwrap_or(true);
    // Another project's kind: an empty spec.
    let object = known.map_or_else(
        || {
            let mut object = Map::new();
            object.insert(
                "metadata".into(),
                json!({"name": format!("test-{}", kind.to_lowercase())}),
            );
            object.insert("spec".into(), json!({}));
            object
        },
        core_kinds::CoreKind::sample_fields,
    );
    Ok(Foreign {
        group: group.clone(),
        domain: domain.to_owned(),
        version: version.clone(),
        kind: kind.clone(),
        plural,
        namespaced,
        core: false,
        module: module.to_owned(),
        api_group,
        object,
    })
}

/// The Rust names of the dependencies in a `Cargo.toml`'s `[dependencies]` (`-` as `_`).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_end_matches(']').trim();
            in_dependencies = header == "dependencies";
            // `[dependencies.name]`
            if let Some(name) = header.strip_prefix("dependencies.") {
                names.push(name.trim().replace('-', "_"));
            }
            continue;
        }
        if in_dependencies && !line.starts_with('#') {
            let key = line.split(['=', '.']).next().unwrap_or_default().trim();
            if !key.is_empty() {
                names.push(key.trim_matches('"').replace('-', "_"));
            }
        }
    }
    names
}

/// The controller of a kind this project does not own: its module, reconciler and test,
/// registered in the manager, and recorded in PROJECT (no types, CRD or sample).
fn plan_foreign(
    mut plan: Plan,
    mut project: Project,
    args: &Args,
    foreign: &Foreign,
) -> Result<Plan> {
    let position = project.resources.iter().position(|resource| {
        resource.domain == foreign.domain
            && resource.group == foreign.group
            && resource.version == foreign.version
            && resource.kind == foreign.kind
    });
    if !args.force && position.is_some_and(|index| project.resources[index].controller) {
        bail!(
            "a controller for {} {} already exists (see PROJECT); pass --force to scaffold it \
             again",
            foreign.api_version(),
            foreign.kind
        );
    }
    let values = foreign_values(foreign, &project);
    let snake = names::snake_case(&foreign.kind);
    let dir = format!("controller/src/{snake}");
    let module = format!("{dir}/mod.rs");
    let previous = plan.read(&module)?.unwrap_or_default();
    plan.create(
        &module,
        templates::render(external::CONTROLLER_MOD_RS, &values),
        args.force,
    )?;
    for submodule in previous.lines().filter(|line| line.starts_with("pub mod ")) {
        plan.insert_at_marker(&module, template::SUBMODULES_MARKER, submodule)?;
    }
    plan.create(
        &format!("{dir}/reconciler.rs"),
        templates::render(external::RECONCILER_RS, &values),
        args.force,
    )?;
    let mut test = templates::render(external::CONTROLLER_TEST_RS, &values);
    if !foreign.core {
        test += &templates::render(external::STAND_IN_CRD_RS, &values);
    }
    plan.create(
        &format!("controller/tests/{snake}_controller.rs"),
        test,
        args.force,
    )?;
    insert_rendered(
        &mut plan,
        "controller/src/lib.rs",
        template::MODULES_MARKER,
        template::KIND_MODULE_LINE,
        &values,
    )?;
    insert_rendered(
        &mut plan,
        "controller/src/main.rs",
        template::CONTROLLERS_MARKER,
        template::CONTROLLER_REGISTRATION_LINE,
        &values,
    )?;

    let index = position.unwrap_or_else(|| {
        project.resources.push(Resource {
            domain: foreign.domain.clone(),
            group: foreign.group.clone(),
            kind: foreign.kind.clone(),
            version: foreign.version.clone(),
            ..Resource::default()
        });
        project.resources.len() - 1
    });
    let resource = &mut project.resources[index];
    resource.controller = true;
    resource.core = foreign.core;
    resource.external = !foreign.core;
    resource.path = Some(foreign.module.clone());
    resource.plural = (!foreign.core && foreign.plural != names::plural(&foreign.kind))
        .then(|| foreign.plural.clone());
    plan.write(project::FILE, project.to_yaml());
    plan.format_rust()?;
    Ok(plan)
}

/// The placeholders of the [`external`] templates.
fn foreign_values(foreign: &Foreign, project: &Project) -> Values {
    let kind = foreign.kind.as_str();
    let type_path = foreign.type_path();
    let rbac_group = match foreign.api_group.as_str() {
        "" => "core",
        group => group,
    };
    let origin = if foreign.core {
        "one of Kubernetes' kinds".to_owned()
    } else {
        let crate_name = foreign.module.split("::").next().unwrap_or_default();
        format!("another project's kind, from the `{crate_name}` crate")
    };
    let rbac_namespace = super::rbac_namespace(project, foreign.namespaced);
    let test_api = if foreign.namespaced {
        "Api::namespaced(client, &namespace)"
    } else {
        "Api::all(client)"
    };
    let mut object = Map::new();
    object.insert("apiVersion".into(), foreign.api_version().into());
    object.insert("kind".into(), kind.into());
    object.extend(foreign.object.clone());
    let values = Values::default()
        .with("kind", kind)
        .with("kind_snake", names::snake_case(kind))
        // Another project's or Kubernetes' kinds are in the flat layout.
        .with("controller_module", names::snake_case(kind))
        .with("kind_lower", kind.to_lowercase())
        .with("plural", foreign.plural.as_str())
        .with("version", foreign.version.as_str())
        .with("api_version", foreign.api_version())
        .with("rbac_group", rbac_group)
        .with("rbac_namespace", rbac_namespace)
        .with("type_path", type_path.as_str())
        .with("origin", origin)
        .with("test_api", test_api)
        .with("object", external::object_entries(&object))
        .with(
            "scope",
            if foreign.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            },
        );
    let serve_kind = if foreign.core {
        String::new()
    } else {
        templates::render(external::SERVE_KIND_LINE, &values)
    };
    values.with("serve_kind", serve_kind)
}
