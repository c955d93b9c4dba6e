//! End to end, kubebuilder's Getting Started: the Memcached operator, scaffolded with the
//! deploy-image plugin into a new project, built into an image, deployed on the local node
//! as its generated ServiceAccount, and checked through the API: memcached pods Ready at
//! `size`, a resize, and on deletion the finalizer's cleanup and the garbage collector's.
//!
//! Run by `cargo xtask test-e2e` (which starts the node and sets `KUBECONFIG` and `XTASK`,
//! the `cargo xtask` binary). The project's commands are that binary run in the project:
//! the project's own `xtask` is the same library behind a three-line `main`, and building
//! it would only cost minutes. memcached is a busybox stand-in under memcached's name,
//! loaded with `cluster load`: nothing is pulled.

#![cfg(feature = "e2e")]

mod common;

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, LogParams};
use kube::api::{Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::{Client, ResourceExt as _};
use kubebuilder_envtest::image::Image;
use kubebuilder_envtest::node;
use serde_json::json;

use common::{artifacts_dir, repo_root, scratch_dir, set_version};

/// The Getting Started's `create api`, in this CLI's spelling.
const GETTING_STARTED: &str = "create api --group cache --version v1alpha1 --kind Memcached \
     --image memcached:1.6.26-alpine3.19 --image-container-command \
     memcached,--memory-limit=64,-o,modern,-v --image-container-port 11211 --run-as-user 1001 \
     --plugins deploy-image/v1-alpha";
/// The operand's image, as the Getting Started names it; here, the stand-in.
const MEMCACHED_IMAGE: &str = "memcached:1.6.26-alpine3.19";
/// The operator's image.
const IMAGE: &str = "example.com/memcached-operator:v0.0.1";
/// Where config/default puts the manager, and its names there.
const NAMESPACE: &str = "memcached-operator-system";
const SERVICE_ACCOUNT: &str = "memcached-operator-controller-manager";
/// How long the node may take to start or stop pods, and the manager to react.
const TIMEOUT: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread")]
async fn the_getting_started_operator_runs_memcached_and_cleans_up_after_it() {
    let project = scaffolded_project();
    xtask(&project, &["docker-build", "--image", IMAGE]);
    xtask(&project, &["cluster", "load", IMAGE]);
    let stand_in = stand_in_archive(&project);
    xtask(&project, &["cluster", "load", stand_in.to_str().unwrap()]);
    xtask(&project, &["deploy", "--image", IMAGE]);

    let client = node::running().unwrap().client().await.unwrap();
    let namespace = node::running()
        .unwrap()
        .create_namespace("memcached")
        .await
        .unwrap();
    let memcacheds: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &namespace, &memcached_resource());
    memcacheds
        .create(&PostParams::default(), &memcached("cache", 1))
        .await
        .unwrap();
    let pods = ready_pods(&client, &namespace, 1).await;
    the_operand_runs_as_asked(&pods);

    let resize = json!({"spec": {"size": 3}});
    memcacheds
        .patch("cache", &PatchParams::default(), &Patch::Merge(resize))
        .await
        .unwrap();
    ready_pods(&client, &namespace, 3).await;
    available_after_a_reconcile(&client, &namespace, &memcacheds).await;

    memcacheds
        .delete("cache", &DeleteParams::default())
        .await
        .unwrap();
    everything_goes(&client, &namespace, &memcacheds).await;
    the_manager_ran_as_its_service_account_with_nothing_forbidden(&client).await;
    xtask(&project, &["undeploy"]);
}

