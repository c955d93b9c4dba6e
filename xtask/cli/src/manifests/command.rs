//! The `cargo xtask manifests` command: the declarations read (or built), the outputs
//! written or checked.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use kubebuilder::crd;
use kubebuilder::declarations::{
    Declarations, GENERATE_EMBEDDED_OBJECT_META_FLAG, MAX_DESC_LEN_FLAG, OMIT_TOOL_VERSION_FLAG,
};

use super::{DECLARATIONS_PACKAGE, Output, crd_options, manager_namespace, outputs, stale, write};
use crate::source;

/// The options of `cargo xtask manifests` (kubebuilder's `make manifests`); the default is
/// the command without flags. The CRD options add to those PROJECT records (`crd:`).
#[derive(clap::Args, Default)]
pub struct Args {
    /// Write nothing; fail listing the files that are out of date.
    #[arg(long)]
    pub check: bool,
    /// controller-gen's `crd:maxDescLen`: cut CRD descriptions to this many bytes (0 drops them).
    #[arg(long)]
    pub max_desc_len: Option<usize>,
    /// controller-gen's `crd:omitToolVersion`: leave the controller-gen version annotation
    /// out of the CRDs.
    #[arg(long)]
    pub omit_tool_version: bool,
    /// controller-gen's `crd:generateEmbeddedObjectMeta`: an `ObjectMeta` below the root
    /// (a pod template's) has the properties a client sets (`name`, `namespace`, `labels`,
    /// `annotations`, `finalizers`).
    #[arg(long)]
    pub generate_embedded_object_meta: bool,
    /// Build the declarations binary and write what it registers, rather than read the
    /// sources (the reference the reading defers to wherever it could differ).
    #[arg(long)]
    pub build: bool,
    /// Write what this declarations binary registers, already built (as `cargo xtask test`'s
    /// build of every target has it), rather than read the sources or build it.
    #[arg(long, value_name = "EXECUTABLE", conflicts_with = "build")]
    pub declarations: Option<PathBuf>,
}

/// Writes the files that are missing or out of date, or with `--check` only lists them
/// and fails.
pub fn run(args: Args) -> Result<()> {
    let root = crate::workspace_root();
    let recorded = crd_options(&root)?;
    let options = crd::Options {
        max_desc_len: args.max_desc_len.or(recorded.max_desc_len),
        omit_tool_version: args.omit_tool_version || recorded.omit_tool_version,
        generate_embedded_object_meta: args.generate_embedded_object_meta
            || recorded.generate_embedded_object_meta,
    };
    let declarations = match (&args.declarations, args.build) {
        (Some(executable), _) => {
            let mut command = Command::new(executable);
            printed(&mut command, &options, &executable.display().to_string())?
        }
        (None, true) => built(&root, &options)?,
        (None, false) => declarations(&root, &options)?,
    };
    let outputs = outputs(&root, &declarations, manager_namespace(&root)?.as_deref())?;
    if args.check {
        check(&root, &outputs)
    } else {
        write(&root, &outputs)
    }
}

/// Fails listing the outputs whose file is missing or out of date, if any.
fn check(root: &Path, outputs: &[Output]) -> Result<()> {
    let stale = stale(root, outputs);
    if stale.is_empty() {
        eprintln!("manifests: all {} files up to date", outputs.len());
        return Ok(());
    }
    for output in &stale {
        eprintln!("{}: out of date", output.path.display());
    }
    bail!(
        "{} generated file(s) are out of date; run `cargo xtask manifests`",
        stale.len()
    );
}

/// The declarations of the workspace at `root`, read from the sources; built, saying why,
/// where the reading defers to a build.
pub fn declarations(root: &Path, options: &crd::Options) -> Result<Declarations> {
    match source::read(root, options) {
        Ok(declarations) => Ok(declarations),
        Err(deferred) => {
            eprintln!("manifests: building the declarations, since {deferred}");
            built(root, options)
        }
    }
}

/// The declarations of the workspace at `root`: its declarations binary, built and run by
/// cargo in the profile of this xtask (release when it has no debug assertions). Compiler
/// warnings and errors and the binary's own errors go to standard error as they come, so
/// that a compile error in the API shows as in any build; cargo's progress lines do not.
pub fn built(root: &Path, options: &crd::Options) -> Result<Declarations> {
    let mut command = crate::cargo();
    command
        .current_dir(root)
        .args(["run", "--quiet", "--package", DECLARATIONS_PACKAGE]);
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    command.arg("--");
    let run = format!("cargo run --package {DECLARATIONS_PACKAGE}");
    printed(&mut command, options, &run)
}

/// The declarations `command` (a declarations binary, or a cargo run of it, which `name`
/// says) prints, given `options`; its standard error goes to ours as it comes.
fn printed(command: &mut Command, options: &crd::Options, name: &str) -> Result<Declarations> {
    if let Some(max_desc_len) = options.max_desc_len {
        command.args([MAX_DESC_LEN_FLAG, &max_desc_len.to_string()]);
    }
    if options.omit_tool_version {
        command.arg(OMIT_TOOL_VERSION_FLAG);
    }
    if options.generate_embedded_object_meta {
        command.arg(GENERATE_EMBEDDED_OBJECT_META_FLAG);
    }
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {name}"))?;
    if !output.status.success() {
        bail!(
            "reading what the attributes declare: `{name}` failed ({}); its errors are above",
            output.status
        );
    }
    serde_json::from_slice(&output.stdout)
        .with_context(|| format!("{DECLARATIONS_PACKAGE} printed no declarations"))
}
