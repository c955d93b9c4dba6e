//! CronJob v1 and v2 on the real apiserver: the CRD as `cargo xtask manifests` writes it
//! (both versions, webhook conversion), the conversion served by the manager on loopback
//! and registered with its CA, and the controller working on v1 while users write v2.

mod common;

use std::time::{Duration, Instant};

use api::{v1, v2};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt as _;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubebuilder_envtest::shared;
use kubebuilder_runtime::webhook::{LoopbackRegistration, Webhooks};
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs, RunningManager, TestClock};
use serde_json::{Value, json};

use common::TestEnv;

const GROUP: &str = "batch.tutorial.kubebuilder.io";
const CRD_NAME: &str = "cronjobs.batch.tutorial.kubebuilder.io";

/// The CronJob CRD `cargo xtask manifests` writes: v1 (storage) and v2, with conversion.
fn generated_crd() -> CustomResourceDefinition {
    kubebuilder::crd::all(&kubebuilder::crd::Options::default())
        .unwrap()
        .into_iter()
        .find(|crd| crd.name_any() == CRD_NAME)
        .expect("the CronJob CRD is registered")
}

/// The tests take turns: each points the one CronJob CRD's conversion at its own manager
/// and puts it back when that manager stops.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A namespace on the shared apiserver with the generated CRD installed (its conversion
/// reset first, should a failed test have left its manager's loopback url behind).
async fn environment(prefix: &str) -> TestEnv {
    let plane = shared();
    let crds: Api<CustomResourceDefinition> = Api::all(plane.client().await.unwrap());
    if crds.get_opt(CRD_NAME).await.unwrap().is_some() {
        let reset = json!([{"op": "add", "path": "/spec/conversion", "value": generated_crd().spec.conversion}]);
        let reset: json_patch::Patch = serde_json::from_value(reset).unwrap();
        crds.patch(CRD_NAME, &PatchParams::default(), &Patch::<()>::Json(reset))
            .await
            .unwrap();
    }
    plane.install_crds(&[generated_crd()]).await.unwrap();
    TestEnv {
        client: plane.client().await.unwrap(),
        namespace: plane.create_namespace(prefix).await.unwrap(),
        clock: TestClock::new(jiff::Timestamp::now()),
    }
}

fn args(env: &TestEnv) -> ManagerArgs {
    ManagerArgs {
        health_probe_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        webhook_port: 0,
        namespaces: vec![env.namespace.clone()],
        ..ManagerArgs::default()
    }
}

/// A manager serving `webhooks` on loopback, registered with the apiserver; the CRD's
/// conversion calls it until shutdown.
fn with_webhooks(manager: Manager, env: &TestEnv, webhooks: Webhooks) -> Manager {
    let registration = LoopbackRegistration::new(&format!("{}-cronjob", env.namespace))
        .only_namespace(&env.namespace);
    manager
        .webhook_host(std::net::Ipv4Addr::LOCALHOST.into())
        .webhooks(webhooks)
        .enable_webhooks(true)
        .serve_webhooks_on_loopback(registration)
}

/// Both versions' admission webhooks and the conversion, as `src/main.rs` registers them.
fn cronjob_webhooks() -> Webhooks {
    controller::cronjob::webhook::webhooks()
        .merge(controller::cronjob::webhook_v2::webhooks())
        .conversion::<v1::CronJob>()
}

fn v2_cronjob(name: &str, schedule: Value) -> Value {
    json!({
        "apiVersion": format!("{GROUP}/v2"),
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": schedule,
            "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "hello", "image": "busybox", "args": ["date"]}],
                "restartPolicy": "OnFailure",
            }}}},
        },
    })
}

fn v1_cronjob(name: &str, schedule: &str) -> v1::CronJob {
    let mut object = v2_cronjob(name, json!({}));
    object["apiVersion"] = json!(format!("{GROUP}/v1"));
    object["spec"]["schedule"] = json!(schedule);
    serde_json::from_value(object).unwrap()
}

