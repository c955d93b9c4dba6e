//! The manager's shared cache with the CronJob controller and a second controller of Jobs:
//! one Job watch for both, counted by the apiserver itself (`apiserver_longrunning_requests`
//! on its `/metrics`), on a control plane of this test's own so that no other test's
//! watches count.

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use api::v1::CronJob;
use common::{TIMEOUT, eventually};
use k8s_openapi::api::batch::v1::Job;
use kube::ResourceExt as _;
use kube::api::{Api, PostParams};
use kube::runtime::controller::Action;
use kubebuilder_envtest::{ControlPlane, open_watches};
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs, SystemClock};
use serde_json::json;

/// A second controller of Jobs: records each Job it reconciles.
async fn audit(
    job: Arc<Job>,
    seen: Arc<Mutex<BTreeSet<String>>>,
) -> Result<Action, std::io::Error> {
    seen.lock().unwrap().insert(job.name_any());
    Ok(Action::await_change())
}

#[tokio::test]
async fn two_controllers_of_jobs_share_one_job_watch() {
    let plane = tokio::task::spawn_blocking(ControlPlane::start)
        .await
        .unwrap()
        .expect("a control plane starts");
    plane.install_crds(&[CronJob::crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("shared-cache").await.unwrap();
    let before = open_watches(&client).await.unwrap();

    let audited = Arc::new(Mutex::new(BTreeSet::new()));
    let args = ManagerArgs {
        health_probe_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        namespaces: vec![namespace.clone()],
        ..ManagerArgs::default()
    };
    let manager = controller::cronjob::setup_with_manager(
        Manager::new(client.clone(), args),
        Arc::new(SystemClock),
    )
    .controller("job-auditor", {
        let audited = audited.clone();
        move |context| {
            let audited = audited.clone();
            async move {
                context
                    .run(|scope| scope.controller_for::<Job>(), audit, audited)
                    .await;
            }
        }
    });
    let running = manager.start().await.unwrap();

    // A CronJob that runs rarely, and a Job it controls (as if created for a run).
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), &namespace);
    let cronjob: CronJob = serde_json::from_value(json!({
        "apiVersion": "batch.tutorial.kubebuilder.io/v1",
        "kind": "CronJob",
        "metadata": {"name": "yearly"},
        "spec": {
            "schedule": "0 0 1 1 *",
            "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "hello", "image": "busybox"}],
                "restartPolicy": "Never"
            }}}}
        }
    }))
    .unwrap();
    let cronjob = cronjobs
        .create(&PostParams::default(), &cronjob)
        .await
        .unwrap();
    let mut job = controller::cronjob::jobs::job_for_run(&cronjob, jiff::Timestamp::now());
    job.metadata.name = Some("yearly-by-hand".into());
    Api::<Job>::namespaced(client.clone(), &namespace)
        .create(&PostParams::default(), &job)
        .await
        .unwrap();

    // Both controllers see the Job: the auditor reconciles it, and the CronJob controller
    // finds it through the cache's index and lists it as active.
    eventually("both controllers to see the Job", TIMEOUT, || async {
        let active = cronjobs
            .get("yearly")
            .await
            .unwrap()
            .status
            .map(|status| status.active)
            .unwrap_or_default();
        let listed = active
            .iter()
            .any(|job| job.name.as_deref() == Some("yearly-by-hand"));
        (listed && audited.lock().unwrap().contains("yearly-by-hand")).then_some(())
    })
    .await;

    // One watch per kind for the whole manager.
    let after = eventually("the watches counted", Duration::from_secs(10), || async {
        let after = open_watches(&client).await.unwrap();
        let opened = |resource: &str| {
            after.get(resource).copied().unwrap_or(0) - before.get(resource).copied().unwrap_or(0)
        };
        (opened("jobs") >= 1 && opened("cronjobs") >= 1).then_some(after)
    })
    .await;
    let opened = |resource: &str| {
        after.get(resource).copied().unwrap_or(0) - before.get(resource).copied().unwrap_or(0)
    };
    assert_eq!(
        (opened("jobs"), opened("cronjobs")),
        (1, 1),
        "two controllers of Jobs, one Job watch (apiserver's count before {before:?}, after {after:?})"
    );
    running.shutdown().await.unwrap();
}
