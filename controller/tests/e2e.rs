//! End to end, kubebuilder's `test/e2e`: the manager image deployed by `cargo xtask deploy`
//! on the local node (real kubelet, containerd, Job controller, garbage collector,
//! kube-proxy and cert-manager), checked only through the API.
//!
//! Run by `cargo xtask test-e2e`, which builds and loads the image, starts the node with
//! cert-manager, and sets `KUBECONFIG`, `E2E_IMAGE` (the image to deploy),
//! `E2E_IMAGE_ARCHIVE` (its OCI archive) and `XTASK` (the `cargo xtask` binary). The tests share one deployment and run concurrently: each
//! CronJob scenario waits for real minutes, in a namespace of its own.

#![cfg(feature = "e2e")]

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use api::v1::{ConcurrencyPolicy, CronJob};
use api::v2;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Pod, Service, ServiceAccount};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{DeleteParams, ListParams, LogParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kubebuilder_envtest::node::{self, TestImage};
use serde_json::json;

/// Where config/default puts the manager, and its names there.
const NAMESPACE: &str = "project-system";
const DEPLOYMENT: &str = "project-controller-manager";
const SERVICE_ACCOUNT: &str = "project-controller-manager";
const METRICS_SERVICE: &str = "project-controller-manager-metrics-service";
const METRICS_READER_ROLE: &str = "project-metrics-reader";
const LEASE: &str = "80807133.tutorial.kubebuilder.io";
/// The manager's lease duration: a takeover must happen within it.
const LEASE_DURATION: Duration = Duration::from_secs(15);
const SCHEDULED_AT: &str = "batch.tutorial.kubebuilder.io/scheduled-at";

/// The manager's pods as [`deployed`] leaves them: one replica, the leader. The
/// leader-election test scales the Deployment to two and deletes the leader's pod, and
/// holds this for writing until one replica is left; a test that needs the leader to
/// answer through a Service holds it for reading, so that its requests never meet a
/// follower (which serves no controller metrics: its controllers have not started) or a
/// pod on its way out.
static MANAGER_PODS: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// Deploys the image once (`cargo xtask deploy --image $E2E_IMAGE`, which waits for the
/// rollout) for every test of this binary. First, a deploy of an image the node does not
/// have must fail, naming why its pod cannot start (and not hang).
fn deployed() {
    static DEPLOYED: OnceLock<Result<(), String>> = OnceLock::new();
    let result = DEPLOYED.get_or_init(|| {
        let image = std::env::var("E2E_IMAGE")
            .map_err(|_| "E2E_IMAGE is not set: run `cargo xtask test-e2e`")?;
        let missing = "example.com/not-on-the-node:v0.0.0";
        match xtask(&["deploy", "--image", missing, "--timeout", "120"]) {
            Ok(()) => {
                return Err(format!(
                    "a deploy of {missing}, which the node lacks, succeeded"
                ));
            }
            Err(output) if output.contains("cannot roll out") && output.contains("ImagePull") => {}
            Err(output) => {
                return Err(format!("a deploy of {missing} failed otherwise:\n{output}"));
            }
        }
        xtask(&["deploy", "--image", &image])
    });
    if let Err(error) = result {
        panic!("cargo xtask deploy failed: {error}");
    }
}

/// Runs `cargo xtask <args>` (the binary `test-e2e` runs as); its stderr on failure.
fn xtask(args: &[&str]) -> Result<(), String> {
    let binary = std::env::var("XTASK")
        .map_err(|_| "XTASK is not set: run `cargo xtask test-e2e`".to_owned())?;
    let output = Command::new(binary)
        .args(args)
        .output()
        .map_err(|error| error.to_string())?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

async fn client() -> Client {
    node::running()
        .expect("the local node")
        .client()
        .await
        .expect("a client")
}

/// The end of every manager pod's log, for failure messages.
async fn manager_logs(client: &Client) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let mut out = String::new();
    let list = pods
        .list(&ListParams::default().labels("control-plane=controller-manager"))
        .await
        .map(|list| list.items)
        .unwrap_or_default();
    for pod in list {
        let name = pod.name_any();
        let params = LogParams {
            tail_lines: Some(40),
            ..LogParams::default()
        };
        let log = pods
            .logs(&name, &params)
            .await
            .unwrap_or_else(|e| format!("(no log: {e})"));
        out.push_str(&format!("\n--- manager pod {name} ---\n{log}"));
    }
    out
}

/// Polls `check` every 500 ms until it gives `Some`; after `timeout` the test fails with
/// `what` and the manager's logs.
async fn wait_for<T, F, Fut>(client: &Client, what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if Instant::now() > deadline {
            panic!(
                "timed out after {timeout:?} waiting for {what}{}",
                manager_logs(client).await
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn namespace(prefix: &str) -> String {
    node::running()
        .unwrap()
        .create_namespace(prefix)
        .await
        .unwrap()
}

/// A CronJob every minute whose Jobs run `command` in busybox (never pulled).
fn cronjob(name: &str, policy: ConcurrencyPolicy, command: &str, history: i32) -> CronJob {
    serde_json::from_value(json!({
        "apiVersion": "batch.tutorial.kubebuilder.io/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "*/1 * * * *",
            "concurrencyPolicy": policy,
            "successfulJobsHistoryLimit": history,
            "jobTemplate": {"spec": {"backoffLimit": 0, "template": {"spec": {
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 1,
                "containers": [{
                    "name": "main",
                    "image": TestImage::Busybox.name(),
                    "imagePullPolicy": "Never",
                    "command": ["/bin/sh", "-c", command],
                }],
            }}}},
        },
    }))
    .unwrap()
}

async fn create_cronjob(client: &Client, namespace: &str, cronjob: &CronJob) {
    node::running()
        .unwrap()
        .test_image(TestImage::Busybox)
        .unwrap();
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), namespace);
    // The webhooks may still be waiting for cert-manager's CA injection.
    let cronjob = cronjob.clone();
    wait_for(
        client,
        "the CronJob to be admitted",
        Duration::from_secs(60),
        || {
            let cronjobs = cronjobs.clone();
            let cronjob = cronjob.clone();
            async move { cronjobs.create(&PostParams::default(), &cronjob).await.ok() }
        },
    )
    .await;
}

async fn jobs(client: &Client, namespace: &str) -> Vec<Job> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    jobs.list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
}

