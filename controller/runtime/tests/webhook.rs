//! The webhook server called by the real apiserver (defaulting, validation, deletion),
//! called directly (malformed reviews, unknown paths, HTTP/2 negotiation), certificate
//! rotation on disk, and the benchmark entry point.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{GROUP, Widget, WidgetSpec, eventually, test_args, widget_crd};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kubebuilder::webhook::{Declared, Webhook};
use kubebuilder_envtest::shared;
use kubebuilder_runtime::bench::admission_load;
use kubebuilder_runtime::certs::{CertificateAuthority, write_loopback_serving_certificate};
use kubebuilder_runtime::client::HttpClient;
use kubebuilder_runtime::webhook::{
    Defaulter, FieldError, FieldPath, LoopbackRegistration, Validator, Warnings, Webhooks,
};
use kubebuilder_runtime::{Manager, ManagerArgs, RunningManager};
use serde_json::{Value, json};

const MUTATE_PATH: &str = "/mutate-runtime-kubebuilder-test-v1-widget";
const VALIDATE_PATH: &str = "/validate-runtime-kubebuilder-test-v1-widget";

/// A declaration as `#[kubebuilder::webhook]` records it, for the Widget kind.
const fn widget_webhook(name: &'static str, mutating: bool, path: &'static str) -> Webhook {
    Webhook {
        name,
        mutating,
        path: Some(path),
        url: None,
        failure_policy: "Fail",
        match_policy: None,
        side_effects: "None",
        groups: &[GROUP],
        resources: &["widgets"],
        verbs: &["CREATE", "UPDATE", "DELETE"],
        versions: &["v1"],
        admission_review_versions: &["v1"],
        reinvocation_policy: None,
        timeout_seconds: Some(10),
        service_name: "webhook-service",
        service_namespace: "system",
        service_port: None,
    }
}

/// Size defaults to 1 and color to blue; set values stay.
struct WidgetDefaulter;

impl Declared for WidgetDefaulter {
    const WEBHOOK: Webhook = widget_webhook("mwidget-v1.kb.io", true, MUTATE_PATH);
}

impl Defaulter<Widget> for WidgetDefaulter {
    async fn default(&self, widget: &mut Widget) -> Result<(), Vec<FieldError>> {
        widget.spec.size.get_or_insert(1);
        widget.spec.color.get_or_insert_with(|| "blue".into());
        Ok(())
    }
}

/// Names of at most 20 characters, sizes from 1 to 10; a `locked` widget cannot be
/// deleted.
struct WidgetValidator;

impl Declared for WidgetValidator {
    const WEBHOOK: Webhook = widget_webhook("vwidget-v1.kb.io", false, VALIDATE_PATH);
}

impl WidgetValidator {
    fn check(widget: &Widget) -> Result<Warnings, Vec<FieldError>> {
        let mut errors = Vec::new();
        let name = widget.metadata.name.clone().unwrap_or_default();
        if name.len() > 20 {
            errors.push(FieldError::invalid(
                FieldPath::new("metadata").child("name"),
                name,
                "must be no more than 20 characters",
            ));
        }
        if let Some(size) = widget.spec.size.filter(|size| !(1..=10).contains(size)) {
            errors.push(FieldError::invalid(
                FieldPath::new("spec").child("size"),
                size,
                "must be between 1 and 10",
            ));
        }
        if errors.is_empty() {
            Ok(Warnings::new())
        } else {
            Err(errors)
        }
    }
}

impl Validator<Widget> for WidgetValidator {
    async fn validate_create(&self, widget: &Widget) -> Result<Warnings, Vec<FieldError>> {
        Self::check(widget)
    }

    async fn validate_update(
        &self,
        _: &Widget,
        widget: &Widget,
    ) -> Result<Warnings, Vec<FieldError>> {
        Self::check(widget)
    }

    async fn validate_delete(&self, widget: &Widget) -> Result<Warnings, Vec<FieldError>> {
        if widget.metadata.name.as_deref() == Some("locked") {
            return Err(vec![FieldError::forbidden(
                "metadata.name",
                "locked widgets stay",
            )]);
        }
        Ok(Warnings::new())
    }
}

