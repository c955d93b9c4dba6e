//! `cargo xtask test`: provisions everything the tests need, then runs every test of the
//! workspace against a real control plane, with fmt, clippy, cargo-deny's dependency policy
//! (when the workspace has a `deny.toml`), `manifests --check` of the declarations binary
//! the test build built, and the doc tests.
//!
//! The tests are built once, with clippy's lints ([`binaries`]), then run side by side
//! ([`jobs`]): the test executables, which mostly wait, several at a time; the checks, the
//! doc tests and the slow (`#[ignore]`d) tests, which keep the CPU busy, at the lowest CPU
//! priority beside them. At the end it prints how long each job and each phase took; a
//! warning of the build fails the run there, as `cargo clippy -- -D warnings` would.

pub mod binaries;
pub mod jobs;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use kubebuilder_envtest::{ControlPlane, assets};

use self::binaries::{Built, TestBinary};
use self::jobs::{Job, Lane, Slots};
use crate::manifests::DECLARATIONS_PACKAGE;
use crate::report::Phases;
use crate::tools;

/// The options of `cargo xtask test` (kubebuilder's `make test`).
#[derive(clap::Args)]
pub struct Args {
    /// Extra arguments: those before `--` for the build (`-p api`), those after it for the
    /// test executables (a test name filter).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    cargo_args: Vec<String>,
}

/// The test executables that only their own commands run: `test-faults` and `test-e2e`.
const OWN_COMMAND_FEATURES: &[&str] = &["faults", "e2e"];

/// Waiting tests at once: each may run a control plane of its own (about 400 MiB).
const WAITING_SLOTS: usize = 4;
/// Busy jobs at once: two keep both cores busy while one of them links or waits.
const BUSY_SLOTS: usize = 2;

/// The flags trybuild 1.0 gives rustc when it builds a case (its `rustflags.rs`, and the
/// diagnostic width of its `build_test`). It gives its dependency step the same flags
/// without the width, and cargo keeps a unit's artifacts apart by its flags: each case
/// project's dependency tree was built twice, once by a step whose artifacts no case used.
/// Cargo prefers `CARGO_ENCODED_RUSTFLAGS` to the `--config build.rustflags` trybuild
/// passes (and trybuild removes only `RUSTFLAGS`), so with these flags in it both steps
/// build the one tree the cases use, and the cases see what trybuild would have given them.
const TRYBUILD_RUSTFLAGS: &[&str] = &[
    "--cfg",
    "trybuild",
    "--verbose",
    "-A",
    "dead_code",
    "--diagnostic-width=140",
];

/// The paths of the tools the tests use, installed into the cache.
pub(crate) struct Tools {
    assets: PathBuf,
    /// The variables that give the tests each tool's path.
    env: Vec<(&'static str, PathBuf)>,
    cargo_deny: Option<PathBuf>,
}

impl Tools {
    /// Each tool's variable and path.
    pub(crate) fn paths(&self) -> impl Iterator<Item = (&str, &Path)> {
        let cargo_deny = self
            .cargo_deny
            .as_deref()
            .map(|path| (tools::CARGO_DENY.env, path));
        self.env
            .iter()
            .map(|(name, path)| (*name, path.as_path()))
            .chain(cargo_deny)
    }
}

/// Runs the phases of the module docs; fails when any job failed, after all have run.
pub fn run(args: Args) -> Result<()> {
    Phases::run("cargo xtask test", |phases| run_phases(&args, phases))
}

fn run_phases(args: &Args, phases: &mut Phases) -> Result<()> {
    let root = crate::workspace_root();
    let (build_args, test_args) = split_at_dashes(&args.cargo_args);
    // First what takes a second and needs nothing (`make test` runs fmt before envtest).
    phases.time("cargo fmt --check", || {
        succeeds(
            "cargo fmt --check",
            crate::cargo()
                .current_dir(&root)
                .args(["fmt", "--all", "--check"]),
        )
    })?;
    let tools = phases.time(
        "the tools (control plane, controller-manager, controller-gen, kustomize, promlint, helm, cargo-deny)",
        install_tools,
    )?;
    // SAFETY: no other thread runs yet; `ControlPlane::start` reads the variable.
    unsafe { std::env::set_var(assets::ASSETS_ENV, &tools.assets) };
    phases.time("a control plane started and stopped", report_startup_time)?;
    let built = phases.time("the test build (every target, every feature)", || {
        binaries::build(&root, &build_args)
    })?;
    let jobs = phases.time("listing the slow tests", || {
        jobs_of(&root, &built, &tools, &build_args, &test_args)
    })?;
    let mut outcomes = phases.time("the tests and checks, side by side", || {
        let slots = Slots {
            waiting: WAITING_SLOTS,
            busy: BUSY_SLOTS,
        };
        jobs::run(jobs, slots, &jobs::log_dir(&root, "test"))
    })?;
    let lints = lints_outcome(&built);
    jobs::print_outcome(&lints);
    outcomes.push(lints);
    println!("\n{}", jobs::table(&outcomes));
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|outcome| !outcome.passed)
        .map(|outcome| outcome.name.as_str())
        .collect();
    if !failed.is_empty() {
        bail!("failed: {}", failed.join(", "));
    }
    Ok(())
}

