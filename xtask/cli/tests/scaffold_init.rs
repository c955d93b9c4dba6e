//! `cargo kubebuilder init`, with the CLI installed as a user installs it, makes a project
//! that builds and passes its own `cargo xtask test` as it is, whose config/ renders as
//! kustomize renders it, and to which every variant of `create api` and `create webhook`
//! (the deploy-image plugin's Getting Started operator among them) adds code that builds
//! lint-clean with current manifests and passes its own tests.
//!
//! Slow (it builds a new workspace; see `common` for how it shares the target directory):
//! `#[ignore]`d, and run by `cargo xtask test` in its last step.

mod common;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use common::{
    artifacts_dir, cargo, cargo_ok, kustomize, objects, repo_root, scaffold, scratch_dir,
    set_version,
};

/// `cargo install --path xtask/cargo-kubebuilder --root <root>`, from this repository's lock
/// and with this build's build directory: the `cargo kubebuilder` a user installs. The
/// `PATH` under which cargo finds it.
fn install_cargo_kubebuilder(root: &Path) -> OsString {
    let root_arg = root.to_str().unwrap();
    cargo_ok(
        &repo_root(),
        &[
            "install",
            "--locked",
            "--debug",
            "--path",
            "xtask/cargo-kubebuilder",
            "--root",
            root_arg,
            // Its binary is this test's alone (the build directory is shared).
            "--target-dir",
            artifacts_dir(root).to_str().unwrap(),
        ],
    );
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(root.join("bin")).chain(std::env::split_paths(&path)))
        .unwrap()
}

