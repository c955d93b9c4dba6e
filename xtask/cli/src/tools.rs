//! The tools the tests run: Go tools used as real peers (controller-gen, kustomize, and
//! Prometheus' promtool, which checks the metrics exposition), installed with `go install`
//! from the Go module proxy, and cargo-deny, installed with `cargo install` from crates.io.
//! Each goes into a versioned directory of the cache, outside `target/`, so that `cargo
//! clean` keeps it and a new version is a new directory.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};
use kubebuilder_envtest::{assets, node};

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

/// A Go tool pinned to one version.
pub struct Tool {
    /// The binary's name, as `go install` names it.
    pub binary: &'static str,
    /// The variable that, when set, gives the binary's path instead of the cache.
    pub env: &'static str,
    /// The Go package to `go install`.
    pub package: &'static str,
    /// The module version the package is installed at (`@v…`).
    pub version: &'static str,
}

/// controller-gen, the reference the conformance tests check the generated CRDs, RBAC and
/// webhook manifests against (the Makefile's `CONTROLLER_TOOLS_VERSION`).
pub const CONTROLLER_GEN: Tool = Tool {
    binary: "controller-gen",
    env: "CONTROLLER_GEN",
    package: "sigs.k8s.io/controller-tools/cmd/controller-gen",
    version: "v0.21.0",
};

/// kustomize, the reference the differential test of [`crate::kustomize`] checks it against
/// (the Makefile's `KUSTOMIZE_VERSION`).
pub const KUSTOMIZE: Tool = Tool {
    binary: "kustomize",
    env: "KUSTOMIZE",
    package: "sigs.k8s.io/kustomize/kustomize/v5",
    version: "v5.8.1",
};

/// Prometheus v3.16's promtool (the Go module's versions are `v0.3xx`): `promtool check
/// metrics` parses a scrape with Prometheus' own parser and lints it. A cold build takes
/// long (the module pulls in every service discovery); the cache keeps it.
pub const PROMTOOL: Tool = Tool {
    binary: "promtool",
    env: "PROMTOOL",
    package: "github.com/prometheus/prometheus/cmd/promtool",
    version: "v0.316.0",
};

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
        let output = Command::new("go")
            .args(["install", &format!("{}@{}", self.package, self.version)])
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

/// A cargo subcommand from crates.io pinned to one version.
pub struct CargoTool {
    /// The crate, which is also the binary's name.
    pub name: &'static str,
    /// The variable that, when set, gives the binary's path instead of the cache.
    pub env: &'static str,
    /// The crate version installed.
    pub version: &'static str,
}

/// cargo-deny, which checks the dependency tree's licenses, bans and sources against
/// `deny.toml`. Its cold install takes about 3 minutes on two cores.
pub const CARGO_DENY: CargoTool = CargoTool {
    name: "cargo-deny",
    env: "CARGO_DENY",
    version: "0.20.2",
};

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
