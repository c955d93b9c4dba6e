//! What the scaffolding and kustomize tests share: `cargo xtask` command lines, copies of
//! this repository, snapshots of a tree, cargo run in another workspace with this build's
//! build directory, and kustomize's output as a set of objects.
//!
//! The workspaces the slow tests build share this build's build directory, so that the
//! registry dependencies are built already; their binaries go to a directory of their own
//! ([`artifacts_dir`]). Cargo names the artifacts of path packages by
//! name, version and path relative to the workspace: a copy of this repository, or a new
//! project with the same `api`, `controller` and `xtask`, would share (and overwrite) this
//! repository's artifacts, and an artifact built in one directory would be taken as fresh
//! in another, with the first one's paths compiled in. So those workspaces get a version of
//! their own ([`set_version`]) and a fixed directory under the target directory
//! ([`scratch_dir`]).

#![allow(dead_code)] // Each test binary uses its own part of this module.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use clap::Parser as _;
use kubebuilder_cli::scaffold::{self, CreateCommand, plan_create};
use kubebuilder_cli::{Cli, Command};
use serde_json::Value;

/// A Go module of the import tests' corpus: its path and version (from the module proxy).
pub type GoModule = (&'static str, &'static str);

/// The Gateway API: five versions, CEL rules everywhere, kinds declared as others'.
pub const GATEWAY_API: GoModule = ("sigs.k8s.io/gateway-api", "v1.6.3");
/// Kueue: three versions, conversion, pod templates, controllers with webhooks.
pub const KUEUE: GoModule = ("sigs.k8s.io/kueue", "v0.17.0");
/// external-secrets: two groups and a shared types package; its kinds are also the
/// external kinds a new project's controller imports (`scaffold_init`).
pub const EXTERNAL_SECRETS: GoModule = ("github.com/external-secrets/external-secrets", "v0.16.2");

/// The source directory of `module` (downloaded into Go's module cache if needed).
pub fn go_module_source((module, version): GoModule) -> PathBuf {
    let resolver = repo_root().join("macros/tests/conformance/go");
    kubebuilder_envtest::assets::go_module_source(&resolver, module, version)
        .unwrap_or_else(|error| panic!("downloading {module}@{version}: {error:#}"))
}

/// This repository's root (this crate is `xtask/cli`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A command line such as `create api --group ship --version v1 --kind Frigate`, parsed as
/// `cargo xtask` parses it (arguments are split at whitespace).
pub fn parse(line: &str) -> Command {
    Cli::try_parse_from(std::iter::once("cargo xtask").chain(line.split_whitespace()))
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .command
}

/// A project made by `init <temp>/fleet --domain example.com --local <this repository>
/// <options>`, in a temporary directory kept alive by the handle; its root.
pub fn init_project(options: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("fleet");
    let line = format!(
        "init {} --domain example.com --local {} {options}",
        root.display(),
        repo_root().display()
    );
    let Command::Scaffold(scaffold::Command::Init(args)) = parse(&line) else {
        panic!("{line} is not init");
    };
    kubebuilder_cli::scaffold::init::plan(&args)
        .unwrap()
        .apply()
        .unwrap();
    (dir, root)
}

/// A `create api` or `create webhook` command line, parsed.
pub fn create_command(line: &str) -> CreateCommand {
    match parse(line) {
        Command::Scaffold(scaffold::Command::Create { command }) => command,
        _ => panic!("{line} is not a create command"),
    }
}

/// A `create` command line planned and written in `root`, without the `manifests` run
/// that would build the project.
pub fn scaffold(root: &Path, line: &str) {
    plan_create(root, &create_command(line))
        .unwrap_or_else(|e| panic!("{line}: {e:#}"))
        .apply()
        .unwrap();
}

/// What a copy leaves out: build output and version control.
const NOT_COPIED: &[&str] = &["target", "dist", ".git"];

/// Copies this repository's sources into `to`, keeping modification times (so that the
/// unchanged crates of a copy made again at the same place are not built again).
pub fn copy_repo(to: &Path) {
    copy_tree(&repo_root(), to, NOT_COPIED);
}

/// Copies the tree at `from` into `to`, leaving out the entries of `from` itself named in
/// `skipped`; modification times are kept.
pub fn copy_tree(from: &Path, to: &Path, skipped: &[&str]) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if skipped.iter().any(|skipped| name == *skipped) {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&source, &target, &[]);
        } else {
            fs::copy(&source, &target).unwrap();
            let modified = entry.metadata().unwrap().modified().unwrap();
            fs::File::options()
                .write(true)
                .open(&target)
                .unwrap()
                .set_modified(modified)
                .unwrap();
        }
    }
}

