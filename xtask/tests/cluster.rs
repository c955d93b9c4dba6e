//! `cargo xtask install|uninstall|deploy|undeploy` against a real control plane, run as a
//! user runs them (the xtask binary with `KUBECONFIG` pointing at the control plane).
//!
//! The control plane has no kube-controller-manager: nothing runs the manager's pods (so
//! `deploy` runs with `--no-wait`; the local node's e2e tests wait for the rollout), and a
//! deleted namespace stays `Terminating` for ever (emptying and removing it is the namespace
//! controller's job), so for the namespace "gone" means Terminating here.

use std::path::Path;
use std::process::{Command, Output};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject};
use kube::core::GroupVersionKind;
use kubebuilder_envtest::ControlPlane;
use serde_json::{Value, json};

const CRD: &str =
    "customresourcedefinition.apiextensions.k8s.io/cronjobs.batch.tutorial.kubebuilder.io";

fn xtask(kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .output()
        .expect("running cargo xtask")
}

/// The progress lines of a successful run.
fn succeeded(output: Output) -> Vec<String> {
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "cargo xtask failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout.lines().map(str::to_owned).collect()
}

/// Everything `deploy` applies, as `build-installer` renders it.
fn deployed_objects(image: &str) -> Vec<Value> {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("install.yaml");
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["build-installer", "--image", image, "--output"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success());
    serde_saphyr::from_multiple::<Value>(&std::fs::read_to_string(file).unwrap())
        .unwrap()
        .into_iter()
        .filter(|object| !object.is_null())
        .collect()
}

/// `kind.group/name` as the progress lines name objects.
fn display(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap().to_lowercase();
    let name = object["metadata"]["name"].as_str().unwrap();
    match object["apiVersion"].as_str().unwrap().rsplit_once('/') {
        Some((group, _)) => format!("{kind}.{group}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

/// The object as the apiserver has it now, if it exists.
async fn get(client: &kube::Client, object: &Value) -> Option<DynamicObject> {
    let api_version = object["apiVersion"].as_str().unwrap();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, object["kind"].as_str().unwrap());
    let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk).await.ok()?;
    let name = object["metadata"]["name"].as_str().unwrap();
    let api: Api<DynamicObject> = match capabilities.scope {
        kube::discovery::Scope::Cluster => Api::all_with(client.clone(), &resource),
        kube::discovery::Scope::Namespaced => Api::namespaced_with(
            client.clone(),
            object["metadata"]["namespace"].as_str().unwrap(),
            &resource,
        ),
    };
    api.get_opt(name).await.unwrap()
}

/// cert-manager's Issuer and Certificate kinds, which config/default uses; their real
/// CRDs come with cert-manager, which a cluster needs before `deploy` (as with kubebuilder).
fn cert_manager_crds() -> Vec<CustomResourceDefinition> {
    ["Issuer", "Certificate"]
        .iter()
        .map(|kind| {
            let plural = format!("{}s", kind.to_lowercase());
            serde_json::from_value(json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("{plural}.cert-manager.io")},
                "spec": {
                    "group": "cert-manager.io",
                    "names": {"kind": kind, "plural": plural},
                    "scope": "Namespaced",
                    "versions": [{
                        "name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
                    }]
                }
            }))
            .unwrap()
        })
        .collect()
}