fn is_complete(job: &Job) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "Complete" && c.status == "True")
        })
}

async fn pods_of_job(client: &Client, namespace: &str, job: &str) -> Vec<Pod> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    pods.list(&ListParams::default().labels(&format!("job-name={job}")))
        .await
        .map(|l| l.items)
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_manager_is_ready_and_its_metrics_need_a_token() {
    deployed();
    let client = client().await;
    let _pods = MANAGER_PODS.read().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), NAMESPACE);
    let status = deployments.get(DEPLOYMENT).await.unwrap().status.unwrap();
    assert!(status.available_replicas.unwrap_or(0) >= 1, "{status:?}");

    // As kubebuilder's e2e: bind the metrics reader role to the manager's service account
    // and scrape the metrics Service with its token from a curl pod.
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    let binding = serde_json::from_value(json!({
        "metadata": {"name": "project-metrics-binding"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": METRICS_READER_ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}],
    }))
    .unwrap();
    let _ = bindings.create(&PostParams::default(), &binding).await;
    binding_applies(&client).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), NAMESPACE);
    let token = accounts
        .create_token_request(
            SERVICE_ACCOUNT,
            &PostParams::default(),
            &TokenRequest::default(),
        )
        .await
        .unwrap()
        .status
        .and_then(|status| status.token)
        .expect("a token");
    let services: Api<Service> = Api::namespaced(client.clone(), NAMESPACE);
    let ip = services
        .get(METRICS_SERVICE)
        .await
        .unwrap()
        .spec
        .unwrap()
        .cluster_ip
        .unwrap();
    let url = format!("https://{ip}:8443/metrics");
    metrics_service_routes_to_the_leader_alone(&client).await;

    let namespace = namespace("e2e-metrics").await;
    let with_token = curl(&client, &namespace, "with-token", &url, Some(&token)).await;
    assert!(
        with_token.starts_with("200"),
        "with a token: {with_token}{}",
        manager_logs(&client).await
    );
    assert!(
        with_token.contains("controller_runtime_reconcile_total"),
        "{with_token}"
    );
    let without = curl(&client, &namespace, "without-token", &url, None).await;
    assert!(without.starts_with("401"), "without a token: {without}");
}

