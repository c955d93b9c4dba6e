//! The CronJob webhooks as a cluster runs them: served by the runtime's webhook server over
//! TLS, registered with the real apiserver (url client config on loopback, the test CA as
//! caBundle, only for the test's namespace) and called by it on every create and update.
//! Then straight at the server: malformed reviews, unknown paths, certificate rotation.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::time::{Duration, Instant};

use api::v1::{ConcurrencyPolicy, CronJob};
use controller::cronjob::schedule;
use controller::cronjob::webhook::webhooks;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::core::Status;
use kube::{Client, Resource as _};
use kubebuilder::webhook::Declared as _;
use kubebuilder_envtest::http_client::HttpClient;
use kubebuilder_envtest::shared;
use kubebuilder_runtime::certs::{CertPair, CertificateAuthority};
use kubebuilder_runtime::metrics::Metrics;
use kubebuilder_runtime::webhook::LoopbackRegistration;
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs, RunningManager};
use serde_json::{Value, json};

const GROUP: &str = "batch.tutorial.kubebuilder.io";
const MUTATE_PATH: &str = "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob";
const VALIDATE_PATH: &str = "/validate-batch-tutorial-kubebuilder-io-v1-cronjob";
const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A CA and the webhook server's certificate files it signed.
struct TestCertificates {
    dir: tempfile::TempDir,
    ca: CertificateAuthority,
}

impl TestCertificates {
    fn new(ca_name: &str) -> Self {
        let certs = Self {
            dir: tempfile::tempdir().unwrap(),
            ca: CertificateAuthority::new(ca_name).unwrap(),
        };
        certs.write(&certs.issue());
        certs
    }

    /// A serving certificate for the address the apiserver and the tests call.
    fn issue(&self) -> CertPair {
        self.ca.issue_server(&["localhost"], &[LOOPBACK]).unwrap()
    }

    /// Replaces the files in place, as cert-manager does when it renews.
    fn write(&self, pair: &CertPair) {
        std::fs::write(self.dir.path().join("tls.crt"), &pair.cert_pem).unwrap();
        std::fs::write(self.dir.path().join("tls.key"), &pair.key_pem).unwrap();
    }

    fn ca_pem(&self) -> String {
        self.ca.cert_pem()
    }
}

/// A manager serving the CronJob webhooks (both versions' and the conversion, as
/// `src/main.rs` registers them) on a free loopback port, nothing else.
async fn serve(
    client: Client,
    certs: &Path,
    registration: Option<LoopbackRegistration>,
) -> RunningManager {
    serve_with_metrics(client, certs, registration).await.0
}

/// [`serve`], with the manager's metrics.
async fn serve_with_metrics(
    client: Client,
    certs: &Path,
    registration: Option<LoopbackRegistration>,
) -> (RunningManager, Metrics) {
    let args = ManagerArgs {
        health_probe_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        webhook_port: 0,
        webhook_cert_path: Some(certs.to_owned()),
        ..ManagerArgs::default()
    };
    let mut manager = Manager::new(client, args)
        .webhook_host(LOOPBACK)
        .webhooks(webhooks())
        .webhooks(controller::cronjob::webhook_v2::webhooks())
        .conversion::<CronJob>()
        .enable_webhooks(true);
    if let Some(registration) = registration {
        manager = manager.serve_webhooks_on_loopback(registration);
    }
    let metrics = manager.metrics().clone();
    (manager.start().await.unwrap(), metrics)
}

/// A CronJob as a user writes it: the required fields and whatever `optional` adds.
fn cronjob(name: &str, schedule: &str, optional: Value) -> Value {
    let mut spec = json!({
        "schedule": schedule,
        "jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "hello", "image": "busybox", "args": ["date"]}],
            "restartPolicy": "OnFailure",
        }}}},
    });
    if let Value::Object(fields) = optional {
        spec.as_object_mut().unwrap().extend(fields);
    }
    json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": spec,
    })
}

fn typed(object: Value) -> CronJob {
    serde_json::from_value(object).unwrap()
}