/// clippy's verdict on the test build, as a job's: it fails on any warning (rustc's or
/// clippy's) of the workspace's crates, repeated here so that the end of the output shows it.
fn lints_outcome(built: &Built) -> jobs::Outcome {
    let warnings = built.warnings.len();
    jobs::Outcome {
        name: "cargo clippy (the test build's lints)".to_owned(),
        lane: Lane::Busy,
        passed: warnings == 0,
        status: format!("{warnings} warnings"),
        elapsed: std::time::Duration::ZERO,
        cpu: std::time::Duration::ZERO,
        output: built.warnings.iter().map(String::as_str).collect(),
    }
}

/// Installs the control plane binaries (kube-controller-manager too, for the tests that
/// ask a control plane for it) and the tools the tests use.
pub(crate) fn install_tools() -> Result<Tools> {
    let assets = assets::install()?;
    let root = crate::workspace_root();
    // A project without a deny.toml (a new one made by `init`) has no policy to check.
    let cargo_deny = root
        .join("deny.toml")
        .is_file()
        .then(|| tools::CARGO_DENY.install())
        .transpose()?;
    let env = vec![
        (assets::ASSETS_ENV, assets.clone()),
        (
            assets::CONTROLLER_MANAGER_ENV,
            assets::install_controller_manager()?,
        ),
        (tools::CONTROLLER_GEN.env, tools::CONTROLLER_GEN.install()?),
        (tools::KUSTOMIZE.env, tools::KUSTOMIZE.install()?),
        (tools::PROMLINT.env, tools::PROMLINT.install()?),
        (tools::HELM.env, tools::HELM.install()?),
    ];
    Ok(Tools {
        assets,
        env,
        cargo_deny,
    })
}

/// Every job of a run: the test executables (those of `test-faults` and `test-e2e` aside)
/// waiting; the checks, the doc tests and each executable's slow tests busy.
fn jobs_of(
    root: &Path,
    built: &Built,
    tools: &Tools,
    build_args: &[String],
    test_args: &[String],
) -> Result<Vec<Job>> {
    let ours: Vec<&TestBinary> = built
        .tests
        .iter()
        .filter(|binary| !OWN_COMMAND_FEATURES.iter().any(|f| binary.requires(f)))
        .collect();
    let with_tools = |mut command: Command| {
        command.envs(tools.env.iter().map(|(name, path)| (*name, path)));
        command
    };
    // Integration tests first: they are the ones that wait longest.
    let mut waiting: Vec<&TestBinary> = ours.clone();
    waiting.sort_by_key(|binary| binary.kind != "test");
    let mut jobs: Vec<Job> = waiting
        .into_iter()
        .map(|binary| {
            let mut command = with_tools(binary.command());
            command.args(test_args);
            Job::new(binary.name(), Lane::Waiting, command)
        })
        .collect();
    let mut slow = Vec::new();
    for binary in ours {
        if binary.ignored_tests()? > 0 {
            let mut command = with_tools(binary.command());
            command.args(test_args).arg("--ignored");
            slow.push((binary, command));
        }
    }
    // trybuild builds every crate's UI tests in one target directory, each with a copy of
    // the dependency tree: one after another, the second finds most of its copy built.
    let (ui, others): (Vec<_>, Vec<_>) = slow
        .into_iter()
        .partition(|(binary, _)| binary.dev_dependencies.iter().any(|d| d == "trybuild"));
    if !ui.is_empty() {
        let targets: Vec<&str> = ui
            .iter()
            .map(|(binary, _)| binary.target.as_str())
            .collect();
        let name = format!("trybuild --ignored: {}", targets.join(", "));
        // trybuild's project has cargo's default profile, not the workspace's: without debug
        // info its dependency tree builds, and its passing cases link, faster (7% measured);
        // what the cases check (diagnostics, what they print) does not change. Its
        // dependency step gets the cases' flags ([`TRYBUILD_RUSTFLAGS`]).
        let commands = ui
            .into_iter()
            .map(|(_, mut command)| {
                command
                    .env("CARGO_PROFILE_DEV_DEBUG", "false")
                    .env("CARGO_ENCODED_RUSTFLAGS", TRYBUILD_RUSTFLAGS.join("\x1f"));
                command
            })
            .collect();
        // The longest busy job: first.
        jobs.push(Job::chain(name, Lane::Busy, commands));
    }
    jobs.extend(checks(root, built, tools, build_args)?);
    for (binary, command) in others {
        jobs.push(Job::new(
            format!("{} --ignored", binary.name()),
            Lane::Busy,
            command,
        ));
    }
    Ok(jobs)
}

