//! The CronJob controller on its manager: leader election between two replicas, metrics
//! scraped with and without authorization, the controller running with nothing but its
//! generated role, and the `controller` binary itself.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{Controller, TIMEOUT, TestEnv, eventually, first_run_after_creation, free_port};
use jiff::SignedDuration;
use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, RoleBinding};
use kube::Client;
use kube::api::{Api, PostParams};
use kubebuilder_envtest::http_client::HttpClient;
use kubebuilder_runtime::{BindAddress, ManagerArgs};
use serde_json::json;

/// The lease duration of the leader-election test: short, so a crash test would be quick;
/// a graceful handover must not need it at all.
const LEASE_DURATION: Duration = Duration::from_secs(6);

#[tokio::test]
async fn only_the_leader_reconciles_and_a_handover_never_runs_a_schedule_twice() {
    let env = TestEnv::new("cj-leader").await;
    let replica = || {
        let args = ManagerArgs {
            leader_elect: true,
            leader_election_namespace: Some(env.namespace.clone()),
            leader_elect_lease_duration: LEASE_DURATION,
            leader_elect_renew_deadline: LEASE_DURATION - Duration::from_secs(2),
            leader_elect_retry_period: Duration::from_secs(1),
            ..env.manager_args()
        };
        env.manager(env.client.clone(), args)
            .leader_election_id("cronjob-test-lease")
    };
    let first = Controller::start(replica()).await;
    let second = Controller::start(replica()).await;
    let leading = |controller: &Controller| *controller.running.leading().borrow();
    eventually("a leader", TIMEOUT, || async {
        (leading(&first) || leading(&second)).then_some(())
    })
    .await;
    let (leader, follower) = if leading(&first) {
        (first, second)
    } else {
        (second, first)
    };

    // A run is due: the leader starts it, the follower does nothing.
    let cronjob = env.create_cronjob("elected", json!({})).await;
    let run = first_run_after_creation(&cronjob, "*/5 * * * *");
    let first_job = format!("elected-{}", run.as_second());
    leader
        .reconcile_at(&env, "elected", run + SignedDuration::from_secs(5))
        .await;
    env.wait_for_jobs(&[&first_job]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(leader.reconciles() > 0);
    assert_eq!(follower.reconciles(), 0, "the follower reconciles nothing");
    assert!(!leading(&follower));

    // A graceful stop releases the lease: the follower takes over at once (well within the
    // lease duration), reconciles the CronJob at the same time, and starts nothing twice.
    leader.shutdown().await;
    eventually("the follower to take over", LEASE_DURATION, || async {
        leading(&follower).then_some(())
    })
    .await;
    eventually("the new leader to reconcile", TIMEOUT, || async {
        (follower.reconciles() > 0).then_some(())
    })
    .await;
    follower.wait_idle().await;
    assert_eq!(env.job_names().await, std::slice::from_ref(&first_job));
    assert_eq!(env.events("SuccessfulCreate").await.len(), 1);

    // The new leader keeps the schedule.
    let next = run + SignedDuration::from_secs(300);
    follower
        .reconcile_at(&env, "elected", next + SignedDuration::from_secs(5))
        .await;
    env.wait_for_jobs(&[&first_job, &format!("elected-{}", next.as_second())])
        .await;
    follower.shutdown().await;
}

#[tokio::test]
async fn metrics_need_an_authorized_token_and_count_the_reconciles() {
    let env = TestEnv::new("cj-metrics").await;
    let args = ManagerArgs {
        metrics_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        ..env.manager_args()
    };
    let controller = Controller::start(env.manager(env.client.clone(), args)).await;
    env.create_cronjob("measured", json!({})).await;
    env.wait_for_condition("measured", "Available", "True", "AllJobsCompleted")
        .await;

    // Self-signed: the scraper cannot verify the server (`curl -k`).
    let scraper = HttpClient::tls_unverified(controller.running.metrics_addr().unwrap());
    let anonymous = scraper.get("/metrics", None).await.unwrap();
    assert_eq!(anonymous.status.as_u16(), 401, "{}", anonymous.text());

    let outsider = kubebuilder_envtest::shared()
        .service_account_token(&env.namespace, "outsider")
        .await
        .unwrap();
    let forbidden = scraper.get("/metrics", Some(&outsider)).await.unwrap();
    assert_eq!(forbidden.status.as_u16(), 403, "{}", forbidden.text());

    let prometheus = kubebuilder_envtest::shared()
        .service_account_token(&env.namespace, "prometheus")
        .await
        .unwrap();
    let reader: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": format!("{}-metrics-reader", env.namespace)},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    }))
    .unwrap();
    kubebuilder_envtest::shared()
        .grant_cluster_role(&reader, &env.namespace, "prometheus")
        .await
        .unwrap();
    // RBAC reaches the authorizer through its informers: allow a moment.
    let scraped = eventually("the metrics-reader binding to apply", TIMEOUT, || async {
        let reply = scraper.get("/metrics", Some(&prometheus)).await.unwrap();
        (reply.status.as_u16() == 200).then_some(reply.text())
    })
    .await;
    // A CronJob with a schedule comes back for its next run: `requeue_after`.
    let reconciled = scraped
        .lines()
        .find(|line| line.starts_with("controller_runtime_reconcile_total{controller=\"cronjob\",result=\"requeue_after\"}"))
        .unwrap_or_else(|| panic!("no reconcile count in\n{scraped}"));
    let count: u64 = reconciled.rsplit_once(' ').unwrap().1.parse().unwrap();
    assert!(count >= 1, "{reconciled}");
    for series in [
        "controller_runtime_reconcile_errors_total{controller=\"cronjob\"} 0",
        "controller_runtime_reconcile_time_seconds_count{controller=\"cronjob\"}",
        "controller_runtime_active_workers{controller=\"cronjob\"}",
    ] {
        assert!(scraped.contains(series), "missing {series:?} in\n{scraped}");
    }
    controller.shutdown().await;
}

/// A client for a new service account of the test namespace that may do what `role`
/// allows there, and nothing else (the role is bound in the namespace only, as the
/// manager watches only that namespace here).
async fn client_with_role(env: &TestEnv, mut role: ClusterRole) -> Client {
    let role_name = format!(
        "{}-{}",
        env.namespace,
        role.metadata.name.as_deref().unwrap()
    );
    role.metadata.name = Some(role_name.clone());
    Api::<ClusterRole>::all(env.client.clone())
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let account = "controller-manager";
    let account_object: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": account}})).unwrap();
    Api::<ServiceAccount>::namespaced(env.client.clone(), &env.namespace)
        .create(&PostParams::default(), &account_object)
        .await
        .unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "manager-rolebinding"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": env.namespace}]
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(env.client.clone(), &env.namespace)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    kubebuilder_envtest::shared()
        .client_as_service_account(&env.namespace, account)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_generated_role_is_all_the_controller_needs() {
    let env = TestEnv::new("cj-rbac").await;
    // The role `cargo xtask manifests` writes to config/rbac/role.yaml: the rules the
    // reconciler's attributes registered, and the runtime's own (the Events it records).
    let declared = kubebuilder::rbac::roles(&kubebuilder::rbac::registered(), "manager-role");
    let roles = kubebuilder::rbac::with_runtime_rules(declared, None);
    let [kubebuilder::rbac::GeneratedRole::Cluster(role)] = roles.as_slice() else {
        panic!("expected one ClusterRole, got {roles:?}");
    };
    let as_manager = client_with_role(&env, role.clone()).await;
    let controller = Controller::start(env.manager(as_manager, env.manager_args())).await;
    // Everything the reconciler does: read Jobs and CronJobs, write status, create a Job
    // with blockOwnerDeletion, delete Jobs beyond the history limit, record Events.
    let cronjob = env
        .create_cronjob("restricted", json!({"successfulJobsHistoryLimit": 0}))
        .await;
    let run = first_run_after_creation(&cronjob, "*/5 * * * *");
    let job = format!("restricted-{}", run.as_second());
    controller
        .reconcile_at(&env, "restricted", run + SignedDuration::from_secs(5))
        .await;
    env.wait_for_jobs(&[&job]).await;
    env.wait_for_condition("restricted", "Progressing", "True", "JobsActive")
        .await;
    env.set_job_status(&job, common::JobStatus::Succeeded { started: run })
        .await;
    env.wait_for_jobs(&[]).await;
    assert_eq!(
        env.events("SuccessfulCreate").await.len(),
        1,
        "Events are recorded"
    );
    // The reconcile records the deletion's Event after the deletion: the Job can be seen
    // gone before the Event exists.
    let deleted = eventually("the deletion's Event", TIMEOUT, || async {
        let events = env.events("SuccessfulDelete").await;
        (!events.is_empty()).then_some(events)
    })
    .await;
    assert_eq!(deleted.len(), 1, "Events are recorded");
    let cronjob = env.cronjobs().get("restricted").await.unwrap();
    assert!(
        common::condition(&cronjob, "Degraded").is_none(),
        "{:?}",
        cronjob.status
    );
    controller.shutdown().await;
}

#[tokio::test]
async fn the_controller_binary_serves_webhooks_on_loopback_and_stops_cleanly() {
    // A control plane of its own: the binary registers its webhooks for every namespace,
    // which must not reach the other tests' CronJobs.
    let plane = tokio::task::spawn_blocking(kubebuilder_envtest::ControlPlane::start)
        .await
        .unwrap()
        .expect("a control plane starts");
    let client = plane.client().await.unwrap();
    plane
        .install_crds(&[api::v1::CronJob::crd()])
        .await
        .unwrap();
    let probe_port = free_port();
    let mut manager = tokio::process::Command::new(env!("CARGO_BIN_EXE_controller"))
        .args([
            &format!("--health-probe-bind-address=127.0.0.1:{probe_port}"),
            &format!("--webhook-port={}", free_port()),
            "--register-webhooks-on-loopback",
        ])
        .env("KUBECONFIG", plane.kubeconfig_path())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the controller binary starts");
    let probes = HttpClient::plain(([127, 0, 0, 1], probe_port).into());
    eventually("the manager to be ready", TIMEOUT, || async {
        let ready = probes.get("/readyz", None).await.ok()?;
        (ready.status.as_u16() == 200).then_some(())
    })
    .await;

    // The apiserver calls the binary's defaulting webhook, and its controller reconciles.
    let cronjobs: Api<api::v1::CronJob> = Api::default_namespaced(client.clone());
    let cronjob: api::v1::CronJob = serde_json::from_value(json!({
        "apiVersion": "batch.tutorial.kubebuilder.io/v1",
        "kind": "CronJob",
        "metadata": {"name": "from-the-binary"},
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "hello", "image": "busybox"}],
                "restartPolicy": "Never"
            }}}}
        }
    }))
    .unwrap();
    let created = cronjobs
        .create(&PostParams::default(), &cronjob)
        .await
        .unwrap();
    assert_eq!(
        created.spec.successful_jobs_history_limit,
        Some(3),
        "defaulted by the webhook"
    );
    eventually("the CronJob to be reconciled", TIMEOUT, || async {
        let cronjob = cronjobs.get("from-the-binary").await.unwrap();
        common::condition(&cronjob, "Available").map(|_| ())
    })
    .await;

    // SIGTERM: a clean exit, the loopback registration removed.
    let pid = manager.id().expect("the manager runs");
    let signalled = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let status = tokio::time::timeout(TIMEOUT, manager.wait())
        .await
        .expect("the manager exits after SIGTERM")
        .unwrap();
    assert!(status.success(), "{status}");
    let configurations = Api::<MutatingWebhookConfiguration>::all(client)
        .list(&Default::default())
        .await
        .unwrap();
    assert!(
        configurations.items.is_empty(),
        "{:?}",
        configurations.items
    );
}