fn refusal(result: Result<CronJob, kube::Error>) -> Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        Err(other) => panic!("expected a refusal by the apiserver, got {other}"),
        Ok(created) => panic!(
            "expected a refusal, but {:?} was stored",
            created.meta().name
        ),
    }
}

/// The field and message of each cause of an Invalid refusal, after checking it is one.
fn invalid_causes(status: &Status) -> Vec<(String, String)> {
    assert_eq!(
        (status.code, status.reason.as_str()),
        (422, "Invalid"),
        "{status:?}"
    );
    let details = status
        .details
        .as_ref()
        .expect("an Invalid status has details");
    assert_eq!(
        (details.group.as_str(), details.kind.as_str()),
        (GROUP, "CronJob")
    );
    details
        .causes
        .iter()
        .map(|cause| (cause.field.clone(), cause.message.clone()))
        .collect()
}

fn schedule_cause(schedule: &str) -> (String, String) {
    let parser_message = schedule::validate(schedule).unwrap_err().to_string();
    (
        "spec.schedule".into(),
        format!("Invalid value: {schedule:?}: {parser_message}"),
    )
}

fn name_cause(name: &str) -> (String, String) {
    (
        "metadata.name".into(),
        format!("Invalid value: {name:?}: must be no more than 52 characters"),
    )
}

/// Waits until the apiserver calls both webhooks: it learns of new configurations
/// through informers (one per kind of configuration), so the first requests after
/// registering may still bypass either.
async fn wait_until_webhooks_are_called(cronjobs: &Api<CronJob>) {
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let valid = typed(cronjob("probe", "*/1 * * * *", json!({})));
    let invalid = typed(cronjob("probe", "61 * * * *", json!({})));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // `suspend` has no schema default: only the defaulting webhook sets it.
        let defaulted = matches!(
            cronjobs.create(&dry_run, &valid).await,
            Ok(created) if created.spec.suspend.is_some()
        );
        // The schema accepts any schedule string: only the validating webhook refuses it.
        let validated = matches!(
            cronjobs.create(&dry_run, &invalid).await,
            Err(kube::Error::Api(status)) if status.code == 422
        );
        if defaulted && validated {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the apiserver did not call the webhooks within 30 s \
             (defaulting seen: {defaulted}, validation seen: {validated})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_apiserver_defaults_cronjobs_and_refuses_invalid_ones_with_field_paths() {
    let plane = shared();
    plane.install_crds(&[CronJob::crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("cronjob-webhook").await.unwrap();
    let certs = TestCertificates::new("cronjob webhook test CA");
    // Served with the manager's in-memory loopback certificate, not `certs`.
    let registration =
        LoopbackRegistration::new(&format!("{namespace}-cronjob")).only_namespace(&namespace);
    let running = serve(client.clone(), certs.dir.path(), Some(registration)).await;
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), &namespace);
    wait_until_webhooks_are_called(&cronjobs).await;
    let create = |object: Value| {
        let cronjobs = cronjobs.clone();
        async move {
            cronjobs
                .create(&PostParams::default(), &typed(object))
                .await
        }
    };

    // Created without the optional fields, read back with all four defaults.
    create(cronjob("defaults", "*/1 * * * *", json!({})))
        .await
        .unwrap();
    let stored = cronjobs.get("defaults").await.unwrap().spec;
    assert_eq!(
        (
            stored.concurrency_policy,
            stored.suspend,
            stored.successful_jobs_history_limit,
            stored.failed_jobs_history_limit
        ),
        (
            Some(ConcurrencyPolicy::Allow),
            Some(false),
            Some(3),
            Some(1)
        )
    );

    // Set values, zero and false included, are kept.
    let set = json!({
        "concurrencyPolicy": "Forbid",
        "suspend": true,
        "successfulJobsHistoryLimit": 0,
        "failedJobsHistoryLimit": 0,
    });
    create(cronjob("kept", "0 9 * * 1-5", set)).await.unwrap();
    let stored = cronjobs.get("kept").await.unwrap().spec;
    assert_eq!(
        (
            stored.concurrency_policy,
            stored.suspend,
            stored.successful_jobs_history_limit,
            stored.failed_jobs_history_limit
        ),
        (
            Some(ConcurrencyPolicy::Forbid),
            Some(true),
            Some(0),
            Some(0)
        )
    );

    // An unparsable schedule: refused at spec.schedule with the parser's message.
    let status = refusal(create(cronjob("bad-schedule", "61 * * * *", json!({}))).await);
    assert_eq!(invalid_causes(&status), [schedule_cause("61 * * * *")]);

    // A 53-character name.
    let long_name = "n".repeat(53);
    let status = refusal(create(cronjob(&long_name, "*/1 * * * *", json!({}))).await);
    assert_eq!(invalid_causes(&status), [name_cause(&long_name)]);

    // Both at once: one refusal naming both, as the validator's Invalid status says.
    let status = refusal(create(cronjob(&long_name, "every minute", json!({}))).await);
    assert_eq!(
        invalid_causes(&status),
        [name_cause(&long_name), schedule_cause("every minute")]
    );
    let validator = controller::cronjob::webhook::Validator::WEBHOOK.name;
    let expected_prefix = format!(
        r#"admission webhook "{validator}" denied the request: CronJob.{GROUP} "{long_name}" is invalid: [metadata.name: "#
    );
    assert!(
        status.message.starts_with(&expected_prefix),
        "{}",
        status.message
    );
    assert!(
        cronjobs.get_opt(&long_name).await.unwrap().is_none(),
        "nothing refused is stored"
    );

    // Updates are validated: an invalid schedule is refused and the stored one stays.
    let update = cronjobs
        .patch(
            "defaults",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"schedule": "* * *"}})),
        )
        .await;
    assert_eq!(invalid_causes(&refusal(update)), [schedule_cause("* * *")]);
    assert_eq!(
        cronjobs.get("defaults").await.unwrap().spec.schedule,
        "*/1 * * * *"
    );
    let valid_update = cronjobs
        .patch(
            "defaults",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"schedule": "@hourly"}})),
        )
        .await
        .unwrap();
    assert_eq!(valid_update.spec.schedule, "@hourly");

    // Delete is allowed.
    cronjobs
        .delete("defaults", &DeleteParams::default())
        .await
        .unwrap();
    assert!(cronjobs.get_opt("defaults").await.unwrap().is_none());

    running.shutdown().await.unwrap();
}

