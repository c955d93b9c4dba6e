//! The tools the tests run: Go tools used as real peers (controller-gen, kustomize, and
//! Prometheus' promtool, which checks the metrics exposition), installed with `go install`
//! from the Go module proxy, and cargo-deny, installed with `cargo install` from crates.io.
//! Each goes into a versioned directory of the cache, outside `target/`, so that `cargo
//! clean` keeps it and a new version is a new directory.
//!
//! The pins are always built (`cargo kubebuilder version` prints controller-gen's); the
//! installs only with the `xtask` feature, which has the cache.

#[cfg(feature = "xtask")]
mod install;

#[cfg(feature = "xtask")]
pub use install::install_all;

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
