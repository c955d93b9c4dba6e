//! Installing the pinned tools into the cache, and `cargo xtask tools`.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};
use kubebuilder_envtest::assets::{self, fnv1a64};
use kubebuilder_envtest::node;

use super::{CargoTool, GoProgram, Tool};

/// `cargo xtask tools`: everything `test`, `test-faults` and `test-e2e` use, built or
/// installed into the cache once, so that those commands can then run side by side
/// without building the same tool twice: the control plane and the Go tools of `test`;
/// when the workspace has end-to-end tests, the node's binaries, its Debian packages and
/// cert-manager's images.
pub fn install_all() -> Result<()> {
    for (name, path) in crate::test::install_tools()?.paths() {
        println!("{name}={}", path.display());
    }
    if !crate::e2e::e2e_packages()?.is_empty() {
        assets::NODE.install()?;
        node::packages::ensure_node_packages()?;
        node::packages::ensure("the Dockerfile check", &[("/usr/bin/podman", "podman")])?;
        crate::certmanager::images()?;
    }
    Ok(())
}

impl Tool {
    /// The tool's path: `$<ENV>` when set, else the cache, installing it there first.
    pub fn install(&self) -> Result<PathBuf> {
        if let Some(path) = given(self.env) {
            return Ok(path);
        }
        let bin_dir = cache_dir(self.binary, self.version);
        let path = bin_dir.join(self.binary);
        if path.is_file() {
            return Ok(path);
        }
        eprintln!("xtask: go install {}@{}", self.package, self.version);
        // With the control plane's flags (`-trimpath`, no cgo), so that packages both
        // link (the k8s.io libraries) are compiled once.
        let output = Command::new("go")
            .args(["install", "-trimpath"])
            .arg(format!("{}@{}", self.package, self.version))
            .env("GOBIN", &bin_dir)
            .env("CGO_ENABLED", "0")
            .output()
            .context("running `go install` (is Go 1.26 installed?)")?;
        if !output.status.success() {
            bail!(
                "`go install {}@{}` failed:\n{}",
                self.package,
                self.version,
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
        Ok(path)
    }
}

impl GoProgram {
    /// The program's path: `$<ENV>` when set, else the cache, built there first. The
    /// cache directory is keyed on the module's files.
    pub fn install(&self) -> Result<PathBuf> {
        if let Some(path) = given(self.env) {
            return Ok(path);
        }
        let files: Vec<u8> = self
            .files
            .iter()
            .flat_map(|(_, text)| text.bytes())
            .collect();
        let bin_dir = cache_dir(self.binary, &format!("{:016x}", fnv1a64(&files)));
        let path = bin_dir.join(self.binary);
        if path.is_file() {
            return Ok(path);
        }
        eprintln!("xtask: go build {}", self.binary);
        // Built beside its place and renamed, so that a build running at the same time or an
        // interrupted one never leaves half a binary there.
        let staging = bin_dir.join(format!(".{}-{}", self.binary, std::process::id()));
        self.build(&staging.with_extension("src"), &staging)?;
        fs::rename(&staging, &path).with_context(|| format!("moving {}", staging.display()))?;
        let _ = fs::remove_dir_all(staging.with_extension("src"));
        Ok(path)
    }
}

impl CargoTool {
    /// The tool's path: `$<ENV>` when set, else the cache, installing it there first with
    /// `cargo install --locked` (the crate's own lock file: the versions its release was
    /// tested with).
    pub fn install(&self) -> Result<PathBuf> {
        if let Some(path) = given(self.env) {
            return Ok(path);
        }
        let root = cache_dir(self.name, self.version);
        let path = root.join("bin").join(self.name);
        if path.is_file() {
            return Ok(path);
        }
        eprintln!(
            "xtask: cargo install --locked {}@{}",
            self.name, self.version
        );
        let status = crate::cargo()
            .args(["install", "--locked", "--version", self.version, self.name])
            // cargo-deny's release profile asks for fat LTO in one codegen unit: a binary a
            // little smaller and faster, built in twice the time (about 2 minutes instead
            // of 4 on two cores); its checks take seconds either way.
            .args([
                "--config",
                "profile.release.lto=false",
                "--config",
                "profile.release.codegen-units=16",
            ])
            .arg("--root")
            .arg(&root)
            .status()
            .context("running `cargo install`")?;
        if !status.success() {
            bail!(
                "`cargo install {}@{}` failed ({status})",
                self.name,
                self.version
            );
        }
        Ok(path)
    }
}

/// `$<env>`, when set and not empty: a binary given instead of the cached one.
fn given(env: &str) -> Option<PathBuf> {
    std::env::var_os(env)
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
}

/// The directory of one version of a tool in the cache.
fn cache_dir(name: &str, version: &str) -> PathBuf {
    assets::cache_root()
        .join("tools")
        .join(format!("{name}-{version}"))
}
