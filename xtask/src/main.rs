//! `cargo xtask …` for this repository: the commands every project gets from
//! `kubebuilder-cli` (manifests, test, run, install, deploy, envtest, init, create, ...),
//! plus the ones that only make sense here (benchmarks, the embedded Kubernetes schemas,
//! moving the Kubernetes pins).

mod bench;
mod bump_kubernetes;
mod k8s_schemas;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Build, test, deploy and extend this operator project"
)]
struct Cli {
    #[command(flatten)]
    global: kubebuilder_cli::GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Project(kubebuilder_cli::Command),
    /// Regenerate the embedded Kubernetes type schemas from controller-gen.
    K8sSchemas(k8s_schemas::Args),
    /// Benchmarks: print their figures and keep them under target/bench/.
    Bench(bench::Args),
    /// Move every Kubernetes pin to another release and regenerate what derives from it.
    BumpKubernetes(bump_kubernetes::Args),
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    cli.global.apply();
    match cli.command {
        Command::Project(command) => kubebuilder_cli::run(command),
        Command::K8sSchemas(args) => k8s_schemas::run(args),
        Command::Bench(args) => bench::run(args),
        Command::BumpKubernetes(args) => bump_kubernetes::run(args),
    }
}
