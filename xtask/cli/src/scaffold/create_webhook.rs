//! `cargo xtask create webhook`: a kind's defaulting and validating admission webhooks and
//! their test, or the conversion between its versions (whose `Spoke` impl has a test of its
//! own), and their registration in the manager, as `kubebuilder create webhook` scaffolds
//! them. The first webhook of a project also turns on what serves the webhooks in `config/`
//! (their Service, cert-manager's certificates and the wiring), which `init` leaves off.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use super::layout::{self, KindLayout};
use super::names::Kind;
use super::plan::Plan;
use super::project::{self, Project, Webhooks};
use super::templates::{self, Values, config, kind as template};
use super::versions::{self, Declaration};
use super::{
    KindArgs, declare_controller_module, insert_rendered, kind_values, read_project_for,
    render_into,
};

/// The options of `cargo xtask create webhook` (kubebuilder's `create webhook`).
#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// The kind the webhooks are for: `--group`, `--version`, `--kind`.
    #[command(flatten)]
    pub kind: KindArgs,
    /// A defaulting (mutating) webhook.
    #[arg(long)]
    pub defaulting: bool,
    /// A validating webhook.
    #[arg(long)]
    pub programmatic_validation: bool,
    /// Conversion between the kind's versions: `--version` is the hub (the storage
    /// version), and each `--spoke` converts through it.
    #[arg(long)]
    pub conversion: bool,
    /// A version that converts through the hub (with `--conversion`; repeatable).
    #[arg(long = "spoke", value_name = "VERSION", requires = "conversion")]
    pub spokes: Vec<String>,
    /// Write the webhook module (or a conversion) again.
    #[arg(long)]
    pub force: bool,
}

/// Every file `create webhook` writes in the workspace at `root`, or why it cannot.
pub fn plan(root: &Path, args: &Args) -> Result<Plan> {
    let mut plan = Plan::new(root);
    let mut project = read_project_for(&plan, &args.kind)?;
    let KindArgs {
        group,
        version,
        kind,
    } = &args.kind;
    if !args.defaulting && !args.programmatic_validation && !args.conversion {
        bail!(
            "nothing to scaffold: pass --defaulting, --programmatic-validation, --conversion \
             or several"
        );
    }
    if args.conversion && args.spokes.is_empty() {
        bail!("--conversion needs the versions that convert: --spoke <version>");
    }
    let full_group = format!("{group}.{}", project.domain);
    let own = project
        .resource(group, version, kind)
        .is_some_and(|resource| resource.api.is_some());
    if let Some(foreign) = project.resources.iter().find(|resource| {
        !own && (resource.core || resource.external)
            && resource.group == *group
            && resource.version == *version
            && resource.kind == *kind
    }) {
        bail!(
            "{kind} ({group} {version}) is {}, with a controller only (see PROJECT): \
             `create webhook` scaffolds the webhooks of this project's kinds",
            if foreign.core {
                "one of Kubernetes' kinds"
            } else {
                "another project's kind"
            }
        );
    }
    let Some(resource) = project
        .resource(group, version, kind)
        .filter(|resource| resource.api.is_some())
    else {
        bail!(
            "PROJECT has no API {full_group}/{version} {kind}: create it first with \
             `cargo xtask create api`"
        );
    };
    let kind = resource.kind();
    let mut webhooks = resource.webhooks.clone().unwrap_or_else(|| Webhooks {
        webhook_version: "v1".to_owned(),
        ..Webhooks::default()
    });
    // Where PROJECT's `path` of the kind's types says it is: kinds made before `edit
    // --multigroup` stay flat.
    let layout = layout::kind_layout(&project, &kind.group, &kind.kind);
    let values = kind_values(&kind, &project, &layout);
    let target = Target {
        project: &project,
        kind: &kind,
        layout: &layout,
        values: &values,
    };
    // First: the conversion's CA injection goes into a section this turns on.
    plan_webhook_sections(&mut plan)?;
    if args.defaulting || args.programmatic_validation {
        plan_admission(&mut plan, &target, args, &mut webhooks)?;
    }
    if args.conversion {
        plan_conversion(&mut plan, &target, args, &mut webhooks)?;
    }

    project
        .resource_mut(&kind.group, &kind.version, &kind.kind)
        .webhooks = Some(webhooks);
    plan.write(project::FILE, project.to_yaml());
    plan.format_rust()?;
    Ok(plan)
}