fn widget_webhooks() -> Webhooks {
    Webhooks::new()
        .defaulter(WidgetDefaulter)
        .validator(WidgetValidator)
}

/// A manager serving the Widget webhooks on a free loopback port with certificates in
/// `certs`.
async fn serve(
    client: Client,
    certs: &Path,
    registration: Option<LoopbackRegistration>,
    enable_http2: bool,
) -> RunningManager {
    let args = ManagerArgs {
        webhook_cert_path: Some(certs.to_owned()),
        enable_http2,
        ..test_args()
    };
    let mut manager = Manager::new(client, args)
        .webhook_host("127.0.0.1".parse().unwrap())
        .webhooks(widget_webhooks())
        .enable_webhooks(true);
    if let Some(registration) = registration {
        manager = manager.register_webhooks_on_loopback(registration);
    }
    manager.start().await.unwrap()
}

fn widgets(client: &Client, namespace: &str) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(GROUP, "v1", "Widget"));
    Api::namespaced_with(client.clone(), namespace, &resource)
}

fn widget_json(name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("{GROUP}/v1"), "kind": "Widget",
        "metadata": {"name": name}, "spec": spec
    }))
    .unwrap()
}

fn refusal(err: kube::Error) -> kube::core::Status {
    match err {
        kube::Error::Api(status) => *status,
        other => panic!("expected an API error, got {other}"),
    }
}

#[tokio::test]
async fn the_apiserver_applies_defaults_and_refuses_invalid_widgets_with_field_paths() {
    let plane = shared();
    plane.install_crds(&[widget_crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-webhook").await.unwrap();
    let certs = tempfile::tempdir().unwrap();
    let ca = write_loopback_serving_certificate(certs.path(), "tls.crt", "tls.key").unwrap();
    let registration =
        LoopbackRegistration::new(&format!("{namespace}-widgets"), &ca).only_namespace(&namespace);
    let running = serve(client.clone(), certs.path(), Some(registration), false).await;
    let widgets = widgets(&client, &namespace);

    // The apiserver picks new webhook configurations up through an informer.
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    eventually(
        "the webhooks to be called",
        Duration::from_secs(20),
        || async {
            let created = widgets
                .create(&dry_run, &widget_json("probe", json!({})))
                .await
                .ok()?;
            (created.data["spec"]["color"] == "blue").then_some(())
        },
    )
    .await;

    // Defaults fill what is missing, keep what is set, and leave unknown fields alone.
    let created = widgets
        .create(
            &PostParams::default(),
            &widget_json("plain", json!({"size": 4, "extra": {"kept": true}})),
        )
        .await
        .unwrap();
    assert_eq!(
        created.data["spec"],
        json!({"size": 4, "color": "blue", "extra": {"kept": true}})
    );
    let read: Widget = widgets.get("plain").await.unwrap().try_parse().unwrap();
    assert_eq!(
        read.spec,
        WidgetSpec {
            size: Some(4),
            color: Some("blue".into())
        }
    );

    // One Invalid status (422) with every field error.
    let both = widgets
        .create(
            &PostParams::default(),
            &widget_json("a-name-well-over-twenty-characters", json!({"size": 11})),
        )
        .await
        .unwrap_err();
    let status = refusal(both);
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert!(
        status.message.starts_with(r#"admission webhook "vwidget-v1.kb.io" denied the request: Widget.runtime.kubebuilder.test "a-name-well-over-twenty-characters" is invalid: ["#),
        "{}",
        status.message
    );
    let details = status.details.unwrap();
    assert_eq!(
        (details.group.as_str(), details.kind.as_str()),
        (GROUP, "Widget")
    );
    let causes: Vec<_> = details
        .causes
        .iter()
        .map(|cause| (cause.field.as_str(), cause.message.as_str()))
        .collect();
    assert_eq!(
        causes,
        [
            (
                "metadata.name",
                r#"Invalid value: "a-name-well-over-twenty-characters": must be no more than 20 characters"#
            ),
            ("spec.size", "Invalid value: 11: must be between 1 and 10"),
        ]
    );

    // Updates are validated too.
    let update = widgets
        .patch(
            "plain",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 0}})),
        )
        .await
        .unwrap_err();
    let status = refusal(update);
    assert_eq!(status.code, 422);
    assert_eq!(status.details.unwrap().causes[0].field, "spec.size");

    // Delete goes through the validator: allowed, or refused as it decides.
    widgets
        .create(&PostParams::default(), &widget_json("locked", json!({})))
        .await
        .unwrap();
    let locked = refusal(
        widgets
            .delete("locked", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(locked.code, 422);
    assert_eq!(
        locked.details.unwrap().causes[0].reason,
        "FieldValueForbidden"
    );
    widgets
        .delete("plain", &DeleteParams::default())
        .await
        .unwrap();

    // Shutdown removes the registrations.
    let name = format!("{namespace}-widgets");
    running.shutdown().await.unwrap();
    let mutating = Api::<MutatingWebhookConfiguration>::all(client.clone())
        .get_opt(&name)
        .await
        .unwrap();
    let validating = Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .get_opt(&name)
        .await
        .unwrap();
    assert!(
        mutating.is_none() && validating.is_none(),
        "registrations removed"
    );
}

fn review(operation: &str, object: Value) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0d3a3b1e-direct",
            "kind": {"group": GROUP, "version": "v1", "kind": "Widget"},
            "resource": {"group": GROUP, "version": "v1", "resource": "widgets"},
            "name": "direct",
            "namespace": "default",
            "operation": operation,
            "userInfo": {"username": "tester"},
            "object": object,
            "oldObject": null,
            "dryRun": false
        }
    })
}

