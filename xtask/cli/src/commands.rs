//! The command line of a project's `cargo xtask`: every command, and the one that runs them.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use clap::{Parser, Subcommand};

// Not the module `run`, whose name is this module's function's.
use crate::{
    cargo, cluster, deploy, e2e, envtest, faults, helm, image, installer, manifests, scaffold,
    test, tools, workspace_root,
};

/// The command line of a project's `cargo xtask` with no commands of its own.
#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Build, test, deploy and extend this operator project"
)]
pub struct Cli {
    /// The options of every command.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Runs the command, the global options applied first.
    pub fn run(self) -> Result<()> {
        self.global.apply();
        run(self.command)
    }
}

/// The options every command of `cargo xtask` takes.
#[derive(clap::Args)]
pub struct GlobalArgs {
    /// No network: the cargo commands it runs get `--offline` and the Go builds `GOPROXY=off`
    /// (`cargo --offline xtask …` cannot do it: cargo passes the flag on to nothing it runs).
    #[arg(long, global = true)]
    pub offline: bool,
}

impl GlobalArgs {
    /// Puts the options where every command this process runs inherits them: call it first
    /// in `main`, before any thread starts.
    pub fn apply(&self) {
        if self.offline {
            // SAFETY: `main` calls this before it starts a thread; nothing reads the
            // environment concurrently.
            unsafe {
                std::env::set_var("CARGO_NET_OFFLINE", "true");
                std::env::set_var("GOPROXY", "off");
            }
        }
    }
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
    Run(crate::run::Args),
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
        Command::Run(args) => crate::run::run(args),
        Command::Scaffold(command) => scaffold::run(&command),
    }
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
    match workspace_metadata()?["packages"].take() {
        serde_json::Value::Array(packages) => Ok(packages),
        _ => bail!("cargo metadata printed no packages"),
    }
}

/// The workspace's target directory, as cargo resolves it (`CARGO_TARGET_DIR`,
/// `build.target-dir`, else `target/` of the workspace).
pub fn target_dir() -> Result<PathBuf> {
    match workspace_metadata()?["target_directory"].take() {
        serde_json::Value::String(dir) => Ok(PathBuf::from(dir)),
        _ => bail!("cargo metadata printed no target directory"),
    }
}

/// `cargo metadata --no-deps` of the workspace.
fn workspace_metadata() -> Result<serde_json::Value> {
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
    Ok(serde_json::from_slice(&output.stdout)?)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