/// The files of `config/` with sections a project's first webhook turns on.
const FILES_WITH_WEBHOOK_SECTIONS: [&str; 2] = [
    "config/default/kustomization.yaml",
    "config/network-policy/kustomization.yaml",
];

/// Turns on the [`config::WEBHOOK_SECTION`]s of `config/` that are still commented out: the
/// webhooks' Service, cert-manager and the patches and replacements that wire them. A file
/// the project removed is left out; one whose sections are on already is left as it is.
fn plan_webhook_sections(plan: &mut Plan) -> Result<()> {
    for path in FILES_WITH_WEBHOOK_SECTIONS {
        if let Some(text) = plan.read(path)? {
            let on = config::with_webhook_sections(&text);
            if on != text {
                plan.write(path, on);
            }
        }
    }
    Ok(())
}

/// The kind the webhooks are for, and where its files are.
struct Target<'a> {
    project: &'a Project,
    kind: &'a Kind,
    layout: &'a KindLayout,
    /// [`kind_values`] of the kind.
    values: &'a Values,
}

/// The defaulting and validating webhooks: the kind's webhook module and its registration.
fn plan_admission(
    plan: &mut Plan,
    target: &Target<'_>,
    args: &Args,
    webhooks: &mut Webhooks,
) -> Result<()> {
    let Target {
        project,
        kind,
        layout,
        values,
    } = *target;
    for (requested, exists, what) in [
        (args.defaulting, webhooks.defaulting, "defaulting"),
        (
            args.programmatic_validation,
            webhooks.validation,
            "validating",
        ),
    ] {
        if requested && exists && !args.force {
            bail!(
                "the {what} webhook of {}/{} {} already exists (see PROJECT); pass --force to \
                 write its module again",
                kind.full_group(),
                kind.version,
                kind.kind
            );
        }
    }
    webhooks.defaulting |= args.defaulting;
    webhooks.validation |= args.programmatic_validation;

    let module_name = webhook_module(project, kind);
    let rules = Rules::of(plan, layout, kind)?;
    let values = webhook_values(values.clone(), webhooks, &rules)
        .with("webhook_module", module_name.as_str());
    let dir = layout.controller_dir(&kind.snake());
    plan.create(
        &format!("{dir}/{module_name}.rs"),
        webhook_module_text(&values, webhooks, &rules),
        args.force,
    )?;
    plan.create(
        &format!(
            "controller/tests/{}_{module_name}.rs",
            layout.test_stem(&kind.snake())
        ),
        webhook_test_text(&values, webhooks, kind, &rules),
        args.force,
    )?;
    let module = format!("{dir}/mod.rs");
    if !plan.exists(&module) {
        // A kind without a controller: the module holds the webhooks alone.
        render_into(plan, &module, template::WEBHOOK_ONLY_MOD_RS, &values);
        declare_controller_module(plan, layout, &values)?;
    }
    insert_rendered(
        plan,
        &module,
        template::SUBMODULES_MARKER,
        template::WEBHOOK_MODULE_LINE,
        &values,
    )?;
    insert_rendered(
        plan,
        "controller/src/main.rs",
        template::WEBHOOKS_MARKER,
        template::WEBHOOK_REGISTRATION_LINE,
        &values,
    )
}

/// The module of a version's admission webhooks: `webhook` for the first version of the
/// kind that has any, `webhook_<version>` for the others; `admission` (`admission_<version>`)
/// in the module of a kind named `Webhook`, which a `webhook` in it would repeat.
fn webhook_module(project: &Project, kind: &Kind) -> String {
    let base = if kind.snake() == "webhook" {
        "admission"
    } else {
        "webhook"
    };
    let first = project
        .versions_of(&kind.group, &kind.kind)
        .find(|r| {
            r.webhooks
                .as_ref()
                .is_some_and(|w| w.defaulting || w.validation)
        })
        .map(|r| r.version.as_str());
    match first {
        Some(first) if first != kind.version => format!("{base}_{}", kind.version),
        _ => base.to_owned(),
    }
}

