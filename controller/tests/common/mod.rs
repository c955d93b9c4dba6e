//! What the CronJob controller tests share: a namespace and a controlled clock per test, the
//! controller on a manager scoped to that namespace, CronJobs and owned Jobs, and waiting
//! for reconciles (counted from the manager's metrics).

#![allow(dead_code)] // Each test binary uses its own part of this module.

use std::sync::Arc;
use std::time::Duration;

use api::v1::CronJob;
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, Resource as _, ResourceExt as _};
use kubebuilder_envtest::shared;
use kubebuilder_runtime::metrics::Metrics;
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs, RunningManager, TestClock};
use serde_json::{Value, json};

/// How long anything the controller does may take to show.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// One test's namespace, admin client and clock.
pub struct TestEnv {
    pub client: Client,
    pub namespace: String,
    pub clock: TestClock,
}

impl TestEnv {
    /// Installs the CRD (idempotent) and makes a namespace; the clock shows the real time.
    pub async fn new(prefix: &str) -> Self {
        let plane = shared();
        plane
            .install_crds(&[CronJob::crd()])
            .await
            .expect("the CronJob CRD installs");
        Self {
            client: plane.client().await.unwrap(),
            namespace: plane.create_namespace(prefix).await.unwrap(),
            clock: TestClock::new(Timestamp::now()),
        }
    }

    pub fn cronjobs(&self) -> Api<CronJob> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    pub fn jobs(&self) -> Api<Job> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// Manager flags for this test: only this namespace, probes on a free loopback port.
    pub fn manager_args(&self) -> ManagerArgs {
        ManagerArgs {
            health_probe_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
            namespaces: vec![self.namespace.clone()],
            ..ManagerArgs::default()
        }
    }

    /// The CronJob controller on a manager of its own, reading this test's clock.
    pub async fn start_controller(&self) -> Controller {
        Controller::start(self.manager(self.client.clone(), self.manager_args())).await
    }

    /// A manager with the CronJob controller reading this test's clock, not yet started.
    pub fn manager(&self, client: Client, args: ManagerArgs) -> Manager {
        controller::cronjob::setup_with_manager(
            Manager::new(client, args),
            Arc::new(self.clock.clone()),
        )
    }

    /// Creates a CronJob with a minimal valid spec, `spec` merged over it.
    pub async fn create_cronjob(&self, name: &str, spec: Value) -> CronJob {
        let mut object = json!({
            "apiVersion": "batch.tutorial.kubebuilder.io/v1",
            "kind": "CronJob",
            "metadata": {"name": name},
            "spec": {
                "schedule": "*/5 * * * *",
                "jobTemplate": {
                    "metadata": {"labels": {"app": name}, "annotations": {"owner": "tests"}},
                    "spec": {"template": {"spec": {
                        "containers": [{"name": "hello", "image": "busybox"}],
                        "restartPolicy": "Never"
                    }}}
                }
            }
        });
        for (key, value) in spec.as_object().expect("spec overrides are an object") {
            object["spec"][key] = value.clone();
        }
        let cronjob: CronJob = serde_json::from_value(object).unwrap();
        self.cronjobs()
            .create(&PostParams::default(), &cronjob)
            .await
            .unwrap()
    }

    /// Creates a Job controlled by `cronjob` (as if the controller had made it for the
    /// run at `scheduled`), then gives it `status` (the status subresource: no kubelet
    /// or Job controller runs here).
    pub async fn create_owned_job(
        &self,
        cronjob: &CronJob,
        name: &str,
        scheduled: Timestamp,
        status: JobStatus,
    ) -> Job {
        let mut job = controller::cronjob::jobs::job_for_run(cronjob, scheduled);
        job.metadata.name = Some(name.to_owned());
        let created = self
            .jobs()
            .create(&PostParams::default(), &job)
            .await
            .unwrap();
        self.set_job_status(name, status).await;
        created
    }

