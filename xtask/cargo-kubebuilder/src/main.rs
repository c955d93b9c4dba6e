//! `cargo kubebuilder`: kubebuilder's CLI for operators written with kubebuilder for Rust.
//!
//! `cargo kubebuilder init` makes a new project anywhere; inside it, `cargo kubebuilder
//! create api` / `create webhook` add kinds and webhooks. The project's own `cargo xtask`
//! has the same commands (the code is `kubebuilder-cli`'s), beside those that build, test,
//! run and deploy it.

use clap::Parser;
use kubebuilder_cli::scaffold;

/// Cargo runs a subcommand as `cargo-kubebuilder kubebuilder <args>`.
#[derive(Parser)]
#[command(name = "cargo", bin_name = "cargo")]
enum Cargo {
    /// kubebuilder's CLI for Rust operators.
    #[command(version, about)]
    Kubebuilder {
        #[command(subcommand)]
        command: scaffold::Command,
    },
}

fn main() -> anyhow::Result<()> {
    let Cargo::Kubebuilder { command } = Cargo::parse();
    scaffold::run(&command)
}
