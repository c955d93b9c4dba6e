//! `cargo xtask create webhook`: a kind's defaulting and validating admission webhooks and
//! their registration in the manager, as `kubebuilder create webhook` scaffolds them.

use std::path::Path;

use anyhow::{Result, bail};

use super::plan::Plan;
use super::project::{self, Webhooks};
use super::templates::{self, kind as template};
use super::{KindArgs, insert_rendered, kind_values, read_project_for, render_into};

#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    #[command(flatten)]
    pub kind: KindArgs,
    /// A defaulting (mutating) webhook.
    #[arg(long)]
    pub defaulting: bool,
    /// A validating webhook.
    #[arg(long)]
    pub programmatic_validation: bool,
    /// Write webhook.rs again (with the webhooks PROJECT records plus the requested ones).
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
    if !args.defaulting && !args.programmatic_validation {
        bail!("nothing to scaffold: pass --defaulting, --programmatic-validation or both");
    }
    let full_group = format!("{group}.{}", project.domain);
    let Some(resource) = project
        .resource(group, version, kind)
        .filter(|resource| resource.api.is_some())
    else {
        bail!(
            "PROJECT has no API {full_group}/{version} {kind}: create it first with \
             `cargo xtask create api`"
        );
    };
    let recorded = resource.webhooks.clone().unwrap_or_default();
    for (requested, exists, what) in [
        (args.defaulting, recorded.defaulting, "defaulting"),
        (
            args.programmatic_validation,
            recorded.validation,
            "validating",
        ),
    ] {
        if requested && exists && !args.force {
            bail!(
                "the {what} webhook of {full_group}/{version} {kind} already exists (see \
                 PROJECT); pass --force to write webhook.rs again"
            );
        }
    }
    let webhooks = Webhooks {
        defaulting: recorded.defaulting || args.defaulting,
        validation: recorded.validation || args.programmatic_validation,
        webhook_version: "v1".to_owned(),
    };

    let kind = resource.kind();
    let values = webhook_values(kind_values(&kind, &project.project_name), &webhooks);
    let dir = format!("controller/src/{}", kind.snake());
    plan.create(
        &format!("{dir}/webhook.rs"),
        webhook_module(&values, &webhooks),
        args.force,
    )?;
    let module = format!("{dir}/mod.rs");
    if !plan.exists(&module) {
        // A kind without a controller: the module holds the webhooks alone.
        render_into(&mut plan, &module, template::WEBHOOK_ONLY_MOD_RS, &values);
        insert_rendered(
            &mut plan,
            "controller/src/lib.rs",
            template::MODULES_MARKER,
            template::KIND_MODULE_LINE,
            &values,
        )?;
    }
    plan.insert_at_marker(
        &module,
        template::SUBMODULES_MARKER,
        template::WEBHOOK_MODULE_LINE,
    )?;
    insert_rendered(
        &mut plan,
        "controller/src/main.rs",
        template::WEBHOOKS_MARKER,
        template::WEBHOOK_REGISTRATION_LINE,
        &values,
    )?;

    project
        .resource_mut(&kind.group, &kind.version, &kind.kind)
        .webhooks = Some(webhooks);
    plan.write(project::FILE, project.to_yaml());
    plan.format_rust()?;
    Ok(plan)
}

/// The placeholders that depend on which webhooks the module holds.
fn webhook_values(values: templates::Values, webhooks: &Webhooks) -> templates::Values {
    let (doc, imports, types) = match (webhooks.defaulting, webhooks.validation) {
        (true, true) => (
            "a defaulter and a validator",
            "self as admission, FieldError, FieldPath, Warnings, Webhooks",
            ".defaulter(Defaulter).validator(Validator)",
        ),
        (true, false) => (
            "a defaulter",
            "self as admission, FieldError, Webhooks",
            ".defaulter(Defaulter)",
        ),
        _ => (
            "a validator",
            "self as admission, FieldError, FieldPath, Warnings, Webhooks",
            ".validator(Validator)",
        ),
    };
    values
        .with("webhook_doc", doc)
        .with("webhook_imports", imports)
        .with("webhook_types", types)
}

/// `webhook.rs` with a section per webhook.
fn webhook_module(values: &templates::Values, webhooks: &Webhooks) -> String {
    let mut module = templates::render(template::WEBHOOK_RS, values);
    if webhooks.defaulting {
        module += &templates::render(template::DEFAULTER_RS, values);
    }
    if webhooks.validation {
        module += &templates::render(template::VALIDATOR_RS, values);
    }
    module
}
