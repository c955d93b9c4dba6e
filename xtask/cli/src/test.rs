//! `cargo xtask test`: provisions everything the tests need, then runs every test of the
//! workspace against a real control plane: fmt, clippy, cargo-deny's dependency policy
//! (when the workspace has a `deny.toml`), `manifests --check`, the tests, the doc tests, and
//! last the slow tests (`#[ignore]`d ones).

use std::process::Command;

use anyhow::{Context, Result, bail};
use kubebuilder_envtest::{ControlPlane, assets};

use crate::tools;

/// The options of `cargo xtask test` (kubebuilder's `make test`).
#[derive(clap::Args)]
pub struct Args {
    /// Extra arguments for `cargo test` (e.g. a test name filter after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    cargo_args: Vec<String>,
}

/// Installs the control plane binaries and the tools, then runs each step of the module
/// docs in order, stopping at the first that fails.
pub fn run(args: Args) -> Result<()> {
    let assets = assets::install()?;
    let controller_gen = tools::CONTROLLER_GEN.install()?;
    let kustomize = tools::KUSTOMIZE.install()?;
    let promtool = tools::PROMTOOL.install()?;
    let root = crate::workspace_root();
    // A project without a deny.toml (a new one made by `init`) has no policy to check.
    let cargo_deny = root
        .join("deny.toml")
        .is_file()
        .then(|| tools::CARGO_DENY.install())
        .transpose()?;
    // The chart tests' helm is the one cert-manager's chart is installed with: one helm,
    // built in cert-manager's module (its dependencies are cert-manager's).
    let helm = crate::certmanager::helm()?;

    // SAFETY: no other thread runs yet; `ControlPlane::start` reads the variable.
    unsafe { std::env::set_var(assets::ASSETS_ENV, &assets) };
    report_startup_time()?;

    step(
        "cargo fmt --check",
        crate::cargo()
            .current_dir(&root)
            .args(["fmt", "--all", "--check"]),
    )?;
    step(
        "cargo clippy",
        crate::cargo().current_dir(&root).args([
            "clippy",
            "--workspace",
            "--all-targets",
            // The e2e tests build only with their feature; they are linted all the same.
            "--all-features",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    if let Some(cargo_deny) = &cargo_deny {
        // deny.toml's policy: licenses, banned and wildcard versions, crates.io as the only
        // source. `--locked`: the tree checked is the one Cargo.lock pins. No advisories:
        // their database is fetched from the network.
        step(
            "cargo deny check bans licenses sources",
            Command::new(cargo_deny)
                .current_dir(&root)
                .args(["--locked", "check", "bans", "licenses", "sources"]),
        )?;
    }

    // The generated manifests must match the declarations (CI fails on drift), as a build
    // of the declarations binary has them: the reference.
    eprintln!("xtask: manifests --check --build");
    crate::manifests::run(crate::manifests::Args {
        check: true,
        max_desc_len: None,
        build: true,
    })?;

    let cargo_test = |cargo_args: &[String]| {
        let mut test = crate::cargo();
        test.current_dir(&root)
            .args(["test", "--workspace", "--all-targets"])
            .args(cargo_args)
            .env(assets::ASSETS_ENV, &assets)
            .env(tools::CONTROLLER_GEN.env, &controller_gen)
            .env(tools::KUSTOMIZE.env, &kustomize)
            .env(tools::PROMTOOL.env, &promtool)
            .env("HELM", &helm);
        test
    };
    step("cargo test --workspace", &mut cargo_test(&args.cargo_args))?;

    let mut doc = crate::cargo();
    doc.current_dir(&root)
        .args(["test", "--workspace", "--doc"]);
    step("cargo test --doc", &mut doc)?;

    // Slow tests (building a copy of the workspace, say) are `#[ignore]`d, so that a plain
    // `cargo test` stays quick; they run here, last: they may rebuild shared artifacts.
    step(
        "cargo test --workspace -- --ignored (the slow tests)",
        &mut cargo_test(&ignored_only(&args.cargo_args)),
    )
}

/// `cargo_args` with `--ignored` passed to the test binaries.
fn ignored_only(cargo_args: &[String]) -> Vec<String> {
    let mut args = cargo_args.to_vec();
    if !args.iter().any(|arg| arg == "--") {
        args.push("--".to_owned());
    }
    args.push("--ignored".to_owned());
    args
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

pub(crate) fn step(name: &str, command: &mut Command) -> Result<()> {
    eprintln!("xtask: {name}");
    let status = command
        .status()
        .with_context(|| format!("running {name}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_tests_take_the_same_filters() {
        let strings = |args: &[&str]| args.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>();
        assert_eq!(ignored_only(&[]), strings(&["--", "--ignored"]));
        assert_eq!(
            ignored_only(&strings(&["-p", "api", "--", "crd"])),
            strings(&["-p", "api", "--", "crd", "--ignored"])
        );
    }
}