/// The conversion: each spoke's `Spoke` impl beside its types, which then name the hub
/// (and so are served), the conversion endpoint on the manager, and cert-manager's CA
/// injection into the CRD.
fn plan_conversion(
    plan: &mut Plan,
    target: &Target<'_>,
    args: &Args,
    webhooks: &mut Webhooks,
) -> Result<()> {
    let Target {
        project,
        kind,
        layout,
        values,
    } = *target;
    let hub = &kind.version;
    let versions: Vec<String> = project
        .versions_of(&kind.group, &kind.kind)
        .filter(|r| r.api.is_some())
        .map(|r| r.version.clone())
        .collect();
    let storage = versions::storage_version(plan, layout, &kind.kind, &versions)?;
    if storage != *hub {
        bail!(
            "the hub of a conversion is the storage version: {storage} for {}; run \
             `cargo xtask create webhook` with --version {storage}",
            kind.kind
        );
    }
    for spoke in &args.spokes {
        if spoke == hub || !versions.contains(spoke) {
            bail!(
                "--spoke {spoke}: {} has no other version {spoke} (it has {}); create it with \
                 `cargo xtask create api --version {spoke}`",
                kind.kind,
                versions.join(", ")
            );
        }
        if webhooks.spoke.contains(spoke) && !args.force {
            bail!(
                "{spoke} of {} converts already (see PROJECT); pass --force to write its \
                 conversion again",
                kind.kind
            );
        }
    }
    let values = values
        .clone()
        .with("hub", hub.as_str())
        .with("hub_module", layout.api_module(hub));
    for spoke in &args.spokes {
        let values = values.clone().with("version", spoke.as_str());
        let spoke_dir = layout.api_dir(spoke);
        plan.create(
            &format!("{spoke_dir}/{}_conversion.rs", kind.snake()),
            templates::render(template::CONVERSION_RS, &values),
            args.force,
        )?;
        if !webhooks.spoke.contains(spoke) {
            insert_rendered(
                plan,
                &format!("{spoke_dir}/mod.rs"),
                template::KINDS_MARKER,
                template::CONVERSION_MODULE_LINE,
                &values,
            )?;
            let hub_argument = templates::render(template::HUB_ARG, &values);
            let declaration = Declaration::find(plan, layout, spoke, &kind.kind)?;
            versions::make_spoke(plan, &declaration, &hub_argument)?;
            webhooks.spoke.push(spoke.clone());
        }
    }
    if !webhooks.conversion {
        insert_rendered(
            plan,
            "controller/src/main.rs",
            template::WEBHOOKS_MARKER,
            template::CONVERSION_REGISTRATION_LINE,
            &values,
        )?;
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
            insert_rendered(
                plan,
                "config/default/kustomization.yaml",
                marker,
                line,
                &values,
            )?;
        }
        webhooks.conversion = true;
    }
    Ok(())
}

/// What the scaffolded admission webhooks check.
enum Rules {
    /// The example field `foo`, which `create api` gives a kind: a default, a rule, and
    /// tests of both.
    ExampleField,
    /// Nothing yet, for a kind without that field (the deploy-image plugin's): the
    /// webhooks are left to the user with TODOs, as kubebuilder leaves them, and tested
    /// with the kind's sample (its spec as JSON), which they must admit as it is.
    Todo { sample_spec: String },
}

impl Rules {
    /// The rules for `kind`: [`Rules::ExampleField`] when its spec type has a field `foo`.
    fn of(plan: &Plan, layout: &KindLayout, kind: &Kind) -> Result<Rules> {
        let types = Declaration::find(plan, layout, &kind.version, &kind.kind)?.path;
        let text = plan.read(&types)?.unwrap_or_default();
        let file = syn::parse_file(&text).with_context(|| format!("parsing {types}"))?;
        let spec = format!("{}Spec", kind.kind);
        let has_example_field = file.items.iter().any(|item| match item {
            syn::Item::Struct(item) if item.ident == spec => item
                .fields
                .iter()
                .any(|field| field.ident.as_ref().is_some_and(|name| name == "foo")),
            _ => false,
        });
        if has_example_field {
            return Ok(Rules::ExampleField);
        }
        let path = format!("config/samples/{}", kind.sample_name());
        let sample: serde_json::Value = match plan.read(&path)? {
            Some(text) => {
                serde_saphyr::from_str(&text).with_context(|| format!("parsing {path}"))?
            }
            None => serde_json::Value::Null,
        };
        let spec = match &sample["spec"] {
            serde_json::Value::Null => serde_json::json!({}),
            spec => spec.clone(),
        };
        Ok(Rules::Todo {
            sample_spec: spec.to_string(),
        })
    }

    /// A spec the webhooks' tests may create.
    fn valid_spec(&self) -> &str {
        match self {
            Rules::ExampleField => "{}",
            Rules::Todo { sample_spec } => sample_spec,
        }
    }
}