#[tokio::test]
async fn jobs_it_may_not_list_are_reported_in_the_status() {
    let env = TestEnv::new("cj-no-jobs").await;
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "cronjobs-only"},
        "rules": [
            {"apiGroups": ["batch.tutorial.kubebuilder.io"], "resources": ["cronjobs"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["batch.tutorial.kubebuilder.io"], "resources": ["cronjobs/status"], "verbs": ["update"]}
        ]
    }))
    .unwrap();
    let as_manager = client_with_role(&env, role).await;
    let controller = Controller::start(env.manager(as_manager, env.manager_args())).await;
    env.create_cronjob("blind", json!({})).await;

    // After waiting for the Job cache in vain, the reconcile says why.
    let cronjob = env
        .wait_for_condition("blind", "Degraded", "True", "ReconciliationError")
        .await;
    let message = &common::condition(&cronjob, "Degraded").unwrap().message;
    assert!(
        message.starts_with("Failed to list child jobs: "),
        "{message}"
    );
    assert!(
        message.contains("cannot list resource \"jobs\""),
        "{message}"
    );
    // The reconcile writes the condition and only then returns the error that is counted:
    // the condition can be read before the count moves, so the count is waited for.
    eventually("the failed reconcile to be counted", TIMEOUT, || async {
        (controller.failed_reconciles() >= 1).then_some(())
    })
    .await;
    controller.shutdown().await;
}