/// Waits until the apiserver authorizes the manager's service account to read
/// `/metrics`: the manager asks it with a SubjectAccessReview on each scrape, and its
/// authorizer learns of a new binding through a watch, a moment after the binding is
/// created.
async fn binding_applies(client: &Client) {
    let reviews: Api<SubjectAccessReview> = Api::all(client.clone());
    let review: SubjectAccessReview = serde_json::from_value(json!({"spec": {
        "user": format!("system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"),
        "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{NAMESPACE}"), "system:authenticated"],
        "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
    }}))
    .unwrap();
    wait_for(
        client,
        "the metrics reader binding to authorize the manager's service account",
        Duration::from_secs(60),
        || async {
            let reviewed = reviews.create(&PostParams::default(), &review).await.ok()?;
            reviewed.status?.allowed.then_some(())
        },
    )
    .await;
}

/// Waits until a connection to the metrics Service can only reach the leader: its
/// EndpointSlices list one endpoint, ready, the pod holding the lease, and the node's
/// kube-proxy sends the Service's connections to that pod's address alone. Each follows
/// the one before it by a delay of its own (the lease after the pod starts, the
/// EndpointSlices after its readiness, kube-proxy's rules after the EndpointSlices).
async fn metrics_service_routes_to_the_leader_alone(client: &Client) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), NAMESPACE);
    let of_the_service =
        ListParams::default().labels(&format!("kubernetes.io/service-name={METRICS_SERVICE}"));
    let node = node::running().unwrap();
    wait_for(
        client,
        "the metrics Service to route to the leader's pod alone",
        Duration::from_secs(120),
        || async {
            let holder = leases.get(LEASE).await.ok()?.spec?.holder_identity?;
            let slices = slices.list(&of_the_service).await.ok()?.items;
            let port = slices
                .iter()
                .flat_map(|slice| slice.ports.iter().flatten())
                .find(|port| port.name.as_deref() == Some("https"))?
                .port?;
            let endpoints: Vec<_> = slices
                .into_iter()
                .flat_map(|slice| slice.endpoints.unwrap_or_default())
                .collect();
            let [endpoint] = endpoints.as_slice() else {
                return None;
            };
            let ready = endpoint.conditions.as_ref()?.ready == Some(true);
            let pod = endpoint.target_ref.as_ref()?.name.as_deref()?;
            // The holder identity is the pod's host name, `_`, and a random suffix.
            let leads = holder
                .strip_prefix(pod)
                .is_some_and(|suffix| suffix.starts_with('_'));
            let [address] = endpoint.addresses.as_slice() else {
                return None;
            };
            let routes = node
                .service_routes(NAMESPACE, METRICS_SERVICE, "https")
                .unwrap_or_else(|error| panic!("the node's Service rules: {error:#}"));
            (ready && leads && routes == BTreeSet::from([format!("{address}:{port}")]))
                .then_some(())
        },
    )
    .await;
}

