//! `cargo xtask test`: provisions everything the tests need, then runs every test of the
//! workspace against a real control plane.

use std::process::Command;

use anyhow::{Context, Result, bail};
use kubebuilder_envtest::{ControlPlane, assets};

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

    // SAFETY: no other thread runs yet; `ControlPlane::start` reads the variable.
    unsafe { std::env::set_var(assets::ASSETS_ENV, &assets) };
    report_startup_time()?;

    let root = crate::workspace_root();
    step(
        "cargo fmt --check",
        Command::new("cargo")
            .current_dir(&root)
            .args(["fmt", "--all", "--check"]),
    )?;
    step(
        "cargo clippy",
        Command::new("cargo").current_dir(&root).args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
    )?;

    // The generated manifests must match the declarations (CI fails on drift).
    eprintln!("xtask: manifests --check");
    crate::manifests::run(crate::manifests::Args {
        check: true,
        max_desc_len: None,
    })?;

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

/// Starts and stops one control plane, so every run shows how fast the cached binaries start.
fn report_startup_time() -> Result<()> {
    let plane = ControlPlane::start()?;
    eprintln!(
        "xtask: control plane ready in {:.1} s (cached binaries, no Go build)",
        plane.startup_time().as_secs_f64()
    );
    plane.stop();
    Ok(())
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
