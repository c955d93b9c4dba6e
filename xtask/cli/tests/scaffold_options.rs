//! `init`'s options as far as files go, without building anything: `--namespaced`,
//! `--license`, `--owner`, and the files every project gets for CI and images. (Building
//! and testing a namespaced project: `scaffold_init.rs`.)

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use clap::Parser as _;
use kubebuilder_cli::scaffold::init;
use kubebuilder_cli::scaffold::project::Project;
use serde_json::Value;

use common::{init_project, repo_root, scaffold, snapshot};

fn read(root: &Path, path: &str) -> String {
    fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every Rust file of the project, with its text.
fn rust_files(root: &Path) -> Vec<(PathBuf, String)> {
    snapshot(root)
        .into_iter()
        .filter(|(path, _)| path.extension().is_some_and(|e| e == "rs"))
        .map(|(path, bytes)| (path, String::from_utf8(bytes).unwrap()))
        .collect()
}

/// Each role of the project's `config/rbac/role.yaml` that grants the runtime's Events
/// (events.k8s.io), as `Kind namespace/name`.
fn roles_granting_events(root: &Path) -> Vec<String> {
    let roles: Vec<Value> =
        serde_saphyr::from_multiple(&read(root, "config/rbac/role.yaml")).unwrap();
    roles
        .iter()
        .filter(|role| !role.is_null())
        .filter(|role| {
            role["rules"].as_array().unwrap().iter().any(|rule| {
                rule["apiGroups"] == serde_json::json!(["events.k8s.io"])
                    && rule["resources"] == serde_json::json!(["events"])
            })
        })
        .map(|role| {
            let metadata = &role["metadata"];
            let namespace = metadata["namespace"].as_str().unwrap_or_default();
            format!(
                "{} {namespace}/{}",
                role["kind"].as_str().unwrap(),
                metadata["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn this_year() -> i16 {
    jiff::Zoned::now().year()
}

#[test]
fn by_default_each_rust_file_has_an_apache_header_for_the_projects_authors() {
    let (_dir, root) = init_project("");
    let header = format!(
        "// Copyright {} The fleet Authors.\n// SPDX-License-Identifier: Apache-2.0\n\n",
        this_year()
    );
    assert_eq!(read(&root, init::BOILERPLATE), header);
    for (path, text) in rust_files(&root) {
        assert!(
            text.starts_with(&header),
            "{} has no header",
            path.display()
        );
    }
    assert!(read(&root, "Cargo.toml").contains("\nlicense = \"Apache-2.0\"\n"));

    // `create` puts the header on the files it makes or replaces (`--force`), and not
    // twice on those it edits.
    scaffold(&root, "create api --group ship --version v1 --kind Frigate");
    scaffold(
        &root,
        "create api --group ship --version v1 --kind Frigate --force",
    );
    for (path, text) in rust_files(&root) {
        assert!(
            text.starts_with(&header),
            "{} has no header",
            path.display()
        );
        assert_eq!(text.matches("SPDX").count(), 1, "{}", path.display());
    }
    // A file whose header was removed does not get it back when `create` edits it.
    let lib = root.join("controller/src/lib.rs");
    let without = fs::read_to_string(&lib).unwrap().replacen(&header, "", 1);
    fs::write(&lib, &without).unwrap();
    scaffold(&root, "create api --group ship --version v1 --kind Armada");
    assert!(!read(&root, "controller/src/lib.rs").contains("SPDX"));
}

#[test]
fn owner_names_the_copyright_holder_and_an_edited_boilerplate_is_what_create_uses() {
    let (_dir, root) = init_project("--owner Acme");
    let header = read(&root, init::BOILERPLATE);
    assert!(
        header.starts_with(&format!("// Copyright {} Acme.\n", this_year())),
        "{header}"
    );
    fs::write(root.join(init::BOILERPLATE), "// Acme proprietary.\n\n").unwrap();
    scaffold(&root, "create api --group ship --version v1 --kind Frigate");
    let types = read(&root, "api/src/v1/frigate_types.rs");
    assert!(types.starts_with("// Acme proprietary.\n\n//!"), "{types}");
}

#[test]
fn license_none_writes_no_header_and_no_license_field() {
    let (_dir, root) = init_project("--license none");
    assert!(!root.join(init::BOILERPLATE).exists());
    for (path, text) in rust_files(&root) {
        assert!(!text.contains("Copyright"), "{}", path.display());
    }
    for manifest in [
        "Cargo.toml",
        "api/Cargo.toml",
        "controller/Cargo.toml",
        "xtask/Cargo.toml",
        "xtask/declarations/Cargo.toml",
    ] {
        assert!(!read(&root, manifest).contains("license"), "{manifest}");
    }
}

#[test]
fn a_bad_license_is_refused_by_the_command_line() {
    let error = kubebuilder_cli::Cli::try_parse_from(
        "xtask init x --domain example.com --license mit".split(' '),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        error.contains("invalid value 'mit' for '--license <LICENSE>'"),
        "{error}"
    );
}

#[test]
fn namespaced_grants_and_watches_the_managers_namespace_only() {
    let (_dir, root) = init_project("--namespaced");
    assert!(Project::parse(&read(&root, "PROJECT")).unwrap().namespaced);
    let binding = read(&root, "config/rbac/role_binding.yaml");
    assert!(binding.contains("kind: RoleBinding\n"), "{binding}");
    assert!(
        binding.contains("  kind: Role\n  name: manager-role\n"),
        "{binding}"
    );
    let manager = read(&root, "config/manager/manager.yaml");
    for line in [
        "        - name: WATCH_NAMESPACE\n",
        "              fieldPath: metadata.namespace\n",
        "        - --namespace=$(WATCH_NAMESPACE)\n",
    ] {
        assert!(manager.contains(line), "{line} missing from:\n{manager}");
    }

    // The runtime's own rules are in the Role that binding binds, from the start.
    assert_eq!(
        roles_granting_events(&root),
        ["Role fleet-system/manager-role"]
    );

    // The reconciler's rules are scoped to that namespace, so `manifests` makes a Role.
    scaffold(&root, "create api --group ship --version v1 --kind Frigate");
    let reconciler = read(&root, "controller/src/frigate/reconciler.rs");
    assert_eq!(
        reconciler.matches("namespace = \"fleet-system\",").count(),
        3,
        "{reconciler}"
    );
    // A cluster-scoped kind can only be granted by a ClusterRole.
    scaffold(
        &root,
        "create api --group ship --version v1 --kind Armada --namespaced=false",
    );
    let reconciler = read(&root, "controller/src/armada/reconciler.rs");
    assert!(!reconciler.contains("namespace = "), "{reconciler}");
    // Its ClusterRole leaves the runtime's rules in the Role.
    assert_eq!(
        roles_granting_events(&root),
        ["Role fleet-system/manager-role"]
    );
}

#[test]
fn a_cluster_wide_project_grants_the_runtimes_rules_in_its_cluster_role() {
    let (_dir, root) = init_project("");
    assert_eq!(roles_granting_events(&root), ["ClusterRole /manager-role"]);
}

#[test]
fn every_project_gets_a_dockerfile_and_ci_workflows_running_its_tests() {
    let (_dir, root) = init_project("");
    assert_eq!(read(&root, "Dockerfile"), read(&repo_root(), "Dockerfile"));
    for (workflow, command) in [
        (".github/workflows/test.yml", "cargo xtask test"),
        (".github/workflows/test-e2e.yml", "xtask test-e2e"),
    ] {
        let parsed: Value = serde_saphyr::from_str(&read(&root, workflow)).unwrap();
        let steps = parsed["jobs"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|job| job["steps"].as_array().unwrap().clone())
            .collect::<Vec<_>>();
        let runs: Vec<&str> = steps
            .iter()
            .filter_map(|step| step["run"].as_str())
            .collect();
        assert!(
            runs.iter().any(|run| run.contains(command)),
            "{workflow} does not run {command}: {runs:?}"
        );
        assert!(
            steps
                .iter()
                .any(|step| step["with"]["go-version"].as_str() == Some("1.26")),
            "{workflow} installs no Go 1.26"
        );
    }
}