/// Every file under `root` (build output and version control aside) with its bytes.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if dir == root
                && NOT_COPIED
                    .iter()
                    .any(|skipped| entry.file_name() == *skipped)
            {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                dirs.push(path);
            } else {
                let bytes = fs::read(&path).unwrap();
                files.insert(path.strip_prefix(root).unwrap().to_owned(), bytes);
            }
        }
    }
    files
}

/// The target directory this test binary was built in (`<target>/debug/deps/<test>`),
/// which the workspaces the tests build share.
pub fn target_dir() -> PathBuf {
    std::env::current_exe()
        .unwrap()
        .ancestors()
        .nth(3)
        .unwrap()
        .to_owned()
}

/// `<target>/scaffold-tests/<name>`, empty: the same directory every run. Make a test's
/// project right in it (`<name>/<project>`): cargo tells a path dependency's artifacts apart
/// by its path relative to the workspace that builds it, so the framework crates of projects
/// at one depth are built once for all of them (with the same features), not once each.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = target_dir().join("scaffold-tests").join(name);
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Gives the packages of the workspace at `root` (`version.workspace = true`) `version`.
pub fn set_version(root: &Path, version: &str) {
    let manifest = root.join("Cargo.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    let ours = "\n[workspace.package]\n";
    let (before, after) = text.split_once(ours).expect("a [workspace.package] table");
    let (old, rest) = after
        .split_once("\nversion = ")
        .map(|(head, tail)| (head, tail.split_once('\n').unwrap().1))
        .expect("a workspace version");
    fs::write(
        &manifest,
        format!("{before}{ours}{old}\nversion = \"{version}\"\n{rest}"),
    )
    .unwrap();
}

/// Where the binaries that cargo builds in the workspace at `dir` go: `<dir>/target`. Only
/// the build directory is shared ([`cargo`]), so that a project's `controller` or `xtask`
/// never replaces this repository's, which the tests running beside it start.
pub fn artifacts_dir(dir: &Path) -> PathBuf {
    dir.join("target")
}

/// `cargo <args>` in the workspace at `dir`, with `env`: its build directory is this
/// build's (the registry dependencies are built already), its binaries go to
/// [`artifacts_dir`].
pub fn cargo(dir: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> Output {
    kubebuilder_cli::cargo()
        .current_dir(dir)
        .args(args)
        .env("CARGO_BUILD_BUILD_DIR", target_dir())
        .env("CARGO_TARGET_DIR", artifacts_dir(dir))
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("running cargo {args:?}: {e}"))
}

/// `cargo <args>` in `dir`, which must succeed; its stderr.
pub fn cargo_ok(dir: &Path, args: &[&str]) -> String {
    let output = cargo(dir, args, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "cargo {} in {} failed ({}):\n{}\n{stderr}",
        args.join(" "),
        dir.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout)
    );
    stderr
}

/// The files that differ between two snapshots (added, changed or removed).
pub fn changed(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .cloned()
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Of `paths` under `root`, the files that still hold a template placeholder.
pub fn with_placeholders(root: &Path, paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .filter_map(|path| {
            let text = fs::read_to_string(root.join(path)).ok()?;
            let left = kubebuilder_cli::scaffold::templates::placeholders(&text);
            (!left.is_empty()).then(|| format!("{}: {left:?}", path.display()))
        })
        .collect()
}

/// kustomize itself, which `cargo xtask test` installs.
pub fn kustomize() -> PathBuf {
    std::env::var_os("KUSTOMIZE")
        .expect("KUSTOMIZE must name kustomize v5 (`cargo xtask test` installs it and sets it)")
        .into()
}

/// The objects of a multi-document YAML stream, each as canonical JSON text, so that two
/// renderings compare as sets of objects (order of documents and keys aside).
pub fn objects(yaml: &str) -> BTreeSet<String> {
    serde_saphyr::from_multiple::<Value>(yaml)
        .expect("valid YAML")
        .into_iter()
        .filter(|object| !object.is_null())
        .map(|object| canonical(&object))
        .collect()
}

fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by_key(|(key, _)| *key);
            let inner: Vec<String> = entries
                .into_iter()
                .map(|(key, value)| format!("{key:?}:{}", canonical(value)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}