/// An AdmissionReview as the apiserver sends it for creating `object`.
fn create_review(object: &Value) -> String {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "5b0f4e9e-direct",
            "kind": {"group": GROUP, "version": "v1", "kind": "CronJob"},
            "resource": {"group": GROUP, "version": "v1", "resource": "cronjobs"},
            "name": object["metadata"]["name"],
            "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "tester"},
            "object": object,
            "oldObject": null,
            "dryRun": false,
        }
    })
    .to_string()
}

#[tokio::test]
async fn malformed_reviews_get_400_unknown_paths_404_and_the_server_keeps_serving() {
    let client = shared().client().await.unwrap();
    let certs = TestCertificates::new("cronjob direct test CA");
    let running = serve(client, certs.dir.path(), None).await;
    let server = HttpClient::tls(running.webhook_addr().unwrap(), &certs.ca_pem()).unwrap();

    for path in [MUTATE_PATH, VALIDATE_PATH] {
        let garbage = server
            .post_json(path, r#"{"request": {"uid": 7"#)
            .await
            .unwrap();
        assert_eq!(garbage.status.as_u16(), 400, "{path}: {}", garbage.text());
    }
    let unknown = server
        .post_json("/mutate-batch-tutorial-kubebuilder-io-v3-cronjob", "{}")
        .await
        .unwrap();
    assert_eq!(unknown.status.as_u16(), 404);

    // Still serving: the defaulter patches in the four defaults...
    let reply = server
        .post_json(
            MUTATE_PATH,
            create_review(&cronjob("direct", "*/1 * * * *", json!({}))),
        )
        .await
        .unwrap();
    assert_eq!(reply.status.as_u16(), 200);
    let review: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(review["response"]["uid"], "5b0f4e9e-direct");
    assert_eq!(review["response"]["allowed"], true);
    assert_eq!(review["response"]["patchType"], "JSONPatch");
    // kube-core writes the patch bytes as a JSON array of numbers, which the apiserver's
    // decoding of `[]byte` accepts beside base64.
    let patch: Vec<u8> = serde_json::from_value(review["response"]["patch"].clone()).unwrap();
    let patch: Value = serde_json::from_slice(&patch).unwrap();
    let mut operations: Vec<String> = patch
        .as_array()
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    operations.sort();
    assert_eq!(
        operations,
        [
            r#"{"op":"add","path":"/spec/concurrencyPolicy","value":"Allow"}"#,
            r#"{"op":"add","path":"/spec/failedJobsHistoryLimit","value":1}"#,
            r#"{"op":"add","path":"/spec/successfulJobsHistoryLimit","value":3}"#,
            r#"{"op":"add","path":"/spec/suspend","value":false}"#,
        ]
    );

    // ...and the validator refuses a bad schedule inside a well-formed review.
    let reply = server
        .post_json(
            VALIDATE_PATH,
            create_review(&cronjob("direct", "not cron", json!({}))),
        )
        .await
        .unwrap();
    assert_eq!(reply.status.as_u16(), 200);
    let review: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(review["response"]["allowed"], false);
    assert_eq!(review["response"]["status"]["code"], 422);
    assert_eq!(
        review["response"]["status"]["details"]["causes"][0]["field"],
        "spec.schedule"
    );
    running.shutdown().await.unwrap();
}

fn conversion_review(uid: &str, desired: &str, objects: &[Value]) -> String {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
    })
    .to_string()
}

