//! `cargo xtask bump-kubernetes <version>`: moves every Kubernetes pin of the repository to
//! another release (1.37.2 to 1.38.0, say) and regenerates what was derived from the old one.
//!
//! A release is spelled four ways here: `v1.37.2` (kube-apiserver, the scaffold, the docs),
//! `v0.37.2` (the published k8s.io libraries), `v1_37` (k8s-openapi's feature) and `"1.37"`
//! (`K8S_OPENAPI_ENABLED_VERSION`); etcd is the release that Kubernetes' own `go.mod` pins.
//! Every tracked text file that spells the current release is rewritten, except the Go
//! modules, which the go command moves (`go get`, `go mod tidy`: their graphs change with
//! the release), and `Cargo.lock`. Then the embedded-type table, the API's CRD snapshot
//! and the manifests are regenerated, by the new build. When that build fails on what the
//! new API changed (a field no longer optional, say), the pins stay moved; once the code is
//! fixed, the same command again (the pins now equal the release) only regenerates.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};
use kubebuilder_envtest::assets::{ETCD_VERSION, KUBERNETES_VERSION, go_module_source};

#[derive(clap::Args)]
pub struct Args {
    /// The Kubernetes release to move to, as `v1.38.0`.
    version: String,
}

/// The Go modules that import the k8s.io libraries directly.
const LIBRARY_MODULES: [&str; 2] = ["xtask/k8s-schemas", "macros/tests/conformance/go"];
/// The Go module that builds the Kubernetes binaries.
const BINARIES_MODULE: &str = "xtask/envtest";
const LIBRARIES: [&str; 3] = [
    "k8s.io/api",
    "k8s.io/apiextensions-apiserver",
    "k8s.io/apimachinery",
];
const ETCD_MODULE: &str = "go.etcd.io/etcd/server/v3";
/// Where [`KUBERNETES_VERSION`] and [`ETCD_VERSION`] are defined.
const ASSETS_FILE: &str = "xtask/envtest/src/assets.rs";

pub fn run(args: Args) -> Result<()> {
    let root = kubebuilder_cli::workspace_root();
    let from = Release::parse(KUBERNETES_VERSION)?;
    let to = Release::parse(&args.version)?;
    if from == to {
        eprintln!(
            "bump-kubernetes: the pins are {}; regenerating what derives from them",
            to.full()
        );
    } else {
        move_pins(&root, &from, &to)?;
    }
    regenerate(&root).with_context(|| {
        format!(
            "the pins are {to}, but what derives from them is not regenerated: fix what the \
             new API broke, then run `cargo xtask bump-kubernetes {to}` again",
            to = to.full()
        )
    })?;
    eprintln!(
        "bump-kubernetes: done. Next: `cargo xtask tools` builds the new binaries, `cargo \
         xtask test` shows what else the new API changed; review `git diff`"
    );
    Ok(())
}

/// Every pin of `from` moved to `to`. What can be refused is checked first, so that a
/// refusal changes no file: the release's format, k8s-openapi's API for it, the module
/// proxy serving it.
fn move_pins(root: &Path, from: &Release, to: &Release) -> Result<()> {
    check_k8s_openapi_has(root, to)?;
    let kubernetes_go_mod = kubernetes_go_mod(root, to)?;
    let etcd = required_version(&kubernetes_go_mod, ETCD_MODULE)
        .with_context(|| format!("k8s.io/kubernetes {} requires no {ETCD_MODULE}", to.full()))?;
    let staging = staging_libraries(&kubernetes_go_mod);
    ensure!(
        !staging.is_empty(),
        "k8s.io/kubernetes {} replaces no staging library",
        to.full()
    );
    let rewritten = rewrite_tracked_files(root, from, to, &etcd)?;
    eprintln!("bump-kubernetes: rewrote {} file(s)", rewritten.len());
    move_binaries_module(&root.join(BINARIES_MODULE), to, &etcd, &staging)?;
    for module in LIBRARY_MODULES {
        move_library_module(&root.join(module), to)?;
    }
    eprintln!("bump-kubernetes: the pins are {} (etcd {etcd})", to.full());
    Ok(())
}

