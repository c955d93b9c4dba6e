//! The webhook server called by the real apiserver (defaulting, validation, deletion, the
//! request's context, a panicking handler), called directly (malformed reviews, unknown
//! paths, raw handlers, HTTP/2 negotiation), certificate rotation on disk, and the
//! benchmark entry point.

mod common;

use std::borrow::Cow;
use std::path::Path;
use std::time::Duration;

use common::{GROUP, Widget, WidgetSpec, eventually, promlint_check, test_args, widget_crd};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::admission::{AdmissionRequest, AdmissionResponse};
use kube::core::{ApiResource, GroupVersionKind};
use kubebuilder::webhook::{Declared, Serves, Webhook};
use kubebuilder_envtest::http_client::HttpClient;
use kubebuilder_envtest::load::admission_load;
use kubebuilder_envtest::shared;
use kubebuilder_runtime::certs::{CertificateAuthority, write_loopback_serving_certificate};
use kubebuilder_runtime::webhook::{
    AdmissionContext, Defaulter, FieldError, FieldPath, LoopbackRegistration, Validator, Warnings,
    Webhooks,
};
use kubebuilder_runtime::{Manager, ManagerArgs, RunningManager};
use serde_json::{Value, json};

const MUTATE_PATH: &str = "/mutate-runtime-kubebuilder-test-v1-widget";
const VALIDATE_PATH: &str = "/validate-runtime-kubebuilder-test-v1-widget";

/// A declaration as `#[kubebuilder::webhook]` records it, for the Widget kind.
const fn widget_webhook(name: &'static str, mutating: bool, path: &'static str) -> Webhook {
    Webhook {
        name: Cow::Borrowed(name),
        mutating,
        path: Some(Cow::Borrowed(path)),
        url: None,
        failure_policy: Cow::Borrowed("Fail"),
        match_policy: None,
        side_effects: Cow::Borrowed("None"),
        groups: Cow::Borrowed(&[Cow::Borrowed(GROUP)]),
        resources: Cow::Borrowed(&[Cow::Borrowed("widgets")]),
        verbs: Cow::Borrowed(&[
            Cow::Borrowed("CREATE"),
            Cow::Borrowed("UPDATE"),
            Cow::Borrowed("DELETE"),
        ]),
        versions: Cow::Borrowed(&[Cow::Borrowed("v1")]),
        admission_review_versions: Cow::Borrowed(&[Cow::Borrowed("v1")]),
        reinvocation_policy: None,
        timeout_seconds: Some(10),
        service_name: Cow::Borrowed("webhook-service"),
        service_namespace: Cow::Borrowed("system"),
        service_port: None,
        patch: None,
    }
}

/// Size defaults to 1 and color to blue; set values stay.
struct WidgetDefaulter;

impl Declared for WidgetDefaulter {
    const WEBHOOK: Webhook = widget_webhook("mwidget-v1.kb.io", true, MUTATE_PATH);
}

impl Serves<Widget> for WidgetDefaulter {}

impl Defaulter<Widget> for WidgetDefaulter {
    async fn default(
        &self,
        _: &AdmissionContext<'_>,
        widget: &mut Widget,
    ) -> Result<(), Vec<FieldError>> {
        if widget.metadata.name.as_deref() == Some("panic") {
            panic!("the defaulter cannot cope with this widget");
        }
        widget.spec.size.get_or_insert(1);
        widget.spec.color.get_or_insert_with(|| "blue".into());
        Ok(())
    }
}

/// Names of at most 20 characters, sizes from 1 to 10; a `locked` widget cannot be
/// deleted; a `whoami` widget is refused with what the request's context says.
struct WidgetValidator;

impl Declared for WidgetValidator {
    const WEBHOOK: Webhook = widget_webhook("vwidget-v1.kb.io", false, VALIDATE_PATH);
}