/// `init` and the Getting Started's `create api`, in `<target>/scaffold-tests/e2e`; the
/// project's root. Its packages get a version of their own ([`set_version`]) and its lock
/// follows, since `docker-build` builds `--locked`.
fn scaffolded_project() -> PathBuf {
    let scratch = scratch_dir("e2e");
    let root = scratch.join("memcached-operator");
    let repo = repo_root();
    xtask(
        &scratch,
        &[
            "init",
            root.to_str().unwrap(),
            "--domain",
            "example.com",
            "--local",
            repo.to_str().unwrap(),
        ],
    );
    set_version(&root, "0.1.0-e2e");
    common::cargo_ok(&root, &["update", "--workspace", "--offline"]);
    xtask(
        &root,
        &GETTING_STARTED.split_whitespace().collect::<Vec<_>>(),
    );
    root
}

/// Runs `cargo xtask <args>` in `dir`, which must succeed: the binary `test-e2e` runs as,
/// with this build's build directory (the release dependencies of the repository's own
/// image are built already) and the project's binaries in its `target`.
fn xtask(dir: &Path, args: &[&str]) {
    let binary = std::env::var_os("XTASK").expect("XTASK is not set: run `cargo xtask test-e2e`");
    let output = Command::new(binary)
        .current_dir(dir)
        .args(args)
        // The project is the workspace `cargo xtask` works in, not this package.
        .env_remove("CARGO_MANIFEST_DIR")
        .env("CARGO_BUILD_BUILD_DIR", common::target_dir())
        .env("CARGO_TARGET_DIR", artifacts_dir(dir))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo xtask {} failed ({}):\n{}\n{}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// memcached's stand-in: busybox under memcached's name, whose `memcached` echoes what it
/// is sent on port 11211 (and ignores memcached's options). Its OCI archive.
fn stand_in_archive(project: &Path) -> PathBuf {
    let mut image = Image::new();
    image.busybox(&["sh", "nc", "cat"]).unwrap();
    let script = "#!/bin/sh\n# memcached's stand-in: echoes on memcached's port.\n\
                  exec nc -ll -p 11211 -e cat\n";
    image.file("/bin/memcached", 0o755, script);
    image.env = vec!["PATH=/bin".into()];
    let archive = project.join("target/memcached-stand-in.tar");
    image.write_archive(MEMCACHED_IMAGE, &archive).unwrap();
    archive
}

fn memcached_resource() -> ApiResource {
    let gvk = GroupVersionKind::gvk("cache.example.com", "v1alpha1", "Memcached");
    ApiResource::from_gvk_with_plural(&gvk, "memcacheds")
}

/// A Memcached named `name` of `size` pods.
fn memcached(name: &str, size: i32) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": name},
        "spec": {"size": size, "containerPort": 11211},
    }))
    .unwrap()
}