#[test]
fn install_deploy_redeploy_undeploy_uninstall() {
    let plane: &ControlPlane = kubebuilder_envtest::shared();
    let kubeconfig = plane.kubeconfig_path();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = runtime.block_on(plane.client()).unwrap();
    runtime
        .block_on(plane.install_crds(&cert_manager_crds()))
        .unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());

    // install / uninstall: the CRDs only.
    assert_eq!(
        succeeded(xtask(kubeconfig, &["install"])),
        [format!("{CRD} created")]
    );
    let crd = runtime
        .block_on(crds.get("cronjobs.batch.tutorial.kubebuilder.io"))
        .unwrap();
    let established = crd.status.and_then(|s| s.conditions).unwrap_or_default();
    assert!(
        established
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    );
    assert_eq!(
        succeeded(xtask(kubeconfig, &["install"])),
        [format!("{CRD} unchanged")]
    );
    assert_eq!(
        succeeded(xtask(kubeconfig, &["uninstall"])),
        [format!("{CRD} deleted")]
    );
    assert!(
        runtime
            .block_on(crds.get_opt("cronjobs.batch.tutorial.kubebuilder.io"))
            .unwrap()
            .is_none()
    );

    // deploy: every object of config/default, created, with the image asked for.
    let image = "registry.example.com/cronjob-manager:v0.1.0";
    let objects = deployed_objects(image);
    let lines = succeeded(xtask(
        kubeconfig,
        &["deploy", "--no-wait", "--image", image],
    ));
    let expected: Vec<String> = objects
        .iter()
        .map(|o| format!("{} created", display(o)))
        .collect();
    let (mut sorted_lines, mut sorted_expected) = (lines.clone(), expected.clone());
    sorted_lines.sort();
    sorted_expected.sort();
    assert_eq!(sorted_lines, sorted_expected);
    assert_eq!(lines[0], format!("{CRD} created"), "CRDs go first");
    runtime.block_on(async {
        for object in &objects {
            assert!(
                get(&client, object).await.is_some(),
                "{} missing",
                display(object)
            );
        }
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), "project-system");
        let manager = deployments.get("project-controller-manager").await.unwrap();
        let containers = manager.spec.template.spec.unwrap().containers;
        assert_eq!(containers[0].image.as_deref(), Some(image));
    });

    // deploy again: nothing to write.
    let lines = succeeded(xtask(
        kubeconfig,
        &["deploy", "--no-wait", "--image", image],
    ));
    assert_eq!(lines.len(), objects.len());
    for line in &lines {
        assert!(
            line.ends_with(" unchanged"),
            "second deploy changed something: {line}"
        );
    }

    // deploy with another image: the Deployment alone changes.
    let lines = succeeded(xtask(
        kubeconfig,
        &[
            "deploy",
            "--no-wait",
            "--image",
            "registry.example.com/cronjob-manager:v0.2.0",
        ],
    ));
    for line in &lines {
        let expected = if line.starts_with("deployment.apps/project-controller-manager ") {
            " configured"
        } else {
            " unchanged"
        };
        assert!(line.ends_with(expected), "{line}");
    }

    // undeploy: everything gone (the namespace Terminating).
    let lines = succeeded(xtask(kubeconfig, &["undeploy"]));
    assert_eq!(lines.len(), objects.len());
    assert_eq!(
        lines.last().unwrap(),
        "namespace/project-system deleted (Terminating)",
        "the namespace goes last"
    );
    runtime.block_on(async {
        for object in &objects {
            let remaining = get(&client, object).await;
            if object["kind"] == "Namespace" {
                let namespaces: Api<Namespace> = Api::all(client.clone());
                let namespace = namespaces.get("project-system").await.unwrap();
                assert_eq!(
                    namespace.status.unwrap().phase.as_deref(),
                    Some("Terminating")
                );
            } else {
                assert!(remaining.is_none(), "{} still present", display(object));
            }
        }
    });

    // uninstall after undeploy: the CRD is already gone.
    assert_eq!(
        succeeded(xtask(kubeconfig, &["uninstall"])),
        [format!("{CRD} not found")]
    );
}

#[test]
fn an_unreachable_cluster_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: nowhere\n  cluster:\n    server: https://127.0.0.1:9\n\
         contexts:\n- name: nowhere\n  context:\n    cluster: nowhere\n    user: nobody\n\
         current-context: nowhere\nusers:\n- name: nobody\n  user:\n    token: none\n",
    )
    .unwrap();
    for command in ["install", "deploy", "undeploy"] {
        let output = xtask(&kubeconfig, &[command]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success(),
            "{command} succeeded without a cluster"
        );
        assert!(
            stderr.contains("cannot reach the cluster at https://127.0.0.1:9"),
            "{command}: {stderr}"
        );
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn a_refused_object_fails_the_deploy_after_the_others_are_applied() {
    let plane = kubebuilder_envtest::shared();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cluster/refused");
    let output = xtask(
        plane.kubeconfig_path(),
        &["deploy", "--dir", fixture.to_str().unwrap()],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stdout.contains("namespace/xtask-refused created"),
        "{stdout}"
    );
    assert!(stdout.contains("configmap/accepted created"), "{stdout}");
    assert!(
        stderr.contains("configmap/refused: refused (422 Invalid)")
            && stderr.contains("not a valid key!"),
        "{stderr}"
    );
}

#[test]
fn a_kind_the_cluster_lacks_is_named_before_anything_is_applied() {
    // A control plane of its own: the shared one may have cert-manager's CRDs by now.
    let plane = ControlPlane::start().unwrap();
    let output = xtask(plane.kubeconfig_path(), &["deploy", "--no-wait"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        output.stdout.is_empty(),
        "something was applied: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(stderr.contains("nothing was applied"), "{stderr}");
    for kind in [
        "cert-manager.io/v1 Issuer",
        "cert-manager.io/v1 Certificate",
    ] {
        assert!(stderr.contains(kind), "{kind} not named: {stderr}");
    }
    assert!(stderr.contains("install cert-manager"), "{stderr}");
    assert!(
        stderr.contains("cargo xtask cluster up --cert-manager"),
        "{stderr}"
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = plane.client().await.unwrap();
        let namespaces: Api<Namespace> = Api::all(client.clone());
        assert!(
            namespaces
                .get_opt("project-system")
                .await
                .unwrap()
                .is_none()
        );
        let crds: Api<CustomResourceDefinition> = Api::all(client);
        assert!(
            crds.get_opt("cronjobs.batch.tutorial.kubebuilder.io")
                .await
                .unwrap()
                .is_none()
        );
    });
}