impl Serves<Widget> for WidgetValidator {}

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
    async fn validate_create(
        &self,
        context: &AdmissionContext<'_>,
        widget: &Widget,
    ) -> Result<Warnings, Vec<FieldError>> {
        if widget.metadata.name.as_deref() == Some("whoami") {
            let told = format!(
                "user={} groups={:?} dryRun={} operation={:?} namespace={}",
                context.user_info().username.as_deref().unwrap_or_default(),
                context.user_info().groups.as_deref().unwrap_or_default(),
                context.dry_run(),
                context.operation(),
                context.namespace().unwrap_or_default(),
            );
            return Err(vec![FieldError::forbidden("metadata.name", told)]);
        }
        Self::check(widget)
    }

    async fn validate_update(
        &self,
        context: &AdmissionContext<'_>,
        _: &Widget,
        widget: &Widget,
    ) -> Result<Warnings, Vec<FieldError>> {
        // The old object is in the context too.
        let old: Option<Widget> = context.old_object().transpose().map_err(|err| {
            vec![FieldError::invalid(
                "metadata",
                err.to_string(),
                "cannot decode",
            )]
        })?;
        assert!(old.is_some(), "an update carries the old object");
        Self::check(widget)
    }

    async fn validate_delete(
        &self,
        _: &AdmissionContext<'_>,
        widget: &Widget,
    ) -> Result<Warnings, Vec<FieldError>> {
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

/// A manager serving `webhooks` on a free loopback port with the certificates in `certs`.
fn manager(client: Client, certs: &Path, webhooks: Webhooks, enable_http2: bool) -> Manager {
    let args = ManagerArgs {
        webhook_cert_path: Some(certs.to_owned()),
        enable_http2,
        ..test_args()
    };
    Manager::new(client, args)
        .webhook_host("127.0.0.1".parse().unwrap())
        .webhooks(webhooks)
        .enable_webhooks(true)
}

/// A manager serving the Widget webhooks on a free loopback port with certificates in
/// `certs`.
async fn serve(client: Client, certs: &Path, enable_http2: bool) -> RunningManager {
    manager(client, certs, widget_webhooks(), enable_http2)
        .start()
        .await
        .unwrap()
}

/// A manager serving the Widget webhooks for `namespace`, registered with the apiserver on
/// loopback, once the apiserver calls them.
async fn serve_on_loopback(client: &Client, namespace: &str) -> RunningManager {
    let registration =
        LoopbackRegistration::new(&format!("{namespace}-widgets")).only_namespace(namespace);
    let running = Manager::new(client.clone(), test_args())
        .webhook_host("127.0.0.1".parse().unwrap())
        .webhooks(widget_webhooks())
        .enable_webhooks(true)
        .serve_webhooks_on_loopback(registration)
        .start()
        .await
        .unwrap();
    // The apiserver picks new webhook configurations up through an informer.
    let widgets = widgets(client, namespace);
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
    running
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
    let running = serve_on_loopback(&client, &namespace).await;
    let widgets = widgets(&client, &namespace);

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

#[tokio::test]
async fn a_validator_sees_who_asks_and_whether_it_is_a_dry_run() {
    let plane = shared();
    plane.install_crds(&[widget_crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-webhook-who").await.unwrap();
    let running = serve_on_loopback(&client, &namespace).await;
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": format!("{namespace}-widget-maker")},
        "rules": [{"apiGroups": [GROUP], "resources": ["widgets"], "verbs": ["create"]}]
    }))
    .unwrap();
    plane
        .grant_cluster_role(&role, &namespace, "robot")
        .await
        .unwrap();
    let as_robot = plane
        .client_as_service_account(&namespace, "robot")
        .await
        .unwrap();
    let robot_widgets = widgets(&as_robot, &namespace);
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };

    // Impersonated, dry run: the validator's refusal repeats what the context told it.
    let refused = eventually(
        "the robot to be allowed to create widgets",
        Duration::from_secs(20),
        || async {
            match robot_widgets
                .create(&dry_run, &widget_json("whoami", json!({})))
                .await
            {
                Err(kube::Error::Api(status)) if status.code == 422 => Some(*status),
                _ => None,
            }
        },
    )
    .await;
    let told = &refused.details.unwrap().causes[0].message;
    let user = format!("system:serviceaccount:{namespace}:robot");
    assert!(told.contains(&format!("user={user} ")), "{told}");
    assert!(told.contains("system:serviceaccounts"), "{told}");
    assert!(
        told.contains(&format!(
            "dryRun=true operation=Create namespace={namespace}"
        )),
        "{told}"
    );

    // As the admin, for real.
    let admin = refusal(
        widgets(&client, &namespace)
            .create(&PostParams::default(), &widget_json("whoami", json!({})))
            .await
            .unwrap_err(),
    );
    let told = &admin.details.unwrap().causes[0].message;
    assert!(told.contains("dryRun=false"), "{told}");
    assert!(!told.contains("serviceaccount"), "{told}");
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_panicking_webhook_answers_500_and_the_next_request_succeeds() {
    let plane = shared();
    plane.install_crds(&[widget_crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-webhook-panic").await.unwrap();
    let running = serve_on_loopback(&client, &namespace).await;
    let widgets = widgets(&client, &namespace);

    let panicked = refusal(
        widgets
            .create(&PostParams::default(), &widget_json("panic", json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!(panicked.code, 500, "{panicked:?}");
    assert!(
        panicked
            .message
            .contains("panic: the defaulter cannot cope with this widget [recovered]"),
        "{}",
        panicked.message
    );
    let next = widgets
        .create(&PostParams::default(), &widget_json("calm", json!({})))
        .await
        .unwrap();
    assert_eq!(next.data["spec"]["color"], "blue", "defaulted as usual");
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn raw_handlers_answer_whole_reviews_and_their_panics_are_counted() {
    let client = shared().client().await.unwrap();
    let certs = tempfile::tempdir().unwrap();
    let ca = write_loopback_serving_certificate(certs.path(), "tls.crt", "tls.key").unwrap();
    let raw = Webhooks::new().handler_at(
        "/raw",
        |request: AdmissionRequest<DynamicObject>| async move {
            assert_ne!(
                request.name, "boom",
                "the raw handler refuses to look at boom"
            );
            let mut response = AdmissionResponse::from(&request);
            response.warnings = Some(vec![format!(
                "seen {} by {}",
                request.name,
                request.user_info.username.clone().unwrap_or_default()
            )]);
            response
        },
    );
    let manager = manager(client, certs.path(), raw, false);
    let metrics = manager.metrics().clone();
    let running = manager.start().await.unwrap();
    let server = HttpClient::tls(running.webhook_addr().unwrap(), &ca).unwrap();
    let ask = |name: &'static str| {
        let server = server.clone();
        async move {
            let object =
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
            let mut review = review("CREATE", object);
            review["request"]["name"] = json!(name);
            let reply = server
                .post_json("/raw", serde_json::to_vec(&review).unwrap())
                .await
                .unwrap();
            assert_eq!(reply.status.as_u16(), 200);
            serde_json::from_slice::<Value>(&reply.body).unwrap()["response"].clone()
        }
    };

    let boom = ask("boom").await;
    assert_eq!(boom["allowed"], false);
    assert_eq!(boom["status"]["code"], 500);
    let fine = ask("fine").await;
    assert_eq!(fine["allowed"], true);
    assert_eq!(fine["warnings"], json!(["seen fine by tester"]));
    let text = metrics.encode();
    for line in [
        "controller_runtime_webhook_panics_total 1",
        "controller_runtime_webhook_requests_total{webhook=\"/raw\",code=\"200\"} 2",
        "controller_runtime_webhook_requests_in_flight{webhook=\"/raw\"} 0",
        "controller_runtime_webhook_latency_seconds_count{webhook=\"/raw\"} 2",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    promlint_check(&metrics.encode_prometheus_text());
    running.shutdown().await.unwrap();
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
    let running = serve(client, certs.path(), false).await;
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
    let running = serve(client, certs.path(), false).await;
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
        let running = serve(client.clone(), certs.path(), enabled).await;
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
async fn webhook_port_minus_one_switches_the_server_off() {
    let client = shared().client().await.unwrap();
    let args = ManagerArgs {
        webhook_port: -1,
        ..test_args()
    };
    let running = Manager::new(client, args)
        .webhooks(widget_webhooks())
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
    let running = serve(client, certs.path(), false).await;
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