/// A Kubernetes release `v1.<minor>.<patch>`.
#[derive(Debug, PartialEq, Eq)]
struct Release {
    minor: u32,
    patch: u32,
}

impl Release {
    fn parse(version: &str) -> Result<Self> {
        let numbers = version
            .strip_prefix("v1.")
            .and_then(|rest| rest.split_once('.'))
            .and_then(|(minor, patch)| Some((minor.parse().ok()?, patch.parse().ok()?)));
        let Some((minor, patch)) = numbers else {
            bail!("{version:?} is not a Kubernetes release such as v1.38.0");
        };
        Ok(Self { minor, patch })
    }

    /// `v1.37.2`: the release itself.
    fn full(&self) -> String {
        format!("v1.{}.{}", self.minor, self.patch)
    }

    /// `v0.37.2`: the tag of the k8s.io libraries published with it.
    fn libraries(&self) -> String {
        format!("v0.{}.{}", self.minor, self.patch)
    }

    /// `v1_37`: k8s-openapi's feature for its API.
    fn k8s_openapi_feature(&self) -> String {
        format!("v1_{}", self.minor)
    }

    /// `"1.37"`: the value of `K8S_OPENAPI_ENABLED_VERSION`.
    fn k8s_openapi_enabled_version(&self) -> String {
        format!("\"1.{}\"", self.minor)
    }

    /// Each spelling of `self` with the same spelling of `to`.
    fn spellings_to(&self, to: &Release) -> [(String, String); 4] {
        [
            (self.full(), to.full()),
            (self.libraries(), to.libraries()),
            (self.k8s_openapi_feature(), to.k8s_openapi_feature()),
            (
                self.k8s_openapi_enabled_version(),
                to.k8s_openapi_enabled_version(),
            ),
        ]
    }
}

/// Refuses a release whose API the locked k8s-openapi does not have, before anything
/// changes: raise its requirement in `Cargo.toml` first.
fn check_k8s_openapi_has(root: &Path, to: &Release) -> Result<()> {
    let output = Command::new(env!("CARGO"))
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .context("running cargo metadata")?;
    ensure!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let feature = to.k8s_openapi_feature();
    let k8s_openapi = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|package| package["name"] == "k8s-openapi")
        .context("k8s-openapi is not in the workspace's graph")?;
    ensure!(
        k8s_openapi["features"].get(&feature).is_some(),
        "k8s-openapi {} has no feature {feature}: raise its version in Cargo.toml to one that \
         has it, then run this again (nothing was changed)",
        k8s_openapi["version"].as_str().unwrap_or("?")
    );
    Ok(())
}

/// `to`'s own `go.mod` (downloaded from the module proxy: a release it does not serve
/// fails here, before anything changed).
fn kubernetes_go_mod(root: &Path, to: &Release) -> Result<String> {
    let source = go_module_source(&root.join(BINARIES_MODULE), "k8s.io/kubernetes", &to.full())?;
    let go_mod = source.join("go.mod");
    fs::read_to_string(&go_mod).with_context(|| format!("reading {}", go_mod.display()))
}

/// The version `go_mod` requires of `module`.
fn required_version(go_mod: &str, module: &str) -> Option<String> {
    go_mod.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some(module))
            .then(|| words.next().map(str::to_owned))
            .flatten()
    })
}

/// The tracked text files outside the Go modules' own files and `Cargo.lock` whose
/// spellings of `from` (and of its etcd) it rewrites to `to`'s; returns their paths.
fn rewrite_tracked_files(
    root: &Path,
    from: &Release,
    to: &Release,
    etcd: &str,
) -> Result<Vec<PathBuf>> {
    let mut replacements = from.spellings_to(to).to_vec();
    for prefix in ["etcd ", "etcd-"] {
        replacements.push((format!("{prefix}{ETCD_VERSION}"), format!("{prefix}{etcd}")));
    }
    // The etcd pin itself, a bare version string: only in the file that defines it.
    let etcd_pin = [(format!("\"{ETCD_VERSION}\""), format!("\"{etcd}\""))];
    let listed = Command::new("git")
        .current_dir(root)
        .args(["ls-files", "-z"])
        .output()
        .context("running git ls-files")?;
    ensure!(listed.status.success(), "git ls-files failed");
    let mut rewritten = Vec::new();
    for path in String::from_utf8(listed.stdout)?.split('\0') {
        if path.is_empty() || is_left_to_tools(path) {
            continue;
        }
        let path = root.join(path);
        let Ok(text) = fs::read_to_string(&path) else {
            continue; // not text
        };
        let mut new = replace_all(&text, &replacements);
        if path.ends_with(ASSETS_FILE) {
            new = replace_all(&new, &etcd_pin);
        }
        if new != text {
            fs::write(&path, new).with_context(|| format!("writing {}", path.display()))?;
            rewritten.push(path);
        }
    }
    Ok(rewritten)
}

