//! `cargo kubebuilder` builds what its commands run and nothing that only a project's `cargo
//! xtask` or its API types use: its cold install takes a few minutes where kube's
//! client stack, the control-plane harness, the runtime and a schema for every Kubernetes
//! type would take several more.

use std::collections::BTreeSet;

/// What the scaffolds do not run: kubebuilder-cli's `xtask` feature brings all but the
/// last, the kubebuilder crate's `schemars` feature the last (with k8s-openapi's schemas).
const NOT_RUN: &[&str] = &[
    "hyper",
    "kube",
    "kube-client",
    "kubebuilder-envtest",
    "kubebuilder-runtime",
    "rustls",
    "tokio",
    "schemars",
];

#[test]
fn the_cli_builds_neither_the_client_stack_nor_the_harness_nor_the_kubernetes_schemas() {
    // Built and linked (normal and build dependencies), from the lock file alone.
    let output = kubebuilder_cli::cargo()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--locked",
            "--offline",
            "--package",
            "cargo-kubebuilder",
            "--edges",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .output()
        .expect("running cargo tree");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "cargo tree failed:\n{stderr}");
    let tree = String::from_utf8(output.stdout).unwrap();
    let packages: BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    // The tree is the CLI's: the scaffolds and the manifests' rendering are in it.
    for needed in ["kubebuilder-cli", "kubebuilder", "kubebuilder-attributes"] {
        assert!(packages.contains(needed), "{needed} is missing:\n{tree}");
    }
    let heavy: Vec<&&str> = NOT_RUN
        .iter()
        .filter(|name| packages.contains(**name))
        .collect();
    assert!(
        heavy.is_empty(),
        "cargo kubebuilder builds {heavy:?}:\n{tree}"
    );
}
