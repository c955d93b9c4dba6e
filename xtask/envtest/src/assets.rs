//! Finding, or building, the Kubernetes binaries: `kube-apiserver` and `etcd` for the
//! control plane, `kube-controller-manager` for a control plane that asks for it and for
//! the local node, and the kubelet, scheduler and kube-proxy for the local node.
//!
//! Nothing can be downloaded from release sites here, but the Go module proxy serves
//! Kubernetes and etcd sources. The Go module next to this file (`go.mod`, `go.sum`) pins
//! them; `install` builds a set once into a cache directory keyed on those pins.
//! `KUBEBUILDER_ASSETS`, the envtest convention, names a directory that already holds the
//! control plane's two; `KUBEBUILDER_CONTROLLER_MANAGER` names a kube-controller-manager.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

// The pins as macros, so that constant names can be built from them with `concat!`.
macro_rules! kubernetes_version {
    () => {
        "v1.37.2"
    };
}
macro_rules! etcd_version {
    () => {
        "v3.7.0"
    };
}

/// The Kubernetes release the binaries are built from (kept equal to `go.mod`).
pub const KUBERNETES_VERSION: &str = kubernetes_version!();
/// The etcd release kube-apiserver v1.37.2 pins (kept equal to `go.mod`).
pub const ETCD_VERSION: &str = etcd_version!();

/// The variable naming a directory holding `kube-apiserver` and `etcd`.
pub const ASSETS_ENV: &str = "KUBEBUILDER_ASSETS";

/// The variable naming a `kube-controller-manager` binary to use instead of the cache's.
pub const CONTROLLER_MANAGER_ENV: &str = "KUBEBUILDER_CONTROLLER_MANAGER";

const CONTROLLER_MANAGER_BINARY: &str = "kube-controller-manager";

const STAMP_FILE: &str = "VERSION";

/// Binaries built together from the pinned Go module and cached in one directory.
pub struct BinarySet {
    /// The cache subdirectory's name before the module graph's hash: the pins.
    cache_name: &'static str,
    /// The binary's name and the Go package of its `main`.
    binaries: &'static [(&'static str, &'static str)],
    /// What the set is for, in progress and error messages.
    purpose: &'static str,
}

/// etcd and kube-apiserver: the control plane of envtest.
pub const CONTROL_PLANE: BinarySet = BinarySet {
    cache_name: concat!("k8s-", kubernetes_version!(), "-etcd-", etcd_version!()),
    binaries: &[
        ("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"),
        ("etcd", "go.etcd.io/etcd/server/v3"),
    ],
    purpose: "the control plane",
};

/// kube-controller-manager, in a set of its own: a control plane that runs it (`cargo
/// xtask run`'s) needs no kubelet, scheduler or kube-proxy, and the local node runs this
/// same build beside [`NODE`]'s.
pub const CONTROLLER_MANAGER: BinarySet = BinarySet {
    cache_name: concat!("controller-manager-k8s-", kubernetes_version!()),
    binaries: &[(
        CONTROLLER_MANAGER_BINARY,
        "k8s.io/kubernetes/cmd/kube-controller-manager",
    )],
    purpose: "the controller-manager",
};

/// What the local node runs beside the control plane and [`CONTROLLER_MANAGER`].
pub const NODE: BinarySet = BinarySet {
    cache_name: concat!("node-k8s-", kubernetes_version!()),
    binaries: &[
        ("kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler"),
        ("kube-proxy", "k8s.io/kubernetes/cmd/kube-proxy"),
        ("kubelet", "k8s.io/kubernetes/cmd/kubelet"),
    ],
    purpose: "the local node",
};

/// The directory holding the control plane's binaries, without building anything:
/// `KUBEBUILDER_ASSETS` when set, else the cache when it holds a build of the pinned
/// versions.
pub fn find() -> Result<PathBuf> {
    if let Some(dir) = assets_from_env()? {
        return Ok(dir);
    }
    let dir = CONTROL_PLANE.cache_dir();
    ensure!(
        CONTROL_PLANE.is_current_build(&dir),
        "no control-plane binaries: run `cargo xtask envtest install` (builds kube-apiserver {KUBERNETES_VERSION} \
         and etcd {ETCD_VERSION} into {}) or set {ASSETS_ENV} to a directory holding them",
        dir.display()
    );
    Ok(dir)
}

/// Like [`find`], but builds the binaries into the cache when they are missing or of
/// another version. Progress goes to stderr; the Go build takes minutes the first time.
pub fn install() -> Result<PathBuf> {
    if let Some(dir) = assets_from_env()? {
        eprintln!("envtest: using {ASSETS_ENV}={}", dir.display());
        return Ok(dir);
    }
    CONTROL_PLANE.install()
}

