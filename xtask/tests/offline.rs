//! `cargo xtask --offline …`: every cargo command xtask runs is offline, since `cargo
//! --offline xtask …` cannot say so to it.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

/// A `cargo` that writes down the network setting it was given and fails, so that
/// `manifests --build` stops right after it.
fn recording_cargo(dir: &std::path::Path) -> std::path::PathBuf {
    let cargo = dir.join("cargo");
    let record = dir.join("offline");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\nprintf '%s' \"$CARGO_NET_OFFLINE\" > {}\nexit 1\n",
            record.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    cargo
}

fn inner_cargo_offline(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .env("CARGO", recording_cargo(dir.path()))
        .env_remove("CARGO_NET_OFFLINE")
        .status()
        .unwrap();
    assert!(!status.success(), "the recording cargo fails the build");
    std::fs::read_to_string(dir.path().join("offline")).unwrap()
}

#[test]
fn the_cargo_commands_of_xtask_offline_are_offline() {
    assert_eq!(
        inner_cargo_offline(&["--offline", "manifests", "--build"]),
        "true"
    );
    // A global option: after the command as well.
    assert_eq!(
        inner_cargo_offline(&["manifests", "--build", "--offline"]),
        "true"
    );
    assert_eq!(inner_cargo_offline(&["manifests", "--build"]), "");
}
