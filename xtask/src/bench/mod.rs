//! `cargo xtask bench …`: benchmarks that print their figures as a table and keep them
//! under `target/bench/`. They measure; they never pass or fail on a figure.

mod controller;
mod first_minutes;
mod import;
mod manifests;
mod node;
mod webhook;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: BenchCommand,

    /// Measure the build this xtask runs as (debug under `cargo xtask`) instead of
    /// rebuilding and rerunning it in release mode.
    #[arg(long, global = true)]
    debug: bool,
}

#[derive(clap::Subcommand)]
enum BenchCommand {
    /// The CronJob controller: time to reconcile every CronJob once, reconciles per
    /// second, schedule-to-Job delay (p50/p99), the manager's RSS and open watches;
    /// `--compare <git-rev>` measures another commit's controller in the same run;
    /// `--selector-secrets N` measures instead a label-selected cache of Secrets among N
    /// that do not match, against an unfiltered one; `--generation-filter N` the
    /// reconciles per CronJob of a reporting controller with and without the generation
    /// filter.
    Controller(controller::Args),
    /// CronJob admission webhooks: requests per second and p50/p99 latency at
    /// concurrency 1 and 16.
    Webhook(webhook::Args),
    /// Edit one marker in `api/`, then `cargo xtask manifests`, timed in a copy of this
    /// workspace; `--go-project <dir>` times controller-gen on a Go project alongside.
    Manifests(manifests::Args),
    /// The local node: image build, `cluster up`, cert-manager, load, deploy to Ready,
    /// `cluster down`, and the node's memory with the operator running (needs root).
    Node(node::Args),
    /// A user's first minutes from cold: `cargo install` of the CLI with an empty target
    /// directory, `cargo kubebuilder init --local`, the first `create api`.
    FirstMinutes(first_minutes::Args),
    /// `cargo kubebuilder import go` on the largest API of the import corpus (Kueue),
    /// time and peak RSS, beside controller-gen on the Go original (A B A B).
    Import(import::Args),
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        // It times other processes (the debug builds of the edit loop): any build of
        // xtask measures the same.
        BenchCommand::Manifests(command) => manifests::run(command),
        // It times cargo and the installed CLI, whatever this build is.
        BenchCommand::FirstMinutes(command) => first_minutes::run(command),
        // It times the release build of the CLI, whatever this build is.
        BenchCommand::Import(command) => import::run(command),
        // It builds and runs another package, in release unless told.
        BenchCommand::Webhook(command) => webhook::run(command, !args.debug),
        _ if cfg!(debug_assertions) && !args.debug => rerun_in_release(),
        BenchCommand::Controller(command) => controller::run(command, !args.debug),
        BenchCommand::Node(args) => node::run(args),
    }
}

/// Runs the same command line in a release build of xtask: figures of a debug build
/// say little about the binary that gets deployed.
fn rerun_in_release() -> Result<()> {
    eprintln!("xtask: benchmarks run in release mode (pass --debug to measure this debug build)");
    let status = kubebuilder_cli::cargo()
        .current_dir(kubebuilder_cli::workspace_root())
        .args(["run", "--release", "--package", "xtask", "--"])
        .args(std::env::args_os().skip(1))
        .status()
        .context("running cargo")?;
    if !status.success() {
        // `cargo run` fails alike when the build fails and when the benchmark does, and
        // either has printed its error: this one would only blame the build.
        std::process::exit(status.code().unwrap_or(1));
    }
    Ok(())
}

/// Where benchmarks keep their figures (and logs), created if missing.
fn output_dir() -> Result<std::path::PathBuf> {
    let dir = kubebuilder_cli::workspace_root().join("target/bench");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Prints a benchmark's table of figures and keeps it as `file` in [`output_dir`].
fn publish(table: &str, file: &str) -> Result<()> {
    print!("{table}");
    let path = output_dir()?.join(file);
    std::fs::write(&path, table).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("xtask: figures written to {}", path.display());
    Ok(())
}

/// One timed run.
#[derive(Clone, Copy)]
pub(super) struct Sample {
    pub(super) wall: Duration,
    pub(super) peak_rss_kib: u64,
}

/// Runs `command` to completion: its wall time and the peak RSS of it and every process
/// it waited for.
pub(super) fn timed(command: &mut Command) -> Result<Sample> {
    let started = Instant::now();
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting the timed command")?;
    let pid = libc::pid_t::try_from(child.id())?;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child, whose Child handle is not used to wait.
    let waited = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    let wall = started.elapsed();
    ensure!(
        waited == pid,
        "wait4 failed: {}",
        std::io::Error::last_os_error()
    );
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        bail!("{command:?} failed (wait status {status})");
    }
    Ok(Sample {
        wall,
        peak_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or_default(),
    })
}
