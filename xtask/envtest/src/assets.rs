//! Finding, or building, the `kube-apiserver` and `etcd` binaries.
//!
//! Nothing can be downloaded from release sites here, but the Go module proxy serves
//! Kubernetes and etcd sources. The Go module next to this file (`go.mod`, `go.sum`) pins
//! both; `install` builds them once into a cache directory keyed on those pins.
//! `KUBEBUILDER_ASSETS`, the envtest convention, names a directory that already holds them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

/// The Kubernetes release the binaries are built from (kept equal to `go.mod`).
pub const KUBERNETES_VERSION: &str = "v1.36.3";
/// The etcd release kube-apiserver v1.36.3 pins (kept equal to `go.mod`).
pub const ETCD_VERSION: &str = "v3.6.8";

/// The variable naming a directory holding `kube-apiserver` and `etcd`.
pub const ASSETS_ENV: &str = "KUBEBUILDER_ASSETS";

const BINARIES: [&str; 2] = ["kube-apiserver", "etcd"];
const STAMP_FILE: &str = "VERSION";

/// The directory holding both binaries, without building anything: `KUBEBUILDER_ASSETS`
/// when set, else the cache when it holds a build of the pinned versions.
pub fn find() -> Result<PathBuf> {
    if let Some(dir) = assets_from_env()? {
        return Ok(dir);
    }
    let dir = cache_dir();
    ensure!(
        is_current_build(&dir),
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
    let dir = cache_dir();
    if is_current_build(&dir) {
        eprintln!("envtest: cached binaries are current in {}", dir.display());
        return Ok(dir);
    }
    build_into(&dir)?;
    Ok(dir)
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

/// Where built binaries are cached: one subdirectory of the cache per pinned version pair.
pub fn cache_dir() -> PathBuf {
    cache_root()
        .join("envtest")
        .join(format!("k8s-{KUBERNETES_VERSION}-etcd-{ETCD_VERSION}"))
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
    for binary in BINARIES {
        ensure!(
            dir.join(binary).is_file(),
            "{ASSETS_ENV}={} does not hold `{binary}`",
            dir.display()
        );
    }
    Ok(Some(dir))
}

/// What a cache directory must record to be reused: the pins and the exact module graph.
fn expected_stamp() -> String {
    let go_sum = fs::read(go_module_dir().join("go.sum")).unwrap_or_default();
    format!(
        "kubernetes {KUBERNETES_VERSION}\netcd {ETCD_VERSION}\ngo.sum fnv1a64 {:016x}\n",
        fnv1a64(&go_sum)
    )
}

fn is_current_build(dir: &Path) -> bool {
    BINARIES.iter().all(|b| dir.join(b).is_file())
        && fs::read_to_string(dir.join(STAMP_FILE)).is_ok_and(|stamp| stamp == expected_stamp())
}

fn build_into(dir: &Path) -> Result<()> {
    let go = which_go()?;
    let parent = dir.parent().context("cache directory has no parent")?;
    fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    // Build next to the final place and rename, so an interrupted build never looks current.
    let staging = parent.join(format!(".build-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging)?;

    let version_flags = [
        "k8s.io/component-base/version",
        "k8s.io/client-go/pkg/version",
    ]
    .iter()
    .map(|pkg| {
        format!(
            "-X {pkg}.gitVersion={KUBERNETES_VERSION} -X {pkg}.gitMajor=1 -X {pkg}.gitMinor=36 \
                 -X {pkg}.gitTreeState=clean"
        )
    })
    .collect::<Vec<_>>()
    .join(" ");
    let targets = [
        (
            "kube-apiserver",
            "k8s.io/kubernetes/cmd/kube-apiserver",
            format!("-s -w {version_flags}"),
        ),
        ("etcd", "go.etcd.io/etcd/server/v3", "-s -w".to_string()),
    ];
    for (name, package, ldflags) in targets {
        eprintln!(
            "envtest: building {name} from {package} (Go module proxy; minutes on a cold cache)"
        );
        let started = std::time::Instant::now();
        let output = Command::new(&go)
            .current_dir(go_module_dir())
            .env("CGO_ENABLED", "0")
            .env("GOFLAGS", "-trimpath -mod=readonly")
            .args(["build", "-ldflags", &ldflags, "-o"])
            .arg(staging.join(name))
            .arg(package)
            .output()
            .with_context(|| format!("running {}", go.display()))?;
        if !output.status.success() {
            let _ = fs::remove_dir_all(&staging);
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
    }
    fs::write(staging.join(STAMP_FILE), expected_stamp())?;
    let _ = fs::remove_dir_all(dir);
    fs::rename(&staging, dir).with_context(|| format!("moving the build to {}", dir.display()))?;
    Ok(())
}

/// The Go toolchain to build with: `$GO`, else `go` from `PATH`.
fn which_go() -> Result<PathBuf> {
    check_go(
        std::env::var_os("GO")
            .map(PathBuf::from)
            .unwrap_or_else(|| "go".into()),
    )
}

fn check_go(go: PathBuf) -> Result<PathBuf> {
    match Command::new(&go).arg("version").output() {
        Ok(out) if out.status.success() => Ok(go),
        Ok(out) => bail!(
            "`{} version` failed: {}",
            go.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(err) => bail!(
            "Go is needed to build kube-apiserver and etcd, but `{}` cannot run ({err}); install Go 1.26 \
             or set {ASSETS_ENV} to a directory holding the binaries",
            go.display()
        ),
    }
}

/// FNV-1a: a hash that is stable across Rust releases, for the cache stamp.
fn fnv1a64(bytes: &[u8]) -> u64 {
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
        let err = check_go("/nonexistent/bin/go".into())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("Go is needed to build kube-apiserver and etcd"),
            "{err}"
        );
        assert!(err.contains("/nonexistent/bin/go"), "{err}");
    }

    #[test]
    fn stamp_changes_with_the_module_graph() {
        assert_ne!(fnv1a64(b"a"), fnv1a64(b"b"));
        assert!(expected_stamp().contains(KUBERNETES_VERSION));
    }
}
