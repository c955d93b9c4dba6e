//! `cargo xtask test`: provisions everything the tests need, then runs every test of the
//! workspace against a real control plane.

use std::process::Command;

use anyhow::{Context, Result, bail};
use kubebuilder_envtest::assets;

use crate::tools;

#[derive(clap::Args)]
pub struct Args {
    /// Extra arguments for `cargo test` (e.g. a test name filter after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    cargo_args: Vec<String>,
}

pub fn run(args: Args) -> Result<()> {
    let assets = assets::install()?;
    let controller_gen = tools::CONTROLLER_GEN.install()?;
    let kustomize = tools::KUSTOMIZE.install()?;

    let root = crate::workspace_root();
    step(
        "cargo fmt --check",
        Command::new("cargo")
            .current_dir(&root)
            .args(["fmt", "--all", "--check"]),
    )?;

    let mut test = Command::new("cargo");
    test.current_dir(&root)
        .args(["test", "--workspace", "--all-targets"])
        .args(&args.cargo_args)
        .env(assets::ASSETS_ENV, &assets)
        .env(tools::CONTROLLER_GEN.env, &controller_gen)
        .env(tools::KUSTOMIZE.env, &kustomize);
    step("cargo test --workspace", &mut test)?;

    let mut doc = Command::new("cargo");
    doc.current_dir(&root)
        .args(["test", "--workspace", "--doc"]);
    step("cargo test --doc", &mut doc)
}

fn step(name: &str, command: &mut Command) -> Result<()> {
    eprintln!("xtask: {name}");
    let status = command
        .status()
        .with_context(|| format!("running {name}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    Ok(())
}