/// The kube-controller-manager binary, without building anything:
/// `KUBEBUILDER_CONTROLLER_MANAGER` when set, else the cache's when it is a build of the
/// pinned version.
pub fn find_controller_manager() -> Result<PathBuf> {
    if let Some(binary) = controller_manager_from_env()? {
        return Ok(binary);
    }
    let dir = CONTROLLER_MANAGER.cache_dir();
    ensure!(
        CONTROLLER_MANAGER.is_current_build(&dir),
        "no kube-controller-manager: run `cargo xtask tools` (builds kube-controller-manager \
         {KUBERNETES_VERSION} into {}) or set {CONTROLLER_MANAGER_ENV} to one",
        dir.display()
    );
    Ok(dir.join(CONTROLLER_MANAGER_BINARY))
}

/// Like [`find_controller_manager`], but builds it into the cache when it is missing or of
/// another version (minutes the first time).
pub fn install_controller_manager() -> Result<PathBuf> {
    if let Some(binary) = controller_manager_from_env()? {
        eprintln!(
            "envtest: using {CONTROLLER_MANAGER_ENV}={}",
            binary.display()
        );
        return Ok(binary);
    }
    Ok(CONTROLLER_MANAGER
        .install()?
        .join(CONTROLLER_MANAGER_BINARY))
}

impl BinarySet {
    /// Where this set is cached: one subdirectory of the cache per pinned version and
    /// module graph, so that checkouts at different commits (a CI clone, a worktree) each
    /// keep their build instead of rebuilding over each other's.
    pub fn cache_dir(&self) -> PathBuf {
        cache_root().join("envtest").join(format!(
            "{}-{:08x}",
            self.cache_name,
            go_sum_hash() >> 32
        ))
    }

    /// The cached build of this set, made first when it is missing or stale.
    pub fn install(&self) -> Result<PathBuf> {
        let dir = self.cache_dir();
        if self.is_current_build(&dir) {
            eprintln!("envtest: cached binaries are current in {}", dir.display());
            return Ok(dir);
        }
        self.build_into(&dir)?;
        Ok(dir)
    }

    fn is_current_build(&self, dir: &Path) -> bool {
        self.binaries.iter().all(|(b, _)| dir.join(b).is_file())
            && fs::read_to_string(dir.join(STAMP_FILE)).is_ok_and(|stamp| stamp == expected_stamp())
    }

    fn build_into(&self, dir: &Path) -> Result<()> {
        let go = which_go(self.purpose)?;
        let parent = dir.parent().context("cache directory has no parent")?;
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        // Build next to the final place and rename, so an interrupted build never looks current.
        let staging = parent.join(format!(".build-{}", std::process::id()));
        let _ = fs::remove_dir_all(&staging);
        fs::create_dir_all(&staging)?;
        for (name, package) in self.binaries {
            if let Err(error) = go_build(&go, name, package, &staging) {
                let _ = fs::remove_dir_all(&staging);
                return Err(error);
            }
        }
        fs::write(staging.join(STAMP_FILE), expected_stamp())?;
        let _ = fs::remove_dir_all(dir);
        fs::rename(&staging, dir)
            .with_context(|| format!("moving the build to {}", dir.display()))?;
        Ok(())
    }
}

/// This project's cache: `$KUBEBUILDER_RS_CACHE`, else `kubebuilder-rs` in the user's cache
/// directory. Built control-plane binaries and installed Go tools live below it.
pub fn cache_root() -> PathBuf {
    std::env::var_os("KUBEBUILDER_RS_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("kubebuilder-rs"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/kubebuilder-rs"))
        })
        .unwrap_or_else(|| std::env::temp_dir().join("kubebuilder-rs"))
}

/// The Go module that pins the control plane.
pub fn go_module_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn assets_from_env() -> Result<Option<PathBuf>> {
    let Some(dir) = std::env::var_os(ASSETS_ENV).filter(|d| !d.is_empty()) else {
        return Ok(None);
    };
    let dir = PathBuf::from(dir);
    for (binary, _) in CONTROL_PLANE.binaries {
        ensure!(
            dir.join(binary).is_file(),
            "{ASSETS_ENV}={} does not hold `{binary}`",
            dir.display()
        );
    }
    Ok(Some(dir))
}

fn controller_manager_from_env() -> Result<Option<PathBuf>> {
    let Some(binary) = std::env::var_os(CONTROLLER_MANAGER_ENV).filter(|b| !b.is_empty()) else {
        return Ok(None);
    };
    let binary = PathBuf::from(binary);
    ensure!(
        binary.is_file(),
        "{CONTROLLER_MANAGER_ENV}={} is not a file",
        binary.display()
    );
    Ok(Some(binary))
}

/// What a cache directory must record to be reused: the pins and the exact module graph.
fn expected_stamp() -> String {
    format!(
        "kubernetes {KUBERNETES_VERSION}\netcd {ETCD_VERSION}\ngo.sum fnv1a64 {:016x}\n",
        go_sum_hash()
    )
}

fn go_sum_hash() -> u64 {
    fnv1a64(&fs::read(go_module_dir().join("go.sum")).unwrap_or_default())
}

