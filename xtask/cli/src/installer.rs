//! `cargo xtask build-installer`: every object of `config/default` in one file
//! (`dist/install.yaml`), as `kustomize build config/default` renders it, for
//! `kubectl apply -f dist/install.yaml` on clusters without this repository.

use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::kustomize::{self, Overrides};

/// The options of `cargo xtask build-installer` (kubebuilder's `make build-installer IMG=...`).
#[derive(clap::Args)]
pub struct Args {
    /// The manager image (replaces the `controller` image of config/manager).
    #[arg(long)]
    pub image: Option<String>,
    /// The kustomization to render, relative to the workspace root.
    #[arg(long, default_value = "config/default")]
    pub dir: PathBuf,
    /// Where to write, relative to the workspace root.
    #[arg(long, default_value = "dist/install.yaml")]
    pub output: PathBuf,
}

/// Renders the kustomization, with the manager image replaced when one is given, into one
/// multi-document YAML file.
pub fn run(args: Args) -> Result<()> {
    let objects = kustomize::build(
        &kustomize::in_workspace(&args.dir),
        &Overrides::manager_image(args.image.as_deref()),
    )?;
    let output = kustomize::in_workspace(&args.output);
    if let Some(dir) = output.parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(&output, kubebuilder::yaml::to_documents(&objects))
        .with_context(|| format!("writing {}", output.display()))?;
    eprintln!(
        "wrote {} ({} objects)",
        args.output.display(),
        objects.len()
    );
    Ok(())
}