/// Waits until the apiserver converts through the manager: it picks up a CRD's new
/// conversion asynchronously, so the first reads after registering may still fail.
async fn wait_until_converting(env: &TestEnv) {
    let v1s: Api<v1::CronJob> = Api::namespaced(env.client.clone(), &env.namespace);
    let v2s: Api<v2::CronJob> = Api::namespaced(env.client.clone(), &env.namespace);
    let probe = v1_cronjob("conversion-probe", "*/1 * * * *");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // Even a v1 write goes through the conversion the CRD names.
        let created = match v1s.create(&PostParams::default(), &probe).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.reason == "AlreadyExists" => Ok(()),
            Err(err) => Err(err),
        };
        match created.and(v2s.get("conversion-probe").await.map(drop)) {
            Ok(()) => break,
            Err(err) => assert!(
                Instant::now() < deadline,
                "the apiserver did not convert through the manager within 30 s: {err}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    v1s.delete("conversion-probe", &Default::default())
        .await
        .unwrap();
}

async fn start(manager: Manager) -> RunningManager {
    manager.start().await.unwrap()
}

#[tokio::test]
async fn each_version_reads_and_updates_what_the_other_wrote() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let env = environment("conversion").await;
    let manager = Manager::new(env.client.clone(), args(&env));
    let running = start(with_webhooks(manager, &env, cronjob_webhooks())).await;
    wait_until_converting(&env).await;
    let v1s: Api<v1::CronJob> = Api::namespaced(env.client.clone(), &env.namespace);
    let v2s: Api<v2::CronJob> = Api::namespaced(env.client.clone(), &env.namespace);

    // The CRD the apiserver holds calls the loopback /convert with the manager's CA.
    let crd: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let conversion = crd.get(CRD_NAME).await.unwrap().spec.conversion.unwrap();
    assert_eq!(conversion.strategy, "Webhook");
    let webhook = conversion.webhook.unwrap();
    let client_config = webhook.client_config.unwrap();
    let url = client_config.url.unwrap();
    assert!(
        url.starts_with("https://127.0.0.1:") && url.ends_with("/convert"),
        "{url}"
    );
    assert!(!client_config.ca_bundle.unwrap().0.is_empty());
    assert_eq!(webhook.conversion_review_versions, ["v1"]);

    // Written as v1, read as v2; written as v2, read as v1.
    v1s.create(
        &PostParams::default(),
        &v1_cronjob("from-v1", "*/1 * * * *"),
    )
    .await
    .unwrap();
    let read = v2s.get("from-v1").await.unwrap();
    assert_eq!(
        read.spec.schedule,
        v2::CronSchedule {
            minute: Some("*/1".into()),
            ..Default::default()
        }
    );
    let written: v2::CronJob =
        serde_json::from_value(v2_cronjob("from-v2", json!({"minute": "*/5", "hour": "1"})))
            .unwrap();
    let created = v2s.create(&PostParams::default(), &written).await.unwrap();
    // The v2 defaulting webhook ran.
    assert_eq!(created.spec.suspend, Some(false));
    assert_eq!(
        v1s.get("from-v2").await.unwrap().spec.schedule,
        "*/5 1 * * *"
    );

    // Updated through v2, read through v1.
    v2s.patch(
        "from-v1",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"schedule": {"hour": "2"}}})),
    )
    .await
    .unwrap();
    assert_eq!(
        v1s.get("from-v1").await.unwrap().spec.schedule,
        "*/1 2 * * *"
    );

    // Both versions list both objects.
    let mut v1_schedules: Vec<String> = v1s
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|cronjob| cronjob.spec.schedule)
        .collect();
    v1_schedules.sort();
    assert_eq!(v1_schedules, ["*/1 2 * * *", "*/5 1 * * *"]);
    assert_eq!(v2s.list(&Default::default()).await.unwrap().items.len(), 2);

    // On shutdown the CRD gets back the conversion the manifests give it (with the
    // apiserver's defaults).
    running.shutdown().await.unwrap();
    let restored = crd.get(CRD_NAME).await.unwrap().spec.conversion.unwrap();
    let client_config = restored.webhook.unwrap().client_config.unwrap();
    let service = client_config.service.unwrap();
    assert_eq!(
        (
            client_config.url,
            service.name.as_str(),
            service.namespace.as_str(),
            service.path.as_deref()
        ),
        (None, "webhook-service", "system", Some("/convert"))
    );
}

#[tokio::test]
async fn a_v2_schedule_the_hub_cannot_hold_is_refused_with_the_conversions_message() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let env = environment("conversion-refused").await;
    // Conversion only: no v2 validating webhook to refuse the object first.
    let conversion_only = Webhooks::new().conversion::<v1::CronJob>();
    let manager = Manager::new(env.client.clone(), args(&env));
    let running = start(with_webhooks(manager, &env, conversion_only)).await;
    wait_until_converting(&env).await;
    let v2s: Api<v2::CronJob> = Api::namespaced(env.client.clone(), &env.namespace);

    let spaced: v2::CronJob =
        serde_json::from_value(v2_cronjob("spaced", json!({"minute": "1 2"}))).unwrap();
    let refused = v2s
        .create(&PostParams::default(), &spaced)
        .await
        .unwrap_err();
    let message = refused.to_string();
    assert!(
        message.contains("spec.schedule.minute") && message.contains("is not one cron field"),
        "{message}"
    );
    // The next one converts.
    let fine: v2::CronJob =
        serde_json::from_value(v2_cronjob("fine", json!({"minute": "1"}))).unwrap();
    v2s.create(&PostParams::default(), &fine).await.unwrap();
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_controller_runs_a_cronjob_written_as_v2() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let env = environment("conversion-controller").await;
    let manager = env.manager(env.client.clone(), args(&env));
    let manager = with_webhooks(manager, &env, cronjob_webhooks());
    let controller = common::Controller::start(manager).await;
    wait_until_converting(&env).await;
    let v2s: Api<v2::CronJob> = Api::namespaced(env.client.clone(), &env.namespace);
    let written: v2::CronJob =
        serde_json::from_value(v2_cronjob("written-as-v2", json!({"minute": "*/1"}))).unwrap();
    v2s.create(&PostParams::default(), &written).await.unwrap();

    let stored = env.cronjobs().get("written-as-v2").await.unwrap();
    let due = common::first_run_after_creation(&stored, "*/1 * * * *");
    controller.reconcile_at(&env, "written-as-v2", due).await;
    let expected = format!("written-as-v2-{}", due.as_second());
    env.wait_for_jobs(&[expected.as_str()]).await;
    controller.shutdown().await;
}