/// Files whose versions a tool moves: the Go modules' (the go command) and the locks.
fn is_left_to_tools(path: &str) -> bool {
    ["go.mod", "go.sum", "Cargo.lock", "workspace.lock"]
        .iter()
        .any(|name| path == *name || path.ends_with(&format!("/{name}")))
}

/// `text` with each `before` replaced by its `after` where no digit follows it (`v1.37.2`
/// is not a prefix of `v1.37.20`).
fn replace_all(text: &str, replacements: &[(String, String)]) -> String {
    replacements
        .iter()
        .fold(text.to_owned(), |text, (before, after)| {
            let mut replaced = String::with_capacity(text.len());
            let mut rest = text.as_str();
            while let Some(at) = rest.find(before.as_str()) {
                let end = at + before.len();
                let whole = !rest[end..].starts_with(|c: char| c.is_ascii_digit());
                replaced.push_str(&rest[..at]);
                replaced.push_str(if whole { after } else { before });
                rest = &rest[end..];
            }
            replaced.push_str(rest);
            replaced
        })
}

/// The binaries' module: every `staging` library (`to`'s list) replaced by its published
/// tag of `to`, then k8s.io/kubernetes and etcd at `to`'s.
fn move_binaries_module(module: &Path, to: &Release, etcd: &str, staging: &[&str]) -> Result<()> {
    let go_mod = fs::read_to_string(module.join("go.mod"))?;
    let mut edit = vec!["mod".to_owned(), "edit".to_owned()];
    edit.extend(
        go_mod
            .lines()
            .filter_map(replaced_module)
            .map(|library| format!("-dropreplace={library}")),
    );
    edit.extend(
        staging
            .iter()
            .map(|library| format!("-replace={library}={library}@{}", to.libraries())),
    );
    go(module, &edit.iter().map(String::as_str).collect::<Vec<_>>())?;
    let kubernetes = format!("k8s.io/kubernetes@{}", to.full());
    go(
        module,
        &["get", &kubernetes, &format!("{ETCD_MODULE}@{etcd}")],
    )?;
    go(module, &["mod", "tidy"])?;
    Ok(())
}

/// `k8s.io/api` of `replace k8s.io/api => k8s.io/api v0.37.2`.
fn replaced_module(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("replace ")?;
    let (module, _) = rest.split_once(" => ")?;
    Some(module.trim())
}

/// The libraries `kubernetes_go_mod` takes from its staging directory.
fn staging_libraries(kubernetes_go_mod: &str) -> Vec<&str> {
    kubernetes_go_mod
        .lines()
        .filter(|line| line.contains("=> ./staging/"))
        .filter_map(|line| line.split_whitespace().next())
        .collect()
}

/// A module importing the libraries: each at `to`'s tag.
fn move_library_module(module: &Path, to: &Release) -> Result<()> {
    let mut get = vec!["get".to_owned()];
    get.extend(
        LIBRARIES
            .iter()
            .map(|library| format!("{library}@{}", to.libraries())),
    );
    let get: Vec<&str> = get.iter().map(String::as_str).collect();
    go(module, &get)?;
    go(module, &["mod", "tidy"])?;
    Ok(())
}