/// `cargo kubebuilder <args>` in `dir`, found on `path`, which must succeed.
fn cargo_kubebuilder(dir: &Path, path: &OsString, args: &[&str]) {
    let output = cargo(
        dir,
        &[&["kubebuilder"], args].concat(),
        &[("PATH", path.as_os_str())],
    );
    assert!(
        output.status.success(),
        "cargo kubebuilder {} failed ({}):\n{}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The project's `cargo xtask build-installer` output, which must hold the objects real
/// kustomize renders from its config/default: they are returned, as canonical JSON.
fn installed_objects_as_kustomize_renders_them(root: &Path) -> BTreeSet<String> {
    cargo_ok(root, &["xtask", "build-installer"]);
    let ours = objects(&std::fs::read_to_string(root.join("dist/install.yaml")).unwrap());
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
    assert_eq!(ours, objects(&String::from_utf8(output.stdout).unwrap()));
    ours
}

/// The manager as its project builds it: the runtime's features, unified over the whole
/// workspace (the xtask crate and the tests' helpers included, as `cargo build` does),
/// bring no test helper into it; and its binary, built as `cargo xtask run` builds it,
/// holds no fault-injection hook.
fn manager_holds_no_test_helper_and_no_crash_hook(root: &Path) {
    let args = [
        "tree",
        "--workspace",
        "-e",
        "features",
        "-i",
        "kubebuilder-runtime",
    ];
    let tree = cargo(root, &args, &[]);
    assert!(tree.status.success(), "{tree:?}");
    let tree = String::from_utf8(tree.stdout).unwrap();
    assert!(tree.contains("controller feature"), "{tree}");
    assert!(!tree.contains("test-util"), "{tree}");
    cargo_ok(
        root,
        &["build", "--package", "controller", "--bin", "controller"],
    );
    let manager = std::fs::read(artifacts_dir(root).join("debug/controller")).unwrap();
    let hook = b"KUBEBUILDER_CRASH_AFTER";
    assert!(
        !manager.windows(hook.len()).any(|window| window == hook),
        "the manager binary holds the crash hook"
    );
}

#[test]
#[ignore = "slow (builds a new workspace): `cargo xtask test` runs it in its last step"]
fn a_new_project_passes_its_own_tests_and_takes_every_scaffold() {
    let scratch = scratch_dir("init");
    let path = install_cargo_kubebuilder(&scratch.join("cargo-root"));
    let repo = repo_root();
    cargo_kubebuilder(
        &scratch,
        &path,
        &[
            "init",
            "fleet",
            "--domain",
            "fleet.example.com",
            "--owner",
            "The Fleet Team",
            "--local",
            repo.to_str().unwrap(),
        ],
    );
    let root = scratch.join("fleet");
    set_version(&root, "0.1.0-scaffold-init");
    let main = std::fs::read_to_string(root.join("controller/src/main.rs")).unwrap();
    assert!(main.contains(" The Fleet Team.\n// SPDX-License-Identifier: Apache-2.0\n"));

    // Its own test command: fmt, clippy, manifests --check and its tests, on a control plane.
    cargo_ok(&root, &["xtask", "test"]);
    manager_holds_no_test_helper_and_no_crash_hook(&root);

    // Its config/ deploys from the start: the kustomize subset and kustomize agree on it.
    installed_objects_as_kustomize_renders_them(&root);

    // A kind and its webhooks with the installed CLI (which regenerates the manifests),
    // every other option of the scaffolds, then the project's test command again: the
    // code is formatted and lint-clean, the manifests current, the scaffolded tests pass.
    for line in [
        "create api --group ship --version v1 --kind Frigate",
        "create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation",
        // kubebuilder's Getting Started operator: the deploy-image plugin's controller.
        "create api --group cache --version v1alpha1 --kind Memcached \
         --image memcached:1.6.26-alpine3.19 --image-container-command \
         memcached,--memory-limit=64,-o,modern,-v --image-container-port 11211 \
         --run-as-user 1001 --plugins deploy-image/v1-alpha",
        // Its kind has no example field: webhooks with TODOs, tested with its sample.
        "create webhook --group cache --version v1alpha1 --kind Memcached --defaulting \
         --programmatic-validation",
    ] {
        cargo_kubebuilder(&root, &path, &line.split_whitespace().collect::<Vec<_>>());
    }
    for line in [
        "create api --group ship --version v1 --kind Armada --namespaced=false --plural armadae",
        "create webhook --group ship --version v1 --kind Armada --programmatic-validation",
        "create api --group escort --version v2alpha1 --kind EscortShip --controller=false",
        "create webhook --group escort --version v2alpha1 --kind EscortShip --defaulting",
        "create api --group escort --version v2alpha1 --kind EscortShip --resource=false",
        "create api --group apps --version v1 --kind Deployment --resource=false",
        "create api --group rbac.authorization --version v1 --kind ClusterRole --resource=false",
        "create api --group coordination --version v1 --kind Lease --resource=false --external-api-path k8s_openapi::api::coordination::v1 --external-api-domain k8s.io",
    ] {
        scaffold(&root, line);
    }
    // Another project's kind from its CRD (external-secrets' ExternalSecret): its types as a
    // crate of the workspace, a controller for it; its CRD is not this project's to write.
    let external_secrets = common::go_module_source(common::EXTERNAL_SECRETS)
        .join("config/crds/bases/external-secrets.io_externalsecrets.yaml");
    cargo_kubebuilder(
        &root,
        &path,
        &[
            "import",
            "crd",
            external_secrets.to_str().unwrap(),
            "external-secrets-api",
            "--external",
        ],
    );
    scaffold(
        &root,
        "create api --group external-secrets --version v1 --kind ExternalSecret \
         --resource=false --external-api-path external_secrets_api::v1 \
         --external-api-domain io",
    );
    // Read from the sources, every scaffold's construct; the project's `xtask test` then
    // checks them against a build of its declarations binary.
    let manifests = cargo_ok(&root, &["xtask", "manifests"]);
    assert!(
        !manifests.contains("building the declarations"),
        "{manifests}"
    );
    let tests = cargo_ok(&root, &["xtask", "test"]);
    for test in [
        "armada_controller",
        "escort_ship_controller",
        "external_secret_controller",
        "frigate_controller",
        "memcached_controller",
        "memcached_webhook",
    ] {
        // The command passed, so every job it started passed.
        assert!(
            tests.contains(&format!("xtask: started controller --test {test}\n")),
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
            "cache.fleet.example.com_memcacheds.yaml",
            "escort.fleet.example.com_escortships.yaml",
            "ship.fleet.example.com_armadae.yaml",
            "ship.fleet.example.com_frigates.yaml",
        ]
    );
    // The Memcached's image reaches the deployed manager, through config/manager.
    let installed = installed_objects_as_kustomize_renders_them(&root);
    let manager: serde_json::Value = installed
        .iter()
        .map(|object| serde_json::from_str(object).unwrap())
        .find(|object: &serde_json::Value| object["kind"] == "Deployment")
        .expect("the manager's Deployment");
    let env = &manager["spec"]["template"]["spec"]["containers"][0]["env"];
    assert!(
        env.as_array().unwrap().contains(&serde_json::json!(
            {"name": "MEMCACHED_IMAGE", "value": "memcached:1.6.26-alpine3.19"}
        )),
        "{env}"
    );
}

#[test]
#[ignore = "slow (builds a new workspace): `cargo xtask test` runs it in its last step"]
fn a_namespaced_multigroup_project_without_license_passes_its_own_tests_and_deploys_as_kustomize_renders()
 {
    let scratch = scratch_dir("init-namespaced");
    let path = install_cargo_kubebuilder(&scratch.join("cargo-root"));
    let repo = repo_root();
    cargo_kubebuilder(
        &scratch,
        &path,
        &[
            "init",
            "fleet",
            "--domain",
            "fleet.example.com",
            "--namespaced",
            "--license",
            "none",
            "--local",
            repo.to_str().unwrap(),
        ],
    );
    let root = scratch.join("fleet");
    set_version(&root, "0.1.0-scaffold-namespaced");
    cargo_kubebuilder(
        &root,
        &path,
        &[
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
        ],
    );
    // The same kind in another group, in the multigroup layout (the first Frigate stays
    // flat), with webhooks; the CLI regenerates the manifests each time.
    cargo_kubebuilder(&root, &path, &["edit", "--multigroup"]);
    for line in [
        "create api --group sea --version v1 --kind Frigate",
        "create webhook --group sea --version v1 --kind Frigate --defaulting --programmatic-validation",
    ] {
        cargo_kubebuilder(&root, &path, &line.split_whitespace().collect::<Vec<_>>());
    }
    let tests = cargo_ok(&root, &["xtask", "test"]);
    for test in [
        "frigate_controller",
        "sea_frigate_controller",
        "sea_frigate_webhook",
    ] {
        // The command passed, so every job it started passed.
        assert!(
            tests.contains(&format!("xtask: started controller --test {test}\n")),
            "{test} did not run:\n{tests}"
        );
    }
    let crds: BTreeSet<String> = std::fs::read_dir(root.join("config/crd/bases"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        crds,
        BTreeSet::from([
            "sea.fleet.example.com_frigates.yaml".to_owned(),
            "ship.fleet.example.com_frigates.yaml".to_owned(),
        ])
    );

    let ours = installed_objects_as_kustomize_renders_them(&root);
    // The manager's rules: a Role in its namespace, bound there; no ClusterRole of them.
    let parsed: Vec<serde_json::Value> = ours
        .iter()
        .map(|object| serde_json::from_str(object).unwrap())
        .collect();
    let find = |kind: &str, name: &str| {
        parsed
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .cloned()
    };
    let role = find("Role", "fleet-manager-role").expect("the manager's Role");
    assert_eq!(role["metadata"]["namespace"], "fleet-system");
    assert!(find("ClusterRole", "fleet-manager-role").is_none());
    let binding = find("RoleBinding", "fleet-manager-rolebinding").expect("its RoleBinding");
    assert_eq!(binding["roleRef"]["name"], "fleet-manager-role");
    let manager = find("Deployment", "fleet-controller-manager").expect("the manager");
    let args = &manager["spec"]["template"]["spec"]["containers"][0]["args"];
    assert!(
        args.as_array()
            .unwrap()
            .contains(&serde_json::json!("--namespace=$(WATCH_NAMESPACE)")),
        "{args}"
    );
}
