//! The CronJob CRD on a real kube-apiserver: it becomes Established, the apiserver applies
//! its defaults and refuses what its markers forbid.

use api::v1::{ConcurrencyPolicy, CronJob};
use kube::api::{Api, PostParams};
use serde_json::json;

/// A CronJob as JSON, with `spec` fields merged over a minimal valid spec.
fn cronjob(name: &str, spec: serde_json::Value) -> serde_json::Value {
    let mut value = json!({
        "apiVersion": "batch.tutorial.kubebuilder.io/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "*/1 * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "hello", "image": "busybox"}],
                "restartPolicy": "OnFailure"
            }}}}
        }
    });
    for (key, field) in spec.as_object().unwrap() {
        value["spec"][key] = field.clone();
    }
    value
}

async fn cronjobs() -> Api<CronJob> {
    let plane = kubebuilder_envtest::shared();
    plane
        .install_crds(&[CronJob::crd()])
        .await
        .expect("the CRD is accepted and becomes Established");
    let namespace = plane.create_namespace("cronjob").await.unwrap();
    Api::namespaced(plane.client().await.unwrap(), &namespace)
}

async fn create(api: &Api<CronJob>, value: serde_json::Value) -> Result<CronJob, kube::Error> {
    let object: CronJob = serde_json::from_value(value).unwrap();
    api.create(&PostParams::default(), &object).await
}

fn refusal(result: Result<CronJob, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            status.message
        }
        other => panic!("expected the apiserver to refuse the object, got {other:?}"),
    }
}

#[tokio::test]
async fn the_crd_is_established_and_a_valid_cronjob_round_trips() {
    let api = cronjobs().await;
    let created = create(
        &api,
        cronjob(
            "valid",
            json!({"startingDeadlineSeconds": 60, "suspend": true}),
        ),
    )
    .await
    .unwrap();
    assert_eq!(created.spec.starting_deadline_seconds, Some(60));
    assert_eq!(created.spec.suspend, Some(true));
    let read = api.get("valid").await.unwrap();
    assert_eq!(read.spec, created.spec);
}

#[tokio::test]
async fn an_omitted_concurrency_policy_reads_back_as_allow() {
    let api = cronjobs().await;
    let created = create(&api, cronjob("defaulted", json!({}))).await.unwrap();
    assert_eq!(
        created.spec.concurrency_policy,
        Some(ConcurrencyPolicy::Allow)
    );
    assert_eq!(
        api.get("defaulted").await.unwrap().spec.concurrency_policy,
        Some(ConcurrencyPolicy::Allow)
    );
}

#[tokio::test]
async fn a_negative_starting_deadline_is_refused() {
    let api = cronjobs().await;
    let message = refusal(
        create(
            &api,
            cronjob("negative", json!({"startingDeadlineSeconds": -1})),
        )
        .await,
    );
    assert!(
        message.contains("spec.startingDeadlineSeconds: Invalid value: -1: spec.startingDeadlineSeconds in body should be greater than or equal to 0"),
        "{message}"
    );
}

#[tokio::test]
async fn negative_history_limits_are_refused() {
    let api = cronjobs().await;
    let message = refusal(
        create(
            &api,
            cronjob(
                "limits",
                json!({"successfulJobsHistoryLimit": -1, "failedJobsHistoryLimit": -2}),
            ),
        )
        .await,
    );
    assert!(
        message.contains(
            "spec.successfulJobsHistoryLimit in body should be greater than or equal to 0"
        ),
        "{message}"
    );
    assert!(
        message
            .contains("spec.failedJobsHistoryLimit in body should be greater than or equal to 0"),
        "{message}"
    );
}

#[tokio::test]
async fn an_unknown_concurrency_policy_is_refused() {
    let plane = kubebuilder_envtest::shared();
    let api = cronjobs().await;
    // Not representable in the Rust enum: send it untyped.
    let dynamic: Api<kube::api::DynamicObject> = Api::namespaced_with(
        plane.client().await.unwrap(),
        api.namespace().unwrap(),
        &kube::api::ApiResource::erase::<CronJob>(&()),
    );
    let object =
        serde_json::from_value(cronjob("policy", json!({"concurrencyPolicy": "Sometimes"})))
            .unwrap();
    match dynamic.create(&PostParams::default(), &object).await {
        Err(kube::Error::Api(status)) => assert!(
            status.message.contains(r#"spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace""#),
            "{}",
            status.message
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn the_status_subresource_keeps_status_out_of_spec_writes() {
    let api = cronjobs().await;
    let mut value = cronjob("status", json!({}));
    value["status"] = json!({"lastScheduleTime": "2026-01-01T00:00:00Z"});
    let created = create(&api, value).await.unwrap();
    // With the status subresource, a create ignores status.
    assert_eq!(created.status, None);
}
