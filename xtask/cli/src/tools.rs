//! The tools the tests run: Go tools used as real peers (controller-gen, kustomize, helm),
//! installed with `go install` from the Go module proxy; `promlint`, a Go program of this
//! crate that runs Prometheus' metrics linter; and cargo-deny, installed with `cargo install`
//! from crates.io. Each goes into a versioned directory of the cache, outside `target/`, so
//! that `cargo clean` keeps it and a new version is a new directory.
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
    version: kubebuilder::crd::CONTROLLER_GEN_VERSION,
};

/// kustomize, the reference the differential test of [`crate::kustomize`] checks it against
/// (the Makefile's `KUSTOMIZE_VERSION`).
pub const KUSTOMIZE: Tool = Tool {
    binary: "kustomize",
    env: "KUSTOMIZE",
    package: "sigs.k8s.io/kustomize/kustomize/v5",
    version: "v5.8.1",
};

/// helm, the peer `cargo xtask helm`'s chart is checked with (`helm template`, `lint`,
/// `install`), which also installs cert-manager's chart on the local node. v4.3.2 is on the
/// Kubernetes libraries of the control plane (v0.37.2), so that its build shares the
/// compiled k8s.io packages with the control plane's.
pub const HELM: Tool = Tool {
    binary: "helm",
    env: "HELM",
    package: "helm.sh/helm/v4/cmd/helm",
    version: "v4.3.2",
};

/// A Go program kept in this crate: a module directory beside its `Cargo.toml`, whose
/// `go.sum` pins what it links, its files built into the crate (so that an installed
/// `cargo kubebuilder` can build it too).
pub struct GoProgram {
    /// The binary's name, and the module's directory.
    pub binary: &'static str,
    /// The variable that, when set, gives the binary's path instead of the cache.
    pub env: &'static str,
    /// The module's files: `go.mod`, `go.sum`, `main.go`.
    pub files: [(&'static str, &'static str); 3],
}

/// The files of the Go module in directory `$name` of this crate.
macro_rules! go_module {
    ($name:literal) => {
        [
            ("go.mod", include_str!(concat!($name, "/go.mod"))),
            ("go.sum", include_str!(concat!($name, "/go.sum"))),
            ("main.go", include_str!(concat!($name, "/main.go"))),
        ]
    };
}

impl GoProgram {
    /// The program's path: `$<ENV>` when set; else, with the `xtask` feature, the cache
    /// (built there once); without it (`cargo kubebuilder`), built afresh into a temporary
    /// directory, which Go's build cache makes a link step after the first time.
    pub fn binary(&self) -> anyhow::Result<std::path::PathBuf> {
        #[cfg(feature = "xtask")]
        return self.install();
        #[cfg(not(feature = "xtask"))]
        {
            if let Some(path) = std::env::var_os(self.env).filter(|path| !path.is_empty()) {
                return Ok(path.into());
            }
            let dir = std::env::temp_dir().join(format!(
                "kubebuilder-{}-{}",
                self.binary,
                std::process::id()
            ));
            self.build(&dir, &dir.join(self.binary))?;
            Ok(dir.join(self.binary))
        }
    }

    /// Writes the module into `module_dir` and builds it to `output`.
    pub fn build(
        &self,
        module_dir: &std::path::Path,
        output: &std::path::Path,
    ) -> anyhow::Result<()> {
        use anyhow::Context as _;
        std::fs::create_dir_all(module_dir)
            .with_context(|| format!("creating {}", module_dir.display()))?;
        for (name, text) in self.files {
            std::fs::write(module_dir.join(name), text)
                .with_context(|| format!("writing {}", module_dir.join(name).display()))?;
        }
        let built = std::process::Command::new("go")
            .current_dir(module_dir)
            .args(["build", "-trimpath", "-mod=readonly", "-o"])
            .arg(output)
            .arg(".")
            .env("CGO_ENABLED", "0")
            .output()
            .context("running `go build` (is Go 1.26 installed?)")?;
        if !built.status.success() {
            anyhow::bail!(
                "`go build` of {} failed:\n{}",
                self.binary,
                String::from_utf8_lossy(&built.stderr).trim_end()
            );
        }
        Ok(())
    }
}

/// What `promtool check metrics` runs, without the rest of promtool: client_golang's
/// promlint parses a scrape with Prometheus' own text parser and lints it, at the versions
/// Prometheus v3.16's promtool (Go module `v0.316.0`) links. promtool itself pulls in every
/// service discovery: its cold build took 7 minutes of the CI budget, this one 20 seconds.
pub const PROMLINT: GoProgram = GoProgram {
    binary: "promlint",
    env: "PROMLINT",
    files: go_module!("../promlint"),
};

/// What `cargo kubebuilder import go` reads a Go kubebuilder API with: controller-tools'
/// own loader and marker registry, printing the packages, types, fields and markers as
/// JSON (`goimport/`).
pub const GOIMPORT: GoProgram = GoProgram {
    binary: "goimport",
    env: "GOIMPORT",
    files: go_module!("../goimport"),
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
/// `deny.toml`. Its cold install takes about 2 minutes on two cores.
pub const CARGO_DENY: CargoTool = CargoTool {
    name: "cargo-deny",
    env: "CARGO_DENY",
    version: "0.20.2",
};
