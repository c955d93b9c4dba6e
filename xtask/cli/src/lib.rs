//! `cargo xtask` for operator projects built with kubebuilder for Rust: what kubebuilder's
//! Makefile (`make manifests`, `make test`, `make install`, `make deploy`, `make run`, ...)
//! and its CLI (`kubebuilder init`, `create api`, `create webhook`) do.
//!
//! A project's `xtask` binary is a thin `main` over [`Command`] and [`run()`], and every
//! command works on the workspace it runs in, found at run time ([`workspace_root`]). It
//! does not link the project's `api` and `controller` crates, whose attributes register the
//! declarations (CRD versions, RBAC rules, webhooks) that `manifests` renders: the
//! project's small declarations binary does, and `manifests` runs it
//! ([`manifests::DECLARATIONS_PACKAGE`]), so that an edit to the API does not rebuild xtask.

#![warn(missing_docs)]

pub mod certmanager;
pub mod cluster;
pub mod deploy;
pub mod e2e;
pub mod envtest;
pub mod faults;
pub mod helm;
pub mod image;
pub mod installer;
pub mod kustomize;
pub mod manifests;
mod report;
mod rollout;
pub mod run;
pub mod scaffold;
pub mod source;
pub mod test;
pub mod tools;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use clap::{Parser, Subcommand};

/// kubebuilder for Rust's own crates, as a user gets them from crates.io.
pub const FRAMEWORK_CRATES: &[&str] = &[
    "cargo-kubebuilder",
    "kubebuilder",
    "kubebuilder-attributes",
    "kubebuilder-cli",
    "kubebuilder-envtest",
    "kubebuilder-macros",
    "kubebuilder-markers",
    "kubebuilder-plural",
    "kubebuilder-runtime",
];

/// The command line of a project's `cargo xtask` with no commands of its own.
#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Build, test, deploy and extend this operator project"
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands every project's `cargo xtask` has.
#[derive(Subcommand)]
pub enum Command {
    /// The local Kubernetes control plane (kube-apiserver + etcd built from Go modules).
    Envtest {
        /// What to do with it.
        #[command(subcommand)]
        command: envtest::Command,
    },
    /// The local node (kind's role): a real kubelet, containerd and control plane on this machine.
    Cluster {
        /// What to do with it.
        #[command(subcommand)]
        command: cluster::Command,
    },
    /// Every test of the workspace against a real control plane.
    Test(test::Args),
    /// Build or install every tool the test commands use (control plane, Go tools, cargo-deny, the node's).
    Tools,
    /// The end-to-end tests: the manager image deployed on the local node (kubebuilder's `make test-e2e`).
    TestE2e(e2e::Args),
    /// The fault suite: processes killed, the control plane stopped, permissions revoked, bad input; one table of figures.
    TestFaults(faults::Args),
    /// Build the manager's OCI image without a daemon (kubebuilder's `make docker-build`).
    DockerBuild(image::Args),
    /// Write the CRDs, RBAC roles and webhook configurations into config/ (`--check`: only verify).
    Manifests(manifests::Args),
    /// Apply the CRDs (config/crd) to the cluster of the current kubeconfig.
    Install,
    /// Delete the CRDs (config/crd) from the cluster.
    Uninstall,
    /// Apply everything config/default holds (CRDs, RBAC, manager, webhooks, certificates).
    Deploy(deploy::DeployArgs),
    /// Delete everything config/default holds from the cluster.
    Undeploy(deploy::UndeployArgs),
    /// Render config/default into dist/install.yaml.
    BuildInstaller(installer::Args),
    /// Write a Helm chart of config/default into dist/chart/ (kubebuilder's helm plugin).
    Helm(helm::Args),
    /// Run the manager locally against the current kubeconfig's cluster, or a local
    /// control plane when none is configured (CRDs installed, samples applied).
    Run(run::Args),
    /// kubebuilder's CLI (`init`, `create`, `edit`, `version`), as `cargo kubebuilder` has it.
    #[command(flatten)]
    Scaffold(scaffold::Command),
}