/// `<status code> <body>` of a GET of `url` by curl in a pod (TLS not verified, as
/// kubebuilder's e2e does: cert-manager's CA is not the pod's).
async fn curl(
    client: &Client,
    namespace: &str,
    name: &str,
    url: &str,
    token: Option<&str>,
) -> String {
    let image = node::running()
        .unwrap()
        .test_image(TestImage::Curl)
        .unwrap();
    // The body, then the status code on a line of its own.
    let mut args = vec![
        "-sk".to_owned(),
        "-w".to_owned(),
        "\n%{http_code}".to_owned(),
    ];
    if let Some(token) = token {
        args.extend(["-H".to_owned(), format!("Authorization: Bearer {token}")]);
    }
    args.push(url.to_owned());
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{
                "name": "curl",
                "image": image,
                "imagePullPolicy": "Never",
                "command": ["/usr/bin/curl"],
                "args": args,
            }],
        },
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    wait_for(
        client,
        &format!("curl pod {name}"),
        Duration::from_secs(90),
        || async {
            let phase = pods.get(name).await.ok()?.status?.phase?;
            (phase == "Succeeded" || phase == "Failed").then_some(())
        },
    )
    .await;
    let log = pods.logs(name, &LogParams::default()).await.unwrap();
    let (body, code) = log.trim_end().rsplit_once('\n').unwrap_or(("", log.trim()));
    format!("{code} {body}")
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_run_complete_and_history_is_pruned_with_their_pods() {
    deployed();
    let client = client().await;
    let namespace = namespace("e2e-history").await;
    create_cronjob(
        &client,
        &namespace,
        &cronjob("hello", ConcurrencyPolicy::Allow, "date; echo Hello", 1),
    )
    .await;

    // Two runs, a minute apart: the first Job completes, and once the second completes the
    // first is pruned (history limit 1), its pod removed by the garbage collector.
    let first = wait_for(
        &client,
        "a first complete Job",
        Duration::from_secs(150),
        || async {
            jobs(&client, &namespace)
                .await
                .into_iter()
                .find(is_complete)
                .map(|j| j.name_any())
        },
    )
    .await;
    assert_eq!(pods_of_job(&client, &namespace, &first).await.len(), 1);
    let second = wait_for(
        &client,
        "a second complete Job",
        Duration::from_secs(150),
        || async {
            jobs(&client, &namespace)
                .await
                .into_iter()
                .find(|j| is_complete(j) && j.name_any() != first)
                .map(|j| j.name_any())
        },
    )
    .await;
    wait_for(
        &client,
        "the first Job pruned",
        Duration::from_secs(60),
        || async {
            let names: Vec<String> = jobs(&client, &namespace)
                .await
                .iter()
                .map(|j| j.name_any())
                .collect();
            (!names.contains(&first) && names.contains(&second)).then_some(())
        },
    )
    .await;
    wait_for(
        &client,
        "the first Job's pod collected",
        Duration::from_secs(60),
        || async {
            pods_of_job(&client, &namespace, &first)
                .await
                .is_empty()
                .then_some(())
        },
    )
    .await;
}

/// Waits for the first Job of the CronJob in `namespace` to have a running pod.
async fn first_running_job(client: &Client, namespace: &str) -> (String, String) {
    wait_for(
        client,
        "a first Job with a running pod",
        Duration::from_secs(150),
        || async {
            for job in jobs(client, namespace).await {
                let running = pods_of_job(client, namespace, &job.name_any())
                    .await
                    .into_iter()
                    .find(|pod| {
                        pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                    });
                if let Some(pod) = running {
                    return Some((job.name_any(), pod.name_any()));
                }
            }
            None
        },
    )
    .await
}

