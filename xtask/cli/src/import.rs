//! `import`: an API declared elsewhere, as a Rust project: `import go` reads a Go
//! kubebuilder project, `import crd` CRD YAML. What is read becomes one model (`model.rs`: controller-tools'
//! view of Go types and markers), which `project.rs` makes the project of.

pub mod crd;
mod external;
pub mod go;
mod markers;
mod model;
mod project;
mod rust;
mod webhooks;

use anyhow::Result;

/// What `import` reads.
#[derive(clap::Subcommand, Clone, Debug)]
pub enum Command {
    /// A Go kubebuilder project: its API packages (those with `+groupName`) become the
    /// `api` crate, every marker its attribute, each kind a reconciler with the Go
    /// controller's RBAC rules; in a new directory, as `init` makes one.
    Go(go::Args),
    /// CRD YAML (a file or a directory of them): each version's schema becomes the types
    /// and markers that generate it again, validation, defaults, CEL rules, list and map
    /// types, printer columns and all; in a new directory, as `init` makes one.
    Crd(crd::Args),
}

/// Runs `import`.
pub fn run(command: &Command) -> Result<()> {
    match command {
        Command::Go(args) => go::run(args),
        Command::Crd(args) => crd::run(args),
    }
}
