//! `cargo xtask bench …`: benchmarks that print their figures as a table and keep them
//! under `target/bench/`. They measure; they never pass or fail on a figure.

mod controller;
mod first_minutes;
mod manifests;
mod node;
mod webhook;

use anyhow::{Context, Result};

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
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        // It times other processes (the debug builds of the edit loop): any build of
        // xtask measures the same.
        BenchCommand::Manifests(command) => manifests::run(command),
        // It times cargo and the installed CLI, whatever this build is.
        BenchCommand::FirstMinutes(command) => first_minutes::run(command),
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