/// The time of the run a Job was created for.
fn scheduled_at(job: &Job) -> jiff::Timestamp {
    job.annotations()[SCHEDULED_AT].parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn forbid_skips_a_run_while_its_job_runs() {
    deployed();
    let client = client().await;
    let namespace = namespace("e2e-forbid").await;
    create_cronjob(
        &client,
        &namespace,
        &cronjob("forbid", ConcurrencyPolicy::Forbid, "sleep 600", 3),
    )
    .await;
    let (first, _) = first_running_job(&client, &namespace).await;
    let first_run = scheduled_at(&jobs(&client, &namespace).await[0]);
    // Wait until the next run is 20 s overdue: it must have been skipped.
    let next_run = first_run + jiff::SignedDuration::from_secs(60);
    let wait =
        (next_run + jiff::SignedDuration::from_secs(20)).duration_since(jiff::Timestamp::now());
    tokio::time::sleep(wait.try_into().unwrap_or_default()).await;
    let names: Vec<String> = jobs(&client, &namespace)
        .await
        .iter()
        .map(|j| j.name_any())
        .collect();
    assert_eq!(
        names,
        std::slice::from_ref(&first),
        "Forbid created a second Job{}",
        manager_logs(&client).await
    );
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), &namespace);
    let active = cronjobs.get("forbid").await.unwrap().status.unwrap().active;
    assert_eq!(
        active
            .iter()
            .map(|r| r.name.clone().unwrap_or_default())
            .collect::<Vec<_>>(),
        [first]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn replace_deletes_the_running_job_and_its_pod() {
    deployed();
    let client = client().await;
    let namespace = namespace("e2e-replace").await;
    create_cronjob(
        &client,
        &namespace,
        &cronjob("replace", ConcurrencyPolicy::Replace, "sleep 600", 3),
    )
    .await;
    let (first, first_pod) = first_running_job(&client, &namespace).await;
    let second = wait_for(
        &client,
        "the next run's Job",
        Duration::from_secs(120),
        || async {
            jobs(&client, &namespace)
                .await
                .into_iter()
                .map(|j| j.name_any())
                .find(|name| *name != first)
        },
    )
    .await;
    wait_for(
        &client,
        "the replaced Job and its pod gone",
        Duration::from_secs(90),
        || async {
            let names: Vec<String> = jobs(&client, &namespace)
                .await
                .iter()
                .map(|j| j.name_any())
                .collect();
            let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
            let pod_gone = pods.get_opt(&first_pod).await.ok()?.is_none();
            (names == [second.clone()] && pod_gone).then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_webhooks_are_called_through_their_service() {
    deployed();
    let client = client().await;
    let namespace = namespace("e2e-webhooks").await;
    let mut bare = cronjob("defaulted", ConcurrencyPolicy::Allow, "true", 3);
    bare.spec.concurrency_policy = None;
    bare.spec.successful_jobs_history_limit = None;
    bare.spec.schedule = "0 0 1 1 *".into();
    create_cronjob(&client, &namespace, &bare).await;
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), &namespace);
    let defaulted = cronjobs.get("defaulted").await.unwrap().spec;
    assert_eq!(defaulted.concurrency_policy, Some(ConcurrencyPolicy::Allow));
    assert_eq!(defaulted.suspend, Some(false));
    assert_eq!(defaulted.successful_jobs_history_limit, Some(3));
    assert_eq!(defaulted.failed_jobs_history_limit, Some(1));

    let mut bad = cronjob("bad-schedule", ConcurrencyPolicy::Allow, "true", 3);
    bad.spec.schedule = "every minute".into();
    match cronjobs.create(&PostParams::default(), &bad).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            assert!(status.message.contains("spec.schedule"), "{status:?}");
        }
        other => panic!("a bad schedule was not refused with 422: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn v2_converts_through_the_service_with_the_ca_cert_manager_injected() {
    deployed();
    let client = client().await;
    let namespace = namespace("e2e-conversion").await;

    // The CRD as deployed: conversion by the project's webhook Service, its CA injected by
    // cert-manager from the serving certificate.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd_name = "cronjobs.batch.tutorial.kubebuilder.io";
    let injected = wait_for(
        &client,
        "cert-manager to inject the CRD's CA",
        Duration::from_secs(120),
        || async {
            let crd = crds.get(crd_name).await.ok()?;
            let client_config = crd.spec.conversion?.webhook?.client_config?;
            client_config
                .ca_bundle
                .as_ref()
                .filter(|ca| !ca.0.is_empty())?;
            Some((crd.metadata.annotations, client_config.service?))
        },
    )
    .await;
    let (annotations, service) = injected;
    assert_eq!(
        annotations
            .unwrap_or_default()
            .get("cert-manager.io/inject-ca-from")
            .map(String::as_str),
        Some("project-system/project-serving-cert")
    );
    assert_eq!(
        (
            service.namespace.as_str(),
            service.name.as_str(),
            service.path.as_deref()
        ),
        (NAMESPACE, "project-webhook-service", Some("/convert"))
    );

    // Written as v2, read as v1; written as v1, read as v2.
    let v2s: Api<v2::CronJob> = Api::namespaced(client.clone(), &namespace);
    let written: v2::CronJob = serde_json::from_value(json!({
        "apiVersion": "batch.tutorial.kubebuilder.io/v2",
        "kind": "CronJob",
        "metadata": {"name": "written-as-v2"},
        "spec": {
            "schedule": {"minute": "0", "hour": "3"},
            "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": TestImage::Busybox.name(), "command": ["true"]}],
            }}}},
        },
    }))
    .unwrap();
    wait_for(
        &client,
        "the v2 CronJob to be admitted",
        Duration::from_secs(60),
        || {
            let v2s = v2s.clone();
            let written = written.clone();
            async move { v2s.create(&PostParams::default(), &written).await.ok() }
        },
    )
    .await;
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), &namespace);
    assert_eq!(
        cronjobs.get("written-as-v2").await.unwrap().spec.schedule,
        "0 3 * * *"
    );
    create_cronjob(
        &client,
        &namespace,
        &cronjob("written-as-v1", ConcurrencyPolicy::Allow, "true", 3),
    )
    .await;
    let read = v2s.get("written-as-v1").await.unwrap();
    assert_eq!(read.spec.schedule.minute.as_deref(), Some("*/1"));
    assert_eq!(read.spec.schedule.hour, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_replica_takes_over_when_the_leader_pod_is_deleted() {
    deployed();
    let client = client().await;
    // Due runs during the hand-over, in a namespace of this test's.
    let namespace = namespace("e2e-leader").await;
    create_cronjob(
        &client,
        &namespace,
        &cronjob("during", ConcurrencyPolicy::Allow, "true", 10),
    )
    .await;

    let _pods = MANAGER_PODS.write().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), NAMESPACE);
    scale_manager(&deployments, 2).await;
    wait_for(
        &client,
        "two ready replicas",
        Duration::from_secs(120),
        || async {
            let status = deployments.get(DEPLOYMENT).await.ok()?.status?;
            (status.ready_replicas == Some(2)).then_some(())
        },
    )
    .await;

    let leases: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
    let holder = || async {
        leases
            .get(LEASE)
            .await
            .ok()?
            .spec?
            .holder_identity
            .filter(|h| !h.is_empty())
    };
    let leader = wait_for(&client, "a lease holder", Duration::from_secs(60), holder).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let leader_pod = pods
        .list(&ListParams::default().labels("control-plane=controller-manager"))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|pod| pod.name_any())
        .find(|name| leader.starts_with(name.as_str()))
        .unwrap_or_else(|| panic!("no manager pod holds the lease ({leader})"));

    let deleted = Instant::now();
    pods.delete(&leader_pod, &DeleteParams::default())
        .await
        .unwrap();
    let successor = wait_for(
        &client,
        "another holder",
        LEASE_DURATION + Duration::from_secs(30),
        || async {
            holder()
                .await
                .filter(|h| !h.starts_with(leader_pod.as_str()))
        },
    )
    .await;
    let takeover = deleted.elapsed();
    println!("takeover by {successor} in {takeover:?}");
    assert!(
        takeover <= LEASE_DURATION,
        "takeover took {takeover:?}, more than the lease duration"
    );

    // Two more runs under the new leader, then: one Job per run, never two.
    let runs_before = jobs(&client, &namespace).await.len();
    wait_for(
        &client,
        "two runs after the hand-over",
        Duration::from_secs(150),
        || async { (jobs(&client, &namespace).await.len() >= runs_before + 2).then_some(()) },
    )
    .await;
    let mut per_run: BTreeMap<String, usize> = BTreeMap::new();
    for job in jobs(&client, &namespace).await {
        *per_run
            .entry(job.annotations()[SCHEDULED_AT].clone())
            .or_default() += 1;
    }
    assert!(
        per_run.values().all(|count| *count == 1),
        "duplicate Jobs per run: {per_run:?}"
    );

    // Back to the one replica the other tests expect (see MANAGER_PODS).
    scale_manager(&deployments, 1).await;
    wait_for(
        &client,
        "one manager pod again",
        Duration::from_secs(120),
        || async {
            let status = deployments.get(DEPLOYMENT).await.ok()?.status?;
            let manager_pods = pods
                .list(&ListParams::default().labels("control-plane=controller-manager"))
                .await
                .ok()?
                .items;
            (status.ready_replicas == Some(1) && manager_pods.len() == 1).then_some(())
        },
    )
    .await;
}