/// What was generated from the old release, regenerated by the new build: the
/// embedded-type table, the API's CRD snapshot, the manifests, and the pins the scaffold
/// copies.
fn regenerate(root: &Path) -> Result<()> {
    let cargo = |args: &[&str], env: &[(&str, &str)]| -> Result<()> {
        eprintln!("bump-kubernetes: cargo {}", args.join(" "));
        let status = Command::new(env!("CARGO"))
            .current_dir(root)
            .args(args)
            .envs(env.iter().copied())
            .status()?;
        ensure!(status.success(), "`cargo {}` failed", args.join(" "));
        Ok(())
    };
    cargo(&["xtask", "k8s-schemas"], &[])?;
    cargo(
        &["test", "--package", "api", "--test", "crd"],
        &[("UPDATE_SNAPSHOTS", "1")],
    )?;
    cargo(&["xtask", "manifests"], &[])?;
    for (from, to) in [
        ("Cargo.toml", "xtask/cli/pins/workspace.toml"),
        ("Cargo.lock", "xtask/cli/pins/workspace.lock"),
    ] {
        fs::copy(root.join(from), root.join(to)).with_context(|| format!("copying {from}"))?;
    }
    Ok(())
}

/// Runs the go command in `module`, returning its standard output.
fn go(module: &Path, args: &[&str]) -> Result<String> {
    eprintln!(
        "bump-kubernetes: ({}) go {}",
        module.display(),
        args.join(" ")
    );
    let output = Command::new("go")
        .current_dir(module)
        .args(args)
        .output()
        .context("running go (Go 1.26 is needed)")?;
    ensure!(
        output.status.success(),
        "`go {}` in {} failed:\n{}",
        args.join(" "),
        module.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(String::from_utf8(output.stdout)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_spelled_four_ways() {
        let from = Release::parse("v1.37.2").unwrap();
        let to = Release::parse("v1.38.0").unwrap();
        let text = "kube-apiserver v1.37.2, k8s.io/api v0.37.2, features = [\"v1_37\"], \
                    (\"K8S_OPENAPI_ENABLED_VERSION\", \"1.37\"), not v1.37.20 nor 0.1.37";
        assert_eq!(
            replace_all(text, &from.spellings_to(&to)),
            "kube-apiserver v1.38.0, k8s.io/api v0.38.0, features = [\"v1_38\"], \
             (\"K8S_OPENAPI_ENABLED_VERSION\", \"1.38\"), not v1.37.20 nor 0.1.37"
        );
    }

    #[test]
    fn only_releases_are_taken() {
        for wrong in ["1.38.0", "v1.38", "v2.0.0", "v1.38.x", "latest"] {
            let err = Release::parse(wrong).unwrap_err().to_string();
            assert!(
                err.contains("is not a Kubernetes release"),
                "{wrong}: {err}"
            );
        }
        assert_eq!(
            Release::parse("v1.40.11").unwrap(),
            Release {
                minor: 40,
                patch: 11
            }
        );
    }

    #[test]
    fn the_current_pins_parse_and_the_go_modules_carry_them() {
        let current = Release::parse(KUBERNETES_VERSION).unwrap();
        let root = kubebuilder_cli::workspace_root();
        let go_mod = fs::read_to_string(root.join(BINARIES_MODULE).join("go.mod")).unwrap();
        assert_eq!(
            required_version(&go_mod, ETCD_MODULE).as_deref(),
            Some(ETCD_VERSION)
        );
        let assets = fs::read_to_string(root.join(ASSETS_FILE)).unwrap();
        assert!(assets.contains(&format!("\"{ETCD_VERSION}\"")));
        assert_eq!(
            replaced_module("replace k8s.io/api => k8s.io/api v0.37.2"),
            Some("k8s.io/api")
        );
        let kubernetes = "replace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n)\n";
        assert_eq!(staging_libraries(kubernetes), ["k8s.io/api"]);
        for module in LIBRARY_MODULES {
            let go_mod = fs::read_to_string(root.join(module).join("go.mod")).unwrap();
            for library in LIBRARIES {
                assert_eq!(
                    required_version(&go_mod, library),
                    Some(current.libraries()),
                    "{module}: {library}"
                );
            }
        }
    }

    #[test]
    fn the_tools_move_the_go_modules_and_locks() {
        for path in [
            "go.mod",
            "xtask/envtest/go.sum",
            "xtask/cli/pins/workspace.lock",
        ] {
            assert!(is_left_to_tools(path), "{path}");
        }
        assert!(!is_left_to_tools("xtask/envtest/README.md"));
    }
}