/// The placeholders that depend on which webhooks the module holds and what they check.
fn webhook_values(values: Values, webhooks: &Webhooks, rules: &Rules) -> Values {
    let (doc, types) = match (webhooks.defaulting, webhooks.validation) {
        (true, true) => (
            "a defaulter and a validator",
            ".defaulter(Defaulter).validator(Validator)",
        ),
        (true, false) => ("a defaulter", ".defaulter(Defaulter)"),
        _ => ("a validator", ".validator(Validator)"),
    };
    let mut imports = vec!["self as admission", "AdmissionContext", "FieldError"];
    if webhooks.validation {
        // The TODO validation names no field.
        if matches!(rules, Rules::ExampleField) {
            imports.push("FieldPath");
        }
        imports.push("Warnings");
    }
    imports.push("Webhooks");
    let cases_doc = match rules {
        Rules::ExampleField => {
            "The cases check the scaffold's\n//! example field `foo`: change them with the webhooks, and add one per rule."
        }
        Rules::Todo { .. } => {
            "The cases check that the\n//! kind's sample is admitted as it is: add one per rule you give the webhooks."
        }
    };
    values
        .with("webhook_doc", doc)
        .with("webhook_imports", imports.join(", "))
        .with("webhook_types", types)
        .with("webhook_test_cases_doc", cases_doc)
        .with("valid_spec", rules.valid_spec())
}

/// The webhooks' test: the header, each webhook's direct tests, then the apiserver's test
/// with each webhook's cases.
fn webhook_test_text(values: &Values, webhooks: &Webhooks, kind: &Kind, rules: &Rules) -> String {
    let example = matches!(rules, Rules::ExampleField);
    let mut types = vec!["webhooks"];
    let mut traits = vec!["AdmissionContext", "LoopbackRegistration"];
    let mut paths = Vec::new();
    let mut cases = String::new();
    if webhooks.defaulting {
        types.push("Defaulter");
        traits.push("Defaulter as _");
        paths.push(kind.webhook_path(true));
        if example {
            cases += &templates::render(template::WEBHOOK_TEST_DEFAULTING_CASE, values);
        }
    }
    if webhooks.validation {
        types.push("Validator");
        if example {
            traits.push("FieldError");
            cases += &templates::render(template::WEBHOOK_TEST_VALIDATION_CASE, values);
        }
        traits.push("Validator as _");
        paths.push(kind.webhook_path(false));
    }
    if !example {
        cases += &templates::render(template::WEBHOOK_TEST_TODO_CASE, values);
    }
    let paths: Vec<String> = paths.iter().map(|path| format!("{path:?}")).collect();
    let values = values
        .clone()
        .with("webhook_test_types", types.join(", "))
        .with("webhook_test_traits", traits.join(", "))
        .with("webhook_paths", paths.join(", "))
        .with("webhook_test_cases", cases.trim_end_matches('\n'));
    let (defaulter, validator) = if example {
        (
            template::WEBHOOK_TEST_DEFAULTER_RS,
            template::WEBHOOK_TEST_VALIDATOR_RS,
        )
    } else {
        (
            template::WEBHOOK_TEST_TODO_DEFAULTER_RS,
            template::WEBHOOK_TEST_TODO_VALIDATOR_RS,
        )
    };
    let mut test = templates::render(template::WEBHOOK_TEST_RS, &values);
    if webhooks.defaulting {
        test += &templates::render(defaulter, &values);
    }
    if webhooks.validation {
        test += &templates::render(validator, &values);
    }
    test + &templates::render(template::WEBHOOK_TEST_APISERVER_RS, &values)
}

/// The webhook module with a section per webhook, each followed by its rules.
fn webhook_module_text(values: &Values, webhooks: &Webhooks, rules: &Rules) -> String {
    let (defaults, validation) = match rules {
        Rules::ExampleField => (
            template::DEFAULTS_EXAMPLE_RS,
            template::VALIDATION_EXAMPLE_RS,
        ),
        Rules::Todo { .. } => (template::DEFAULTS_TODO_RS, template::VALIDATION_TODO_RS),
    };
    let mut module = templates::render(template::WEBHOOK_RS, values);
    if webhooks.defaulting {
        module += &templates::render(template::DEFAULTER_RS, values);
        module += &templates::render(defaults, values);
    }
    if webhooks.validation {
        module += &templates::render(template::VALIDATOR_RS, values);
        module += &templates::render(validation, values);
    }
    module
}
