//! `cargo xtask init` makes a project that builds and passes its own `cargo xtask test`
//! as it is, whose config/ renders as kustomize renders it, and to which every variant of
//! `create api` and `create webhook` adds code that builds lint-clean with current
//! manifests.
//!
//! Slow (it builds a new workspace; see `common` for how it shares the target directory):
//! `#[ignore]`d, and run by `cargo xtask test` in its last step.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use kubebuilder_cli::scaffold::init;

use common::{cargo_ok, kustomize, objects, scaffold, scratch_dir, set_version};

#[test]
#[ignore = "slow (builds a new workspace): `cargo xtask test` runs it in its last step"]
fn a_new_project_passes_its_own_tests_and_takes_every_scaffold() {
    let root = scratch_dir("init").join("fleet");
    init::run(&init::Args {
        dir: root.clone(),
        domain: "fleet.example.com".to_owned(),
        name: None,
    })
    .unwrap();
    set_version(&root, "0.1.0-scaffold-init");

    // Its own test command: fmt, clippy, manifests --check and its tests, on a control plane.
    cargo_ok(&root, &["xtask", "test"]);

    // Its config/ deploys from the start: the kustomize subset and kustomize agree on it.
    cargo_ok(&root, &["xtask", "build-installer"]);
    let ours = std::fs::read_to_string(root.join("dist/install.yaml")).unwrap();
    let output = Command::new(kustomize())
        .arg("build")
        .arg(root.join("config/default"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        objects(&ours),
        objects(&String::from_utf8(output.stdout).unwrap())
    );

    // Every option of the scaffolds, then the project's test command again: the code is
    // formatted and lint-clean, the manifests current, the scaffolded tests pass.
    for line in [
        "create api --group ship --version v1 --kind Frigate",
        "create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation",
        "create api --group ship --version v1 --kind Armada --namespaced=false --plural armadae",
        "create webhook --group ship --version v1 --kind Armada --programmatic-validation",
        "create api --group escort --version v2alpha1 --kind EscortShip --controller=false",
        "create webhook --group escort --version v2alpha1 --kind EscortShip --defaulting",
        "create api --group escort --version v2alpha1 --kind EscortShip --resource=false",
    ] {
        scaffold(&root, line);
    }
    cargo_ok(&root, &["xtask", "manifests"]);
    let tests = cargo_ok(&root, &["xtask", "test"]);
    for test in [
        "armada_controller",
        "escort_ship_controller",
        "frigate_controller",
    ] {
        assert!(
            tests.contains(&format!("tests/{test}.rs")),
            "{test} did not run:\n{tests}"
        );
    }
    let crds: Vec<String> = std::fs::read_dir(root.join("config/crd/bases"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        crds,
        [
            "escort.fleet.example.com_escortships.yaml",
            "ship.fleet.example.com_armadae.yaml",
            "ship.fleet.example.com_frigates.yaml",
        ]
    );
}