/// Scales the manager's Deployment to `replicas`.
async fn scale_manager(deployments: &Api<Deployment>, replicas: i32) {
    let scale = json!({"spec": {"replicas": replicas}});
    deployments
        .patch(DEPLOYMENT, &PatchParams::default(), &Patch::Merge(&scale))
        .await
        .unwrap();
}

/// The regular files of an OCI archive's image (its first layer): path → (mode, contents).
fn layer_files(archive: &std::path::Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    use std::io::Read;
    let blobs = |archive: &std::path::Path| -> BTreeMap<String, Vec<u8>> {
        let mut tar = tar::Archive::new(std::fs::File::open(archive).unwrap());
        let mut blobs = BTreeMap::new();
        for entry in tar.entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = entry
                .path()
                .unwrap()
                .to_string_lossy()
                .trim_start_matches("./")
                .to_owned();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            blobs.insert(path, bytes);
        }
        blobs
    };
    let blobs = blobs(archive);
    let index: serde_json::Value = serde_json::from_slice(&blobs["index.json"]).unwrap();
    let blob =
        |digest: &str| &blobs[&format!("blobs/sha256/{}", digest.trim_start_matches("sha256:"))];
    let mut manifest: serde_json::Value =
        serde_json::from_slice(blob(index["manifests"][0]["digest"].as_str().unwrap())).unwrap();
    if manifest["manifests"].is_array() {
        // podman may wrap the manifest in an index of its own.
        manifest =
            serde_json::from_slice(blob(manifest["manifests"][0]["digest"].as_str().unwrap()))
                .unwrap();
    }
    let layer = blob(manifest["layers"][0]["digest"].as_str().unwrap());
    let decoded: Box<dyn Read> = if layer.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::read::GzDecoder::new(layer.as_slice()))
    } else {
        Box::new(layer.as_slice())
    };
    let mut tar = tar::Archive::new(decoded);
    let mut files = BTreeMap::new();
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let path = entry
            .path()
            .unwrap()
            .to_string_lossy()
            .trim_start_matches("./")
            .to_owned();
        let mode = entry.header().mode().unwrap() & 0o7777;
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        files.insert(path, (mode, bytes));
    }
    files
}