/// Polls `check` every 500 ms until it gives `Some`; after [`TIMEOUT`] the test fails with
/// `what` and the manager's log.
async fn wait_for<T>(client: &Client, what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if Instant::now() > deadline {
            panic!(
                "timed out after {TIMEOUT:?} waiting for {what}\n{}",
                manager_log(client).await
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The operand's pods in `namespace` once exactly `size` of them exist, all Ready.
async fn ready_pods(client: &Client, namespace: &str, size: usize) -> Vec<Pod> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let what = format!("{size} Ready memcached pods");
    wait_for(client, &what, async || {
        let list = pods.list(&ListParams::default()).await.ok()?.items;
        let running: Vec<Pod> = list
            .into_iter()
            .filter(|pod| pod.metadata.deletion_timestamp.is_none())
            .collect();
        (running.len() == size && running.iter().all(is_ready)).then_some(running)
    })
    .await
}

fn is_ready(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The pods run the image, command and user `create api` was given, under the restricted
/// security context, and the stand-in answers on the port.
fn the_operand_runs_as_asked(pods: &[Pod]) {
    let pod = &pods[0];
    let spec = pod.spec.as_ref().unwrap();
    let container = &spec.containers[0];
    assert_eq!(container.image.as_deref(), Some(MEMCACHED_IMAGE));
    assert_eq!(
        container.command.as_deref().unwrap(),
        ["memcached", "--memory-limit=64", "-o", "modern", "-v"]
    );
    let security = container.security_context.as_ref().unwrap();
    assert_eq!(security.run_as_user, Some(1001));
    assert_eq!(security.allow_privilege_escalation, Some(false));
    let ip = pod.status.as_ref().unwrap().pod_ip.as_deref().unwrap();
    let address = SocketAddr::new(ip.parse().unwrap(), 11211);
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(10)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(b"stats\r\n").unwrap();
    let mut answer = [0; 7];
    stream.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"stats\r\n");
}

/// The Memcached's `Available` condition is True, and a Normal Event said so.
async fn available_after_a_reconcile(
    client: &Client,
    namespace: &str,
    memcacheds: &Api<DynamicObject>,
) {
    wait_for(client, "the Memcached to be Available", async || {
        let memcached = memcacheds.get("cache").await.ok()?;
        let conditions = memcached.data["status"]["conditions"].as_array()?.clone();
        conditions
            .iter()
            .any(|c| c["type"] == "Available" && c["status"] == "True")
            .then_some(())
    })
    .await;
    event(client, namespace, "Normal", "Reconciling").await;
}

/// An Event about the Memcached `cache` in `namespace` of `type_` and `reason`.
async fn event(client: &Client, namespace: &str, type_: &str, reason: &str) -> Event {
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    let what = format!("a {type_} Event {reason} about the Memcached");
    wait_for(client, &what, async || {
        let list = events.list(&ListParams::default()).await.ok()?.items;
        list.into_iter().find(|event| {
            event.involved_object.kind.as_deref() == Some("Memcached")
                && event.type_.as_deref() == Some(type_)
                && event.reason.as_deref() == Some(reason)
        })
    })
    .await
}

/// Deleting the Memcached runs the finalizer's cleanup (its Warning Event), then the
/// Memcached goes, and the garbage collector deletes its Deployment and their pods.
async fn everything_goes(client: &Client, namespace: &str, memcacheds: &Api<DynamicObject>) {
    event(client, namespace, "Warning", "Deleting").await;
    gone(client, memcacheds, "the Memcached").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    gone(
        client,
        &deployments,
        "the Deployment (the garbage collector's)",
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    wait_for(client, "the memcached pods to go", async || {
        let list = pods.list(&ListParams::default()).await.ok()?.items;
        list.is_empty().then_some(())
    })
    .await;
}

/// Waits until `api` has no object `cache` (`what`).
async fn gone<K>(client: &Client, api: &Api<K>, what: &str)
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let what = format!("{what} to go");
    wait_for(client, &what, async || {
        api.get_opt("cache").await.ok()?.is_none().then_some(())
    })
    .await;
}

/// The manager's pod runs as the ServiceAccount config/rbac made, and its log has no
/// request the apiserver refused.
async fn the_manager_ran_as_its_service_account_with_nothing_forbidden(client: &Client) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let managers = pods
        .list(&ListParams::default().labels("control-plane=controller-manager"))
        .await
        .unwrap()
        .items;
    assert_eq!(managers.len(), 1, "{managers:?}");
    let spec = managers[0].spec.as_ref().unwrap();
    assert_eq!(spec.service_account_name.as_deref(), Some(SERVICE_ACCOUNT));
    let log = manager_log(client).await;
    assert!(!log.to_lowercase().contains("forbidden"), "{log}");
}

/// The manager pod's whole log.
async fn manager_log(client: &Client) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let list = pods
        .list(&ListParams::default().labels("control-plane=controller-manager"))
        .await
        .map(|list| list.items)
        .unwrap_or_default();
    let mut out = String::new();
    for pod in list {
        let log = pods
            .logs(&pod.name_any(), &LogParams::default())
            .await
            .unwrap_or_else(|e| format!("(no log: {e})"));
        out.push_str(&format!("--- manager pod {} ---\n{log}\n", pod.name_any()));
    }
    out
}
