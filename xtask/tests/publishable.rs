//! The framework crates are publishable: `cargo package` builds each from its packaged
//! tarball, so a file a crate uses but does not package (the embedded schemas, envtest's Go
//! module files, the scaffolds' pins) fails here and not on a user's machine; and their
//! docs build with every warning an error.
//!
//! Slow (each package is built from scratch): `#[ignore]`d, and run by `cargo xtask test`
//! in its last step.

use std::path::{Path, PathBuf};
use std::process::Command;

/// This repository's own crates: the tutorial's API and controller, its xtask, and the
/// binaries xtask runs that link the API (its declarations, the webhook benchmark).
const PROJECT_CRATES: &[&str] = &[
    "api",
    "controller",
    "declarations",
    "kubebuilder-ui-tests",
    "webhook-bench",
    "xtask",
];

/// k8s-openapi needs a Kubernetes version chosen, which library crates leave to binaries:
/// a library built alone from its package gets it from this variable (the version
/// feature the binaries and tests enable).
const K8S_OPENAPI_VERSION: (&str, &str) = ("K8S_OPENAPI_ENABLED_VERSION", "1.37");
/// The same, for a build of several workspace members at once.
const K8S_OPENAPI_FEATURE: &str = "k8s-openapi/v1_37";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `command` (cargo) in this repository, which must succeed; its stderr.
fn cargo_ok(command: &mut Command) -> String {
    let output = command
        .current_dir(repo_root())
        .output()
        .expect("running cargo");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{command:?} failed:\n{stderr}");
    stderr
}

/// `cargo package --workspace` verifies each crate against the others through a local
/// registry overlay, which cargo unpacks into `$CARGO_HOME/registry/src/-<hash>/` (the
/// hash is of the overlay's path, so it repeats from run to run) and never unpacks again
/// while that directory says it is complete: the crates' version does not change between
/// commits, so without this a run verifies against an earlier commit's sources. Only the
/// local overlays' directories (named with an empty registry name, so beginning with
/// `-`) are touched; cargo unpacks them again from the tarballs this run packages.
fn forget_unpacked_framework_crates() {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"));
    let Ok(sources) = std::fs::read_dir(cargo_home.join("registry/src")) else {
        return;
    };
    for overlay in sources.flatten() {
        if !overlay.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        for unpacked in std::fs::read_dir(overlay.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = unpacked.file_name().to_string_lossy().into_owned();
            let is_framework_crate = kubebuilder_cli::FRAMEWORK_CRATES.iter().any(|krate| {
                name.strip_prefix(krate)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
            });
            if is_framework_crate {
                std::fs::remove_dir_all(unpacked.path()).unwrap_or_else(|error| {
                    panic!("removing {}: {error}", unpacked.path().display())
                });
            }
        }
    }
}

/// The workspace's dev profile (its root manifest's `[profile.dev]` tables), which a
/// package verified alone lacks: profiles are the workspace root's. Given to the
/// verification builds, with this build's build directory, it lets them reuse every
/// dependency this build compiled with the same features instead of building all again.
const DEV_PROFILE: &[(&str, &str)] = &[
    ("profile.dev.debug", "\"line-tables-only\""),
    ("profile.dev.split-debuginfo", "\"unpacked\""),
    ("profile.dev.package.\"*\".debug", "false"),
];

/// This test's build directory (`<build>/debug/deps/<test>`).
fn build_dir() -> PathBuf {
    std::env::current_exe()
        .unwrap()
        .ancestors()
        .nth(3)
        .unwrap()
        .to_owned()
}

#[test]
fn the_verification_profile_is_the_workspace_profile() {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let profile = manifest
        .split_once("\n[profile.dev]\n")
        .expect("a [profile.dev] table")
        .1;
    let lines: Vec<&str> = profile
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect();
    assert_eq!(
        lines,
        [
            "debug = \"line-tables-only\"",
            "split-debuginfo = \"unpacked\"",
            "[profile.dev.package.\"*\"]",
            "debug = false",
        ],
        "DEV_PROFILE must say what the workspace's [profile.dev] says"
    );
}

#[test]
#[ignore = "slow (builds every framework crate from its package): `cargo xtask test` runs it last"]
fn every_framework_crate_builds_from_its_package() {
    forget_unpacked_framework_crates();
    let mut package = kubebuilder_cli::cargo();
    package
        .args(["package", "--workspace", "--allow-dirty"])
        .env(K8S_OPENAPI_VERSION.0, K8S_OPENAPI_VERSION.1)
        // The packages' binaries go to a directory of their own: tests running beside this
        // one start this build's.
        .env("CARGO_BUILD_BUILD_DIR", build_dir())
        .env("CARGO_TARGET_DIR", build_dir().join("package-verification"));
    for (key, value) in DEV_PROFILE {
        package.arg("--config").arg(format!("{key}={value}"));
    }
    for excluded in PROJECT_CRATES {
        package.args(["--exclude", excluded]);
    }
    let stderr = cargo_ok(&mut package);
    for name in kubebuilder_cli::FRAMEWORK_CRATES {
        let verified = format!("Verifying {name} v");
        assert!(
            stderr.contains(&verified),
            "{name} was not verified:\n{stderr}"
        );
    }
}

#[test]
#[ignore = "slow (documents every framework crate): `cargo xtask test` runs it last"]
fn the_framework_crates_document_without_a_warning() {
    let mut doc = kubebuilder_cli::cargo();
    doc.args(["doc", "--no-deps", "--features", K8S_OPENAPI_FEATURE])
        .env("RUSTDOCFLAGS", "-D warnings");
    for name in kubebuilder_cli::FRAMEWORK_CRATES {
        doc.args(["-p", name]);
    }
    cargo_ok(&mut doc);
}

/// Every member of the workspace is either published or one of this project's own.
#[test]
fn every_crate_is_a_framework_or_a_project_crate() {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let members = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .unwrap()
        .0;
    let mut names: Vec<String> = members
        .split(',')
        .map(|member| member.trim().trim_matches('"'))
        .filter(|member| !member.is_empty())
        .map(|member| {
            let manifest =
                std::fs::read_to_string(repo_root().join(member).join("Cargo.toml")).unwrap();
            let name = manifest
                .lines()
                .find_map(|line| line.strip_prefix("name = \""))
                .unwrap();
            let publish = manifest.lines().any(|line| line == "publish = true");
            let listed = if publish {
                kubebuilder_cli::FRAMEWORK_CRATES
            } else {
                PROJECT_CRATES
            };
            let name = name.trim_end_matches('"').to_owned();
            assert!(
                listed.contains(&name.as_str()),
                "{name} (publish = {publish})"
            );
            name
        })
        .collect();
    names.sort();
    let mut expected: Vec<String> = kubebuilder_cli::FRAMEWORK_CRATES
        .iter()
        .chain(PROJECT_CRATES)
        .map(|name| (*name).to_owned())
        .collect();
    expected.sort();
    assert_eq!(names, expected);
}
