//! `cargo xtask edit`: changes the project's layout, as `kubebuilder edit` does. Only PROJECT
//! changes: the options say where the kinds created from then on go.

use std::path::Path;

use anyhow::{Context as _, Result, bail};
use clap::ArgAction;

use super::layout;
use super::plan::Plan;
use super::project::{self, Project};

/// The options of `cargo xtask edit` (kubebuilder's `edit`).
#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// Put new kinds under their group (kubebuilder's multi-group layout):
    /// `api/src/<group>/<version>/` and `controller/src/<group>/<kind>/`, so that the same
    /// kind may exist in several groups. Existing kinds stay where they are.
    /// `--multigroup=false` turns it off while no kind is in that layout.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", action = ArgAction::Set)]
    pub multigroup: Option<bool>,
}

/// Runs `edit` in the workspace at `root`.
pub fn run_in(root: &Path, args: &Args) -> Result<()> {
    super::apply(plan(root, args)?)
}

/// The PROJECT file `edit` writes in the workspace at `root`, or why it cannot.
pub fn plan(root: &Path, args: &Args) -> Result<Plan> {
    let Some(multigroup) = args.multigroup else {
        bail!(
            "nothing to change: `edit` changes the layout with --multigroup (new kinds under \
             their group) or --multigroup=false"
        );
    };
    let mut plan = Plan::new(root);
    let text = plan.read(project::FILE)?.with_context(|| {
        format!(
            "no {} file in {}: `edit` works in projects made by `init`",
            project::FILE,
            root.display()
        )
    })?;
    let mut project = Project::parse(&text)?;
    let grouped: Vec<String> = layout::grouped_kinds(&project)
        .map(|resource| format!("{} {} {}", resource.group, resource.version, resource.kind))
        .collect();
    if !multigroup && !grouped.is_empty() {
        bail!(
            "--multigroup=false: these kinds are in the multigroup layout (see PROJECT): {}; \
             the flat layout cannot hold them, so the project stays multigroup",
            grouped.join(", ")
        );
    }
    if project.multigroup != multigroup {
        project.multigroup = multigroup;
        plan.write(project::FILE, project.to_yaml());
        if multigroup && !project.resources.is_empty() {
            // As kubebuilder: moving the existing kinds is the user's choice.
            eprintln!(
                "edit: new kinds go under their group from now on; the existing ones stay \
                 where they are (move them by hand, with their `path` in PROJECT, if you want \
                 them under their group too)"
            );
        }
    }
    Ok(plan)
}