/// The source directory of Go module `module@version` (downloaded into the module cache
/// if needed), resolved in the Go module at `go_module` (whose go.sum pins it).
pub fn go_module_source(go_module: &Path, module: &str, version: &str) -> Result<PathBuf> {
    let output = Command::new("go")
        .current_dir(go_module)
        .args(["mod", "download", "-json", &format!("{module}@{version}")])
        .output()
        .context("running `go mod download` (Go 1.26 is needed)")?;
    let info: serde_json::Value = serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "`go mod download {module}@{version}` said: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    info["Dir"]
        .as_str()
        .map(PathBuf::from)
        .with_context(|| format!("`go mod download {module}@{version}` gave no directory: {info}"))
}

/// `v1.37.2`'s `("1", "37")`.
fn major_minor(version: &str) -> (&str, &str) {
    let mut parts = version.trim_start_matches('v').split('.');
    (parts.next().unwrap_or(""), parts.next().unwrap_or(""))
}

/// `go build` of one binary with upstream's version stamp (Kubernetes binaries report
/// [`KUBERNETES_VERSION`] as a release build does), statically linked, into `out_dir`.
fn go_build(go: &Path, name: &str, package: &str, out_dir: &Path) -> Result<()> {
    let (major, minor) = major_minor(KUBERNETES_VERSION);
    let version_flags = [
        "k8s.io/component-base/version",
        "k8s.io/client-go/pkg/version",
    ]
    .iter()
    .map(|pkg| {
        format!(
            "-X {pkg}.gitVersion={KUBERNETES_VERSION} -X {pkg}.gitMajor={major} -X {pkg}.gitMinor={minor} \
                 -X {pkg}.gitTreeState=clean"
        )
    })
    .collect::<Vec<_>>()
    .join(" ");
    let ldflags = if package.starts_with("k8s.io/") {
        format!("-s -w {version_flags}")
    } else {
        "-s -w".to_owned()
    };
    eprintln!("envtest: building {name} from {package} (Go module proxy; minutes on a cold cache)");
    let started = std::time::Instant::now();
    let output = Command::new(go)
        .current_dir(go_module_dir())
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "-trimpath -mod=readonly")
        .args(["build", "-ldflags", &ldflags, "-o"])
        .arg(out_dir.join(name))
        .arg(package)
        .output()
        .with_context(|| format!("running {}", go.display()))?;
    if !output.status.success() {
        bail!(
            "`go build {package}` failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    eprintln!(
        "envtest: built {name} in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The Go toolchain to build with: `$GO`, else `go` from `PATH`.
fn which_go(purpose: &str) -> Result<PathBuf> {
    check_go(
        std::env::var_os("GO")
            .map(PathBuf::from)
            .unwrap_or_else(|| "go".into()),
        purpose,
    )
}

fn check_go(go: PathBuf, purpose: &str) -> Result<PathBuf> {
    match Command::new(&go).arg("version").output() {
        Ok(out) if out.status.success() => Ok(go),
        Ok(out) => bail!(
            "`{} version` failed: {}",
            go.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(err) => bail!(
            "Go is needed to build the Kubernetes binaries of {purpose}, but `{}` cannot run ({err}); \
             install Go 1.26 (for the control plane alone, {ASSETS_ENV} may name a directory holding \
             kube-apiserver and etcd instead)",
            go.display()
        ),
    }
}

/// FNV-1a: a hash that is stable across Rust releases, for the cache stamps of what is
/// built from pinned sources.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_mod_pins_the_versions_this_crate_names() {
        let go_mod = fs::read_to_string(go_module_dir().join("go.mod")).unwrap();
        assert!(go_mod.contains(&format!("k8s.io/kubernetes {KUBERNETES_VERSION}")));
        assert!(go_mod.contains(&format!("go.etcd.io/etcd/server/v3 {ETCD_VERSION}")));
        // Every staging module is replaced by its published tag, never left at v0.0.0.
        let staging = format!("v0.{}", KUBERNETES_VERSION.trim_start_matches("v1."));
        assert!(go_mod.contains(&format!("k8s.io/api => k8s.io/api {staging}")));
    }

    #[test]
    fn a_missing_go_is_named_in_the_error() {
        let err = check_go("/nonexistent/bin/go".into(), "the control plane")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("Go is needed to build the Kubernetes binaries of the control plane"),
            "{err}"
        );
        assert!(err.contains("/nonexistent/bin/go"), "{err}");
    }

    #[test]
    fn cache_directories_are_named_after_the_pins() {
        for set in [&CONTROL_PLANE, &CONTROLLER_MANAGER, &NODE] {
            let name = set
                .cache_dir()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            assert!(name.contains(KUBERNETES_VERSION), "{name}");
        }
        assert!(CONTROL_PLANE.cache_name.contains(ETCD_VERSION));
    }

    #[test]
    fn stamp_changes_with_the_module_graph() {
        assert_ne!(fnv1a64(b"a"), fnv1a64(b"b"));
        assert!(expected_stamp().contains(KUBERNETES_VERSION));
    }
}
