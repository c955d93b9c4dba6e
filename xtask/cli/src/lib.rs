//! `cargo xtask` for operator projects built with kubebuilder for Rust: what kubebuilder's
//! Makefile (`make manifests`, `make test`, `make install`, `make deploy`, `make run`, ...)
//! and its CLI (`kubebuilder init`, `create api`, `create webhook`) do.
//!
//! A project's `xtask` binary is a thin `main` over [`Command`] and [`run()`], and every
//! command works on the workspace it runs in, found at run time ([`workspace_root`]). It
//! does not link the project's `api` and `controller` crates, whose attributes register the
//! declarations (CRD versions, RBAC rules, webhooks) that `manifests` renders: the
//! project's small declarations binary does, and `manifests` runs it
//! (the `declarations` package), so that an edit to the API does not rebuild xtask.

#![warn(missing_docs)]

// What `cargo kubebuilder` runs, the scaffolds and the manifests they render, is always
// built; the other commands only with the `xtask` feature (on by default), so that
// `cargo kubebuilder` builds none of the client stack and control-plane harness they need.
pub mod import;
mod manifests;
pub mod scaffold;
pub mod source;
pub mod tools;

#[cfg(feature = "xtask")]
mod commands;
#[cfg(feature = "xtask")]
pub use commands::{Cli, Command, GlobalArgs, run, target_dir, workspace_packages, xtask_exe};
#[cfg(feature = "xtask")]
pub mod certmanager;
#[cfg(feature = "xtask")]
mod cluster;
#[cfg(feature = "xtask")]
mod deploy;
#[cfg(feature = "xtask")]
mod e2e;
#[cfg(feature = "xtask")]
mod envtest;
#[cfg(feature = "xtask")]
mod faults;
#[cfg(feature = "xtask")]
pub mod helm;
#[cfg(feature = "xtask")]
pub mod image;
#[cfg(feature = "xtask")]
mod installer;
#[cfg(feature = "xtask")]
pub mod kustomize;
#[cfg(feature = "xtask")]
mod report;
#[cfg(feature = "xtask")]
mod rollout;
#[cfg(feature = "xtask")]
pub mod run;
#[cfg(feature = "xtask")]
mod test;

use std::path::{Path, PathBuf};

/// kubebuilder for Rust's own crates, as a user gets them from crates.io.
pub const FRAMEWORK_CRATES: &[&str] = &[
    "cargo-kubebuilder",
    "kubebuilder",
    "kubebuilder-attributes",
    "kubebuilder-cli",
    "kubebuilder-envtest",
    "kubebuilder-macros",
    "kubebuilder-markers",
    "kubebuilder-model",
    "kubebuilder-plural",
    "kubebuilder-runtime",
];

/// A `cargo` command as a user would type it: the same cargo as the one running `cargo
/// xtask` (`$CARGO`), without the variables cargo sets for the package it runs
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`, ...). Build scripts such as ring's rerun when
/// those change, so a nested build that inherited them would rebuild ring and everything
/// above it, and the next build from a shell would do it all again.
///
/// Cargo's own settings from the environment stay: `cargo xtask --offline …` (which sets
/// `CARGO_NET_OFFLINE`) keeps every nested command offline. `cargo --offline xtask …`
/// cannot: cargo replaces itself with the program it runs (`cargo run`, a `cargo-<name>`
/// subcommand) and passes on neither the flag nor a variable, so nothing is left that says
/// it was given.
pub fn cargo() -> std::process::Command {
    let mut command =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if set_for_the_package(&name) {
            command.env_remove(&*name);
        }
    }
    command
}

/// Whether the variable `name` is one cargo sets for the package it builds or runs,
/// rather than one of cargo's own settings.
fn set_for_the_package(name: &str) -> bool {
    [
        "CARGO_PKG_",
        "CARGO_MANIFEST_",
        "CARGO_CRATE_",
        "CARGO_BIN_",
    ]
    .iter()
    .any(|prefix| name.starts_with(prefix))
        || name == "CARGO_PRIMARY_PACKAGE"
}

/// The root of the workspace `cargo xtask` works on: the nearest directory holding a
/// `Cargo.toml` with a `[workspace]` table, looking upwards from the running package's
/// directory (`CARGO_MANIFEST_DIR`, which `cargo run` sets: `cargo xtask` runs the
/// workspace's own `xtask` package), or else from the current directory.
///
/// It is found at run time, not from where this crate was built: a project made by
/// `cargo xtask init` links this crate from another directory.
///
/// # Panics
/// When no such directory exists: `cargo xtask` only makes sense inside a workspace.
pub fn workspace_root() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    find_workspace_root(&start).unwrap_or_else(|| {
        panic!(
            "cargo xtask runs inside a Cargo workspace, but no Cargo.toml with a [workspace] \
             table is at or above {}",
            start.display()
        )
    })
}

/// The nearest directory at or above `dir` whose `Cargo.toml` declares a workspace.
fn find_workspace_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|manifest| manifest.lines().any(|line| line.trim() == "[workspace]"))
        })
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_root_is_the_nearest_workspace_manifest_upwards() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("xtask/src")).unwrap();
        std::fs::write(
            root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"xtask\"]\n",
        )
        .unwrap();
        std::fs::write(
            root.join("xtask/Cargo.toml"),
            "[package]\nname = \"xtask\"\n",
        )
        .unwrap();
        assert_eq!(
            find_workspace_root(&root.join("xtask/src")),
            Some(root.clone())
        );
        assert_eq!(find_workspace_root(&root), Some(root.clone()));
    }

    #[test]
    fn nested_cargo_commands_keep_cargos_settings_but_not_the_packages_variables() {
        for name in [
            "CARGO_PKG_NAME",
            "CARGO_MANIFEST_DIR",
            "CARGO_MANIFEST_PATH",
            "CARGO_CRATE_NAME",
            "CARGO_BIN_NAME",
            "CARGO_PRIMARY_PACKAGE",
        ] {
            assert!(set_for_the_package(name), "{name}");
        }
        for name in [
            "CARGO_NET_OFFLINE",
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "CARGO_REGISTRIES_CRATES_IO_PROTOCOL",
        ] {
            assert!(!set_for_the_package(name), "{name}");
        }
    }

    #[test]
    fn a_package_manifest_alone_is_no_workspace_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"lonely\"\n",
        )
        .unwrap();
        assert_eq!(find_workspace_root(dir.path()), None);
    }
}