#[tokio::test]
async fn conversion_reviews_convert_through_the_hub_and_one_bad_object_fails_its_review() {
    let client = shared().client().await.unwrap();
    let certs = TestCertificates::new("cronjob conversion test CA");
    let (running, metrics) = serve_with_metrics(client, certs.dir.path(), None).await;
    let server = HttpClient::tls(running.webhook_addr().unwrap(), &certs.ca_pem()).unwrap();
    let mut v1 = cronjob("converted", "*/1 * * * *", json!({}));
    v1["metadata"] = json!({
        "name": "converted", "namespace": "default", "uid": "a1", "resourceVersion": "7",
        "generation": 2, "labels": {"app": "hello"},
    });
    let mut v2 = v1.clone();
    v2["apiVersion"] = json!(format!("{GROUP}/v2"));
    v2["spec"]["schedule"] = json!({"minute": "*/5", "hour": "1"});

    // Many objects, both versions, to v2: apiVersion rewritten, metadata kept, uid echoed.
    let reply = server
        .post_json(
            "/convert",
            conversion_review("c-1", &format!("{GROUP}/v2"), &[v1.clone(), v2.clone()]),
        )
        .await
        .unwrap();
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text());
    let review: Value = serde_json::from_slice(&reply.body).unwrap();
    let response = &review["response"];
    assert_eq!(response["uid"], "c-1");
    assert_eq!(response["result"]["status"], "Success", "{response}");
    let converted = response["convertedObjects"].as_array().unwrap();
    assert_eq!(converted.len(), 2);
    assert_eq!(converted[0]["apiVersion"], format!("{GROUP}/v2"));
    assert_eq!(converted[0]["spec"]["schedule"], json!({"minute": "*/1"}));
    assert_eq!(converted[0]["metadata"], v1["metadata"]);
    assert_eq!(converted[1], v2);

    // One object of a version nothing converts: a Failure naming it, no objects.
    let mut v3 = v1.clone();
    v3["apiVersion"] = json!(format!("{GROUP}/v3"));
    let reply = server
        .post_json(
            "/convert",
            conversion_review("c-2", &format!("{GROUP}/v1"), &[v2.clone(), v3]),
        )
        .await
        .unwrap();
    assert_eq!(reply.status.as_u16(), 200);
    let review: Value = serde_json::from_slice(&reply.body).unwrap();
    let response = &review["response"];
    assert_eq!(response["uid"], "c-2");
    assert_eq!(response["result"]["status"], "Failure");
    let message = response["result"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("CronJob default/converted ({GROUP}/v3)"))
            && message.contains("\"v3\""),
        "{message}"
    );
    assert_eq!(response["convertedObjects"], json!([]));

    // A schedule v1 cannot hold: a Failure at the field.
    let mut spaced = v2.clone();
    spaced["spec"]["schedule"] = json!({"minute": "1 2"});
    let reply = server
        .post_json(
            "/convert",
            conversion_review("c-3", &format!("{GROUP}/v1"), &[spaced]),
        )
        .await
        .unwrap();
    let review: Value = serde_json::from_slice(&reply.body).unwrap();
    let message = review["response"]["result"]["message"].as_str().unwrap();
    assert!(message.contains("spec.schedule.minute"), "{message}");

    // The next review succeeds, and a malformed one gets 400.
    let reply = server
        .post_json(
            "/convert",
            conversion_review("c-4", &format!("{GROUP}/v1"), &[v2]),
        )
        .await
        .unwrap();
    let review: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(review["response"]["result"]["status"], "Success");
    assert_eq!(
        review["response"]["convertedObjects"][0]["spec"]["schedule"],
        "*/5 1 * * *"
    );
    for garbage in [
        r#"{"request": {"uid": 7"#,
        r#"{"apiVersion": "apiextensions.k8s.io/v1"}"#,
    ] {
        let reply = server.post_json("/convert", garbage).await.unwrap();
        assert_eq!(reply.status.as_u16(), 400, "{garbage}: {}", reply.text());
    }
    // Counted as the admission webhooks are: four reviews answered, two refused.
    let exposed = metrics.encode();
    for series in [
        "controller_runtime_webhook_requests_total{webhook=\"/convert\",code=\"200\"} 4",
        "controller_runtime_webhook_requests_total{webhook=\"/convert\",code=\"400\"} 2",
        "controller_runtime_webhook_latency_seconds_count{webhook=\"/convert\"} 6",
    ] {
        assert!(
            exposed.contains(series),
            "{series} missing from:\n{exposed}"
        );
    }
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn replaced_certificate_files_are_served_to_new_connections_without_restart() {
    let client = shared().client().await.unwrap();
    let certs = TestCertificates::new("cronjob rotation CA before");
    let running = serve(client, certs.dir.path(), None).await;
    let address = running.webhook_addr().unwrap();
    let trusting_old_ca = HttpClient::tls(address, &certs.ca_pem()).unwrap();
    let review = create_review(&cronjob("rotated", "*/1 * * * *", json!({})));
    let before = trusting_old_ca
        .handshake(&[b"http/1.1"])
        .await
        .unwrap()
        .certificate;
    let mut open_before_rotation = trusting_old_ca.connect().await.unwrap();

    // A renewal by a new CA: clients that only trust the old one must now fail.
    let renewed_by = CertificateAuthority::new("cronjob rotation CA after").unwrap();
    certs.write(
        &renewed_by
            .issue_server(&["localhost"], &[LOOPBACK])
            .unwrap(),
    );
    let trusting_new_ca = HttpClient::tls(address, &renewed_by.cert_pem()).unwrap();
    let after = trusting_new_ca
        .handshake(&[b"http/1.1"])
        .await
        .unwrap()
        .certificate;
    assert_ne!(after, before, "new connections see the new certificate");
    let reply = trusting_new_ca
        .post_json(MUTATE_PATH, review.clone())
        .await
        .unwrap();
    assert_eq!(
        reply.status.as_u16(),
        200,
        "admission over the new certificate"
    );
    assert!(
        trusting_old_ca.handshake(&[b"http/1.1"]).await.is_err(),
        "the old certificate is no longer served"
    );

    // A connection opened before the rotation keeps working.
    let request = open_before_rotation
        .json_post(MUTATE_PATH, review.into())
        .unwrap();
    assert_eq!(
        open_before_rotation
            .send(request)
            .await
            .unwrap()
            .status
            .as_u16(),
        200
    );
    running.shutdown().await.unwrap();
}