    /// Moves a Job to `status`, with the fields the apiserver's Job status validation
    /// requires of a finished Job.
    pub async fn set_job_status(&self, name: &str, status: JobStatus) {
        let patch = match status {
            JobStatus::Active => return,
            JobStatus::Succeeded { started } => json!({"status": {
                "startTime": started.to_string(),
                "completionTime": (started + jiff::SignedDuration::from_secs(1)).to_string(),
                "succeeded": 1,
                "conditions": [
                    condition_json("SuccessCriteriaMet", started),
                    condition_json("Complete", started),
                ]
            }}),
            JobStatus::Failed { started } => json!({"status": {
                "startTime": started.to_string(),
                "failed": 1,
                "conditions": [
                    condition_json("FailureTarget", started),
                    condition_json("Failed", started),
                ]
            }}),
        };
        self.jobs()
            .patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .unwrap_or_else(|error| panic!("setting the status of Job {name}: {error}"));
    }

    /// The names of the Jobs in the namespace, sorted.
    pub async fn job_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .jobs()
            .list(&ListParams::default())
            .await
            .unwrap()
            .into_iter()
            .map(|job| job.name_any())
            .collect();
        names.sort();
        names
    }

    /// The Events with this reason in the namespace.
    pub async fn events(&self, reason: &str) -> Vec<Event> {
        Api::<Event>::namespaced(self.client.clone(), &self.namespace)
            .list(&ListParams::default())
            .await
            .unwrap()
            .into_iter()
            .filter(|event| event.reason.as_deref() == Some(reason))
            .collect()
    }

    /// Waits until the CronJob's condition `type_` has this status and reason.
    pub async fn wait_for_condition(
        &self,
        name: &str,
        type_: &str,
        status: &str,
        reason: &str,
    ) -> CronJob {
        let cronjobs = self.cronjobs();
        eventually(
            &format!("{name}: {type_}={status}/{reason}"),
            TIMEOUT,
            || async {
                let cronjob = cronjobs.get(name).await.unwrap();
                condition(&cronjob, type_)
                    .is_some_and(|condition| {
                        condition.status == status && condition.reason == reason
                    })
                    .then_some(cronjob)
            },
        )
        .await
    }

    /// Waits until the namespace holds exactly these Jobs.
    pub async fn wait_for_jobs(&self, expected: &[&str]) {
        let mut expected: Vec<String> = expected.iter().map(|name| (*name).to_owned()).collect();
        expected.sort();
        eventually(&format!("the Jobs {expected:?}"), TIMEOUT, || async {
            (self.job_names().await == expected).then_some(())
        })
        .await;
    }
}

/// A Job's state, as a test sets it.
#[derive(Clone, Copy, Debug)]
pub enum JobStatus {
    Active,
    Succeeded { started: Timestamp },
    Failed { started: Timestamp },
}

fn condition_json(type_: &str, at: Timestamp) -> Value {
    json!({"type": type_, "status": "True", "lastTransitionTime": at.to_string(), "lastProbeTime": at.to_string()})
}

/// The CronJob's condition of this type.
pub fn condition<'a>(cronjob: &'a CronJob, type_: &str) -> Option<&'a Condition> {
    controller::cronjob::conditions::find(&cronjob.status.as_ref()?.conditions, type_)
}

/// A started manager running the CronJob controller, and its metrics.
pub struct Controller {
    pub running: RunningManager,
    pub metrics: Metrics,
}

impl Controller {
    pub async fn start(manager: Manager) -> Self {
        let metrics = manager.metrics().clone();
        let running = manager.start().await.expect("the manager starts");
        Self { running, metrics }
    }

    /// Reconciles finished so far (any result).
    pub fn reconciles(&self) -> u64 {
        reconciles(&self.metrics)
    }

    /// Reconciles that failed so far.
    pub fn failed_reconciles(&self) -> u64 {
        metric_sum(
            &self.metrics,
            "controller_runtime_reconcile_errors_total{controller=\"cronjob\"}",
        )
    }

