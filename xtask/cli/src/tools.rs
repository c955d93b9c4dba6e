//! Go tools used as real peers in the tests (controller-gen, kustomize, and Prometheus'
//! promtool, which checks the metrics exposition), installed with `go install` from the Go
//! module proxy into a versioned cache.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};
use kubebuilder_envtest::assets;

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
        if let Some(path) = std::env::var_os(self.env).filter(|p| !p.is_empty()) {
            return Ok(path.into());
        }
        let bin_dir = assets::cache_root()
            .join("tools")
            .join(format!("{}-{}", self.binary, self.version));
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