#[tokio::test]
async fn malformed_reviews_get_400_unknown_paths_404_and_the_server_keeps_serving() {
    let client = shared().client().await.unwrap();
    let certs = tempfile::tempdir().unwrap();
    let ca = write_loopback_serving_certificate(certs.path(), "tls.crt", "tls.key").unwrap();
    let running = serve(client, certs.path(), None, false).await;
    let server = HttpClient::tls(running.webhook_addr().unwrap(), &ca).unwrap();

    let garbage = server
        .post_json(MUTATE_PATH, "{not an admission review")
        .await
        .unwrap();
    assert_eq!(garbage.status.as_u16(), 400);
    let body: Value = serde_json::from_slice(&garbage.body).unwrap();
    assert_eq!(body["response"]["allowed"], false);
    assert!(
        body["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .starts_with("cannot decode the AdmissionReview")
    );

    let no_request = server
        .post_json(
            VALIDATE_PATH,
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#,
        )
        .await
        .unwrap();
    assert_eq!(no_request.status.as_u16(), 400);

    let mut connection = server.connect().await.unwrap();
    let wrong_type = connection
        .request("POST", MUTATE_PATH)
        .header("content-type", "text/plain")
        .body(http_body_util::Full::new(bytes::Bytes::from_static(b"{}")))
        .unwrap();
    assert_eq!(
        connection.send(wrong_type).await.unwrap().status.as_u16(),
        400
    );

    let unknown = server.post_json("/mutate-nothing", "{}").await.unwrap();
    assert_eq!(unknown.status.as_u16(), 404);
    assert_eq!(
        server.get(MUTATE_PATH, None).await.unwrap().status.as_u16(),
        405
    );

    // Still serving: a well-formed review is defaulted.
    let object = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Widget", "metadata": {"name": "direct"}, "spec": {"size": 2}});
    let answer = server
        .post_json(
            MUTATE_PATH,
            serde_json::to_vec(&review("CREATE", object)).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(answer.status.as_u16(), 200);
    let answer: Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(answer["response"]["uid"], "0d3a3b1e-direct");
    assert_eq!(answer["response"]["allowed"], true);
    assert_eq!(answer["response"]["patchType"], "JSONPatch");

    // An object that does not fit the type is refused inside a proper review.
    let misfit = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Widget", "metadata": {"name": "direct"}, "spec": {"size": "big"}});
    let refused = server
        .post_json(
            VALIDATE_PATH,
            serde_json::to_vec(&review("CREATE", misfit)).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(refused.status.as_u16(), 200);
    let refused: Value = serde_json::from_slice(&refused.body).unwrap();
    assert_eq!(refused["response"]["allowed"], false);
    assert_eq!(refused["response"]["status"]["code"], 400);
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn rotated_certificate_files_are_served_to_new_connections_without_restart() {
    let client = shared().client().await.unwrap();
    let certs = tempfile::tempdir().unwrap();
    let ca = CertificateAuthority::new("rotation-ca").unwrap();
    let write = |pair: &kubebuilder_runtime::certs::CertPair| {
        std::fs::write(certs.path().join("tls.crt"), &pair.cert_pem).unwrap();
        std::fs::write(certs.path().join("tls.key"), &pair.key_pem).unwrap();
    };
    let loopback = ["127.0.0.1".parse().unwrap()];
    write(&ca.issue_server(&["localhost"], &loopback).unwrap());
    let running = serve(client, certs.path(), None, false).await;
    let server = HttpClient::tls(running.webhook_addr().unwrap(), &ca.cert_pem()).unwrap();
    let before = server.handshake(&[b"http/1.1"]).await.unwrap().certificate;
    assert_eq!(
        server.handshake(&[b"http/1.1"]).await.unwrap().certificate,
        before,
        "stable until rotated"
    );
    let mut open = server.connect().await.unwrap();

    // What cert-manager does when it renews: new files in place.
    write(&ca.issue_server(&["localhost"], &loopback).unwrap());
    let after = server.handshake(&[b"http/1.1"]).await.unwrap().certificate;
    assert_ne!(after, before, "new connections see the new certificate");

    // Connections opened before keep working.
    let still = open
        .send(
            open.request("GET", "/unknown")
                .body(Default::default())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(still.status.as_u16(), 404);
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn http2_is_negotiated_only_when_enabled() {
    let client = shared().client().await.unwrap();
    for enabled in [false, true] {
        let certs = tempfile::tempdir().unwrap();
        let ca = write_loopback_serving_certificate(certs.path(), "tls.crt", "tls.key").unwrap();
        let running = serve(client.clone(), certs.path(), None, enabled).await;
        let server = HttpClient::tls(running.webhook_addr().unwrap(), &ca).unwrap();
        let agreed = server.handshake(&[b"h2", b"http/1.1"]).await.unwrap().alpn;
        let expected: &[u8] = if enabled { b"h2" } else { b"http/1.1" };
        assert_eq!(
            agreed.as_deref(),
            Some(expected),
            "--enable-http2={enabled}"
        );
        running.shutdown().await.unwrap();
    }
}

#[tokio::test]
async fn webhooks_can_be_turned_off() {
    let client = shared().client().await.unwrap();
    let running = Manager::new(client, test_args())
        .webhooks(widget_webhooks())
        .enable_webhooks(false)
        .start()
        .await
        .unwrap();
    assert_eq!(running.webhook_addr(), None);
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_benchmark_entry_point_sends_every_request() {
    let client = shared().client().await.unwrap();
    let certs = tempfile::tempdir().unwrap();
    let ca = write_loopback_serving_certificate(certs.path(), "tls.crt", "tls.key").unwrap();
    let running = serve(client, certs.path(), None, false).await;
    let server = HttpClient::tls(running.webhook_addr().unwrap(), &ca).unwrap();
    let object = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Widget", "metadata": {"name": "bench"}, "spec": {}});
    let body = bytes::Bytes::from(serde_json::to_vec(&review("CREATE", object)).unwrap());
    let report = admission_load(&server, MUTATE_PATH, body, 200, 4)
        .await
        .unwrap();
    assert_eq!(
        (report.requests, report.concurrency, report.failures),
        (200, 4, 0)
    );
    assert!(report.p50 <= report.p99);
    println!(
        "webhook bench (debug build): {:.0} req/s, p50 {:?}, p99 {:?}",
        report.throughput, report.p50, report.p99
    );
    running.shutdown().await.unwrap();
}