#[tokio::test(flavor = "multi_thread")]
async fn the_dockerfile_packs_the_same_image_with_podman_and_the_node_loads_it() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let store = tempfile::tempdir().unwrap();
    // podman's own storage in a directory of this test's, removed afterwards.
    let podman = |args: &[&str]| {
        let output = Command::new("podman")
            .arg("--root")
            .arg(store.path().join("root"))
            .arg("--runroot")
            .arg(store.path().join("run"))
            .args(args)
            .output()
            .expect("podman is installed (`cargo xtask test-e2e` installs it as root)");
        assert!(
            output.status.success(),
            "podman {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let archive = store.path().join("podman.tar");
    let archive_arg = archive.to_str().unwrap();
    let root_arg = root.to_str().unwrap();
    podman(&[
        "build",
        "--tag",
        "localhost/project:podman",
        "--file",
        "Dockerfile",
        root_arg,
    ]);
    podman(&[
        "save",
        "--format",
        "oci-archive",
        "--output",
        archive_arg,
        "localhost/project:podman",
    ]);

    let ours = std::path::PathBuf::from(
        std::env::var("E2E_IMAGE_ARCHIVE").expect("E2E_IMAGE_ARCHIVE (run `cargo xtask test-e2e`)"),
    );
    let (podman_files, our_files) = (layer_files(&archive), layer_files(&ours));
    assert_eq!(
        podman_files.keys().collect::<Vec<_>>(),
        our_files.keys().collect::<Vec<_>>(),
        "the Dockerfile's image holds other files"
    );
    for (path, (mode, contents)) in &our_files {
        let (podman_mode, podman_contents) = &podman_files[path];
        assert_eq!(mode, podman_mode, "mode of {path}");
        assert!(contents == podman_contents, "{path} differs");
    }

    // Any OCI archive loads into the node, and runs there.
    xtask(&["cluster", "load", archive_arg]).unwrap();
    let client = client().await;
    let namespace = namespace("e2e-podman").await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "manager-help"},
        "spec": {"restartPolicy": "Never", "containers": [{
            "name": "manager",
            "image": "localhost/project:podman",
            "imagePullPolicy": "Never",
            "args": ["--help"],
        }]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    wait_for(
        &client,
        "the podman-built manager to print its help",
        Duration::from_secs(90),
        || async {
            (pods.get("manager-help").await.ok()?.status?.phase? == "Succeeded").then_some(())
        },
    )
    .await;
    let log = pods
        .logs("manager-help", &LogParams::default())
        .await
        .unwrap();
    assert!(log.contains("--leader-elect"), "{log}");
}
