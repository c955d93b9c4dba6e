//! `cargo xtask …`: what kubebuilder's Makefile does, for this workspace.

mod bench;
mod cluster;
mod envtest;
mod installer;
mod k8s_schemas;
mod kustomize;
mod manifests;
mod run;
mod test;
mod tools;

// Linked for the declarations their attributes register at link time (CRD versions,
// RBAC rules, webhooks), which `manifests` collects; nothing is called by name.
extern crate api as _;
extern crate controller as _;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Build, test and run this operator project"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The local Kubernetes control plane (kube-apiserver + etcd built from Go modules).
    Envtest {
        #[command(subcommand)]
        command: envtest::Command,
    },
    /// Every test of the workspace against a real control plane.
    Test(test::Args),
    /// Regenerate the embedded Kubernetes type schemas from controller-gen.
    K8sSchemas(k8s_schemas::Args),
    /// Write the CRDs, RBAC roles and webhook configurations into config/ (`--check`: only verify).
    Manifests(manifests::Args),
    /// Apply the CRDs (config/crd) to the cluster of the current kubeconfig.
    Install,
    /// Delete the CRDs (config/crd) from the cluster.
    Uninstall,
    /// Apply everything config/default holds (CRDs, RBAC, manager, webhooks, certificates).
    Deploy(cluster::DeployArgs),
    /// Delete everything config/default holds from the cluster.
    Undeploy(cluster::UndeployArgs),
    /// Render config/default into dist/install.yaml.
    BuildInstaller(installer::Args),
    /// Run the manager locally against the current kubeconfig's cluster, or a local
    /// control plane when none is configured (CRDs installed, samples applied).
    Run(run::Args),
    /// Benchmarks: print their figures and keep them under target/bench/.
    Bench(bench::Args),
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Envtest { command } => envtest::run(command),
        Command::Test(args) => test::run(args),
        Command::K8sSchemas(args) => k8s_schemas::run(args),
        Command::Manifests(args) => manifests::run(args),
        Command::Install => cluster::install(),
        Command::Uninstall => cluster::uninstall(),
        Command::Deploy(args) => cluster::deploy(args),
        Command::Undeploy(args) => cluster::undeploy(args),
        Command::BuildInstaller(args) => installer::run(args),
        Command::Run(args) => run::run(args),
        Command::Bench(args) => bench::run(args),
    }
}

/// The workspace root (xtask lives one level below it).
pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits inside the workspace")
        .to_path_buf()
}