/// cargo-deny, `manifests --check` of the built declarations and the doc tests, as busy
/// jobs (clippy ran in the test build).
fn checks(root: &Path, built: &Built, tools: &Tools, build_args: &[String]) -> Result<Vec<Job>> {
    let mut jobs = Vec::new();
    if let Some(cargo_deny) = &tools.cargo_deny {
        // deny.toml's policy: licenses, banned and wildcard versions, crates.io as the only
        // source. `--locked`: the tree checked is the one Cargo.lock pins. No advisories:
        // their database is fetched from the network.
        let mut deny = Command::new(cargo_deny);
        deny.current_dir(root)
            .args(["--locked", "check", "bans", "licenses", "sources"]);
        jobs.push(Job::new("cargo deny check", Lane::Busy, deny));
    }
    // The generated manifests must match the declarations (CI fails on drift), as the
    // declarations binary has them: the reference. The test build built it, with every
    // feature; when the packages built leave it out, `--build` builds it.
    let mut manifests = Command::new(crate::xtask_exe()?);
    manifests.current_dir(root).args(["manifests", "--check"]);
    match built.programs.get(DECLARATIONS_PACKAGE) {
        Some(declarations) => manifests.arg("--declarations").arg(declarations),
        None => manifests.arg("--build"),
    };
    jobs.push(Job::new(
        "cargo xtask manifests --check",
        Lane::Busy,
        manifests,
    ));
    // Every feature and clippy's driver, as the tests were built: the libraries are reused.
    let mut doc = crate::cargo();
    doc.current_dir(root)
        .args(["test", "--doc", "--all-features"])
        .args(binaries::packages_or_workspace(build_args));
    binaries::with_lints(&mut doc)?;
    jobs.push(Job::new("cargo test --doc", Lane::Busy, doc));
    Ok(jobs)
}

/// The arguments before `--` and those after it.
pub(crate) fn split_at_dashes(args: &[String]) -> (Vec<String>, Vec<String>) {
    match args.iter().position(|arg| arg == "--") {
        Some(at) => (args[..at].to_vec(), args[at + 1..].to_vec()),
        None => (args.to_vec(), Vec::new()),
    }
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

/// Says `name`, then runs `command` in the foreground, failing when it fails.
pub(crate) fn step(name: &str, command: &mut Command) -> Result<()> {
    eprintln!("xtask: {name}");
    succeeds(name, command)
}

/// Runs `command` (a phase already said what it is) in the foreground, failing when it
/// fails.
pub(crate) fn succeeds(name: &str, command: &mut Command) -> Result<()> {
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

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|arg| (*arg).to_owned()).collect()
    }

    #[test]
    fn arguments_before_dashes_build_and_after_them_filter() {
        assert_eq!(split_at_dashes(&[]), (vec![], vec![]));
        assert_eq!(
            split_at_dashes(&strings(&["-p", "api", "--", "crd", "--exact"])),
            (strings(&["-p", "api"]), strings(&["crd", "--exact"]))
        );
        assert_eq!(
            split_at_dashes(&strings(&["--", "cronjob"])),
            (vec![], strings(&["cronjob"]))
        );
    }
}
