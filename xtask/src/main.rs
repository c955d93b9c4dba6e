//! `cargo xtask …`: what kubebuilder's Makefile does, for this workspace.

mod envtest;
mod test;
mod tools;

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
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Envtest { command } => envtest::run(command),
        Command::Test(args) => test::run(args),
    }
}

/// The workspace root (xtask lives one level below it).
pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits inside the workspace")
        .to_path_buf()
}