/// Runs one command in the workspace found by [`workspace_root`].
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Envtest { command } => envtest::run(command),
        Command::Cluster { command } => cluster::run(command),
        Command::Test(args) => test::run(args),
        Command::Tools => tools::install_all(),
        Command::TestE2e(args) => e2e::run(args),
        Command::TestFaults(args) => faults::run(args),
        Command::DockerBuild(args) => image::run(args),
        Command::Manifests(args) => manifests::run(args),
        Command::Install => deploy::install(),
        Command::Uninstall => deploy::uninstall(),
        Command::Deploy(args) => deploy::deploy(args),
        Command::Undeploy(args) => deploy::undeploy(args),
        Command::BuildInstaller(args) => installer::run(args),
        Command::Helm(args) => helm::run(args),
        Command::Run(args) => run::run(args),
        Command::Scaffold(command) => scaffold::run(&command),
    }
}

/// A `cargo` command as a user would type it: the same cargo as the one running `cargo
/// xtask` (`$CARGO`), without the variables cargo sets for the package it runs
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`, ...). Build scripts such as ring's rerun when
/// those change, so a nested build that inherited them would rebuild ring and everything
/// above it, and the next build from a shell would do it all again.
pub fn cargo() -> std::process::Command {
    let mut command =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || name == "CARGO_PRIMARY_PACKAGE"
        {
            command.env_remove(&*name);
        }
    }
    command
}

/// This `cargo xtask`'s executable, to run its other commands with. The test build of the
/// workspace builds xtask again (with the features of every package unified) and replaces
/// the file this process started from; Linux then names the running executable
/// `<path> (deleted)`, and the file at `<path>` is the same program, built anew.
pub fn xtask_exe() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("this xtask's path")?;
    Ok(replaced_executable(&exe).unwrap_or(exe))
}

/// The path of a replaced executable (`<path> (deleted)`), when a file is there again.
fn replaced_executable(exe: &Path) -> Option<PathBuf> {
    let path = PathBuf::from(exe.to_str()?.strip_suffix(" (deleted)")?);
    path.is_file().then_some(path)
}

/// The workspace's members, as `cargo metadata --no-deps` describes them (name, features,
/// targets, ...).
pub fn workspace_packages() -> Result<Vec<serde_json::Value>> {
    let output = cargo()
        .current_dir(workspace_root())
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let mut metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    match metadata["packages"].take() {
        serde_json::Value::Array(packages) => Ok(packages),
        _ => bail!("cargo metadata printed no packages"),
    }
}

/// The root of the workspace `cargo xtask` works on: the nearest directory holding a
/// `Cargo.toml` with a `[workspace]` table, looking upwards from the running package's
/// directory (`CARGO_MANIFEST_DIR`, which `cargo run` sets: `cargo xtask` runs the
/// workspace's own `xtask` package), or else from the current directory.
///
/// It is found at run time, not from where this crate was built: a project made by
/// `cargo xtask init` links this crate from another directory.
///
/// # Panics
/// When no such directory exists: `cargo xtask` only makes sense inside a workspace.
pub fn workspace_root() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    find_workspace_root(&start).unwrap_or_else(|| {
        panic!(
            "cargo xtask runs inside a Cargo workspace, but no Cargo.toml with a [workspace] \
             table is at or above {}",
            start.display()
        )
    })
}

/// The nearest directory at or above `dir` whose `Cargo.toml` declares a workspace.
fn find_workspace_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|manifest| manifest.lines().any(|line| line.trim() == "[workspace]"))
        })
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_root_is_the_nearest_workspace_manifest_upwards() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("xtask/src")).unwrap();
        std::fs::write(
            root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"xtask\"]\n",
        )
        .unwrap();
        std::fs::write(
            root.join("xtask/Cargo.toml"),
            "[package]\nname = \"xtask\"\n",
        )
        .unwrap();
        assert_eq!(
            find_workspace_root(&root.join("xtask/src")),
            Some(root.clone())
        );
        assert_eq!(find_workspace_root(&root), Some(root.clone()));
    }

    #[test]
    fn a_replaced_executable_is_found_at_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("xtask");
        let deleted = PathBuf::from(format!("{} (deleted)", path.display()));
        assert_eq!(replaced_executable(&deleted), None);
        std::fs::write(&path, "").unwrap();
        assert_eq!(replaced_executable(&deleted), Some(path.clone()));
        assert_eq!(replaced_executable(&path), None);
    }

    #[test]
    fn a_package_manifest_alone_is_no_workspace_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"lonely\"\n",
        )
        .unwrap();
        assert_eq!(find_workspace_root(dir.path()), None);
    }
}