    /// Waits until no reconcile is running.
    pub async fn wait_idle(&self) {
        eventually("the controller to be idle", TIMEOUT, || async {
            (metric_sum(
                &self.metrics,
                "controller_runtime_active_workers{controller=\"cronjob\"}",
            ) == 0)
                .then_some(())
        })
        .await;
    }

    /// Sets the clock to `now` and has the CronJob reconciled at that time: returns once
    /// a reconcile that started after the clock moved has finished.
    pub async fn reconcile_at(&self, env: &TestEnv, name: &str, now: Timestamp) {
        env.clock.set(now);
        // Every reconcile counted after this point started with the new time.
        self.wait_idle().await;
        let before = self.reconciles();
        nudge(&env.cronjobs(), name).await;
        eventually(
            &format!("a reconcile of {name} at {now}"),
            TIMEOUT,
            || async { (self.reconciles() > before).then_some(()) },
        )
        .await;
        self.wait_idle().await;
    }

    pub async fn shutdown(self) {
        self.running
            .shutdown()
            .await
            .expect("the manager stops cleanly");
    }
}

/// Reconciles finished so far by the cronjob controller of these metrics.
pub fn reconciles(metrics: &Metrics) -> u64 {
    metric_sum(
        metrics,
        "controller_runtime_reconcile_total{controller=\"cronjob\",",
    )
}

/// The sum of the samples whose series starts with `prefix`.
pub fn metric_sum(metrics: &Metrics, prefix: &str) -> u64 {
    metrics
        .encode()
        .lines()
        .filter(|line| line.starts_with(prefix))
        .filter_map(|line| line.rsplit_once(' '))
        .map(|(_, value)| value.parse::<f64>().expect("a numeric sample") as u64)
        .sum()
}

/// Touches the CronJob (an annotation): a watch event, hence a reconcile.
pub async fn nudge(cronjobs: &Api<CronJob>, name: &str) {
    let patch =
        json!({"metadata": {"annotations": {"test/nudged-at": Timestamp::now().to_string()}}});
    cronjobs
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap();
}

/// The first run of `schedule` (UTC) after the CronJob was created.
pub fn first_run_after_creation(cronjob: &CronJob, schedule: &str) -> Timestamp {
    let created = cronjob.meta().creation_timestamp.as_ref().unwrap().0;
    schedule
        .parse::<controller::cronjob::schedule::Schedule>()
        .unwrap()
        .next_after(created)
        .unwrap()
}

pub use kubebuilder_envtest::eventually;

/// A port free at the time of asking.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The `controller` binary as deployed, a process of its own, before it starts: on the
/// shared control plane, watching only `namespace`, its metrics (plain HTTP) and probes
/// on free loopback ports, webhooks off; stdout dropped, stopped when dropped.
pub struct ControllerBinary {
    pub command: tokio::process::Command,
    pub metrics: kubebuilder_envtest::http_client::HttpClient,
    pub probes: kubebuilder_envtest::http_client::HttpClient,
}

impl ControllerBinary {
    pub fn new(namespace: &str) -> Self {
        let (metrics_port, probe_port) = (free_port(), free_port());
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_controller"));
        command
            .args([
                format!("--namespace={namespace}"),
                format!("--metrics-bind-address=127.0.0.1:{metrics_port}"),
                "--metrics-secure=false".to_owned(),
                format!("--health-probe-bind-address=127.0.0.1:{probe_port}"),
            ])
            .env("KUBECONFIG", shared().kubeconfig_path())
            .env("ENABLE_WEBHOOKS", "false")
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true);
        let plain = |port| {
            kubebuilder_envtest::http_client::HttpClient::plain(([127, 0, 0, 1], port).into())
        };
        Self {
            command,
            metrics: plain(metrics_port),
            probes: plain(probe_port),
        }
    }
}
