//! `cargo xtask bench webhook`: the CronJob admission and conversion webhooks under load,
//! measured by the `webhook-bench` package (see its docs), whose table is kept here.

use std::process::Stdio;

use anyhow::{Context, Result, ensure};

/// The package that measures: it links the controller's webhooks, which xtask does not.
const PACKAGE: &str = "webhook-bench";

#[derive(clap::Args)]
pub struct Args {
    /// Requests per measurement (one measurement per webhook and concurrency).
    #[arg(long, default_value_t = 5000)]
    requests: usize,
}

/// Builds and runs the benchmark (`release`, or the debug build), then keeps its table.
pub fn run(args: Args, release: bool) -> Result<()> {
    let mut command = kubebuilder_cli::cargo();
    command
        .current_dir(kubebuilder_cli::workspace_root())
        .args(["run", "--package", PACKAGE])
        .stderr(Stdio::inherit());
    if release {
        command.arg("--release");
    }
    command.args(["--", "--requests", &args.requests.to_string()]);
    let output = command.output().context("running cargo")?;
    ensure!(
        output.status.success(),
        "`cargo run --package {PACKAGE}` failed ({})",
        output.status
    );
    let table = String::from_utf8(output.stdout).context("the table is not UTF-8")?;
    super::publish(&table, "webhook.md")
}
