//! Faults 3 and 5 of the fault suite (`cargo xtask test-faults`): the CronJob controller runs
//! on a control plane of the test's own, with CronJobs due every minute, while its
//! kube-apiserver or its etcd is killed (SIGKILL) for 30 s, or while the ClusterRoleBinding
//! of its generated role is deleted for 30 s. Each fault starts 10 s before a minute, so a
//! run of every CronJob falls due during it. Each test prints its `fault-report` line, then
//! fails when the line's contract does not hold.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use api::v1::CronJob;
use common::{Controller, TIMEOUT, TestEnv, metric_sum};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::{Client, ResourceExt as _};
use kubebuilder_envtest::faults::{self, FaultReport};
use kubebuilder_envtest::http_client::HttpClient;
use kubebuilder_envtest::{ControlPlane, Options};
use kubebuilder_runtime::{Manager, SystemClock};
use serde_json::json;

/// How long each fault lasts, unless `FAULT_OUTAGE_SECONDS` says otherwise (the issue's
/// 30 s; the bounded run has fewer cycles, not shorter faults).
const DEFAULT_OUTAGE: Duration = Duration::from_secs(30);
/// How long before a minute the fault starts: the run at that minute falls due during it.
const LEAD: Duration = Duration::from_secs(10);
/// The CronJobs, each due every minute.
const CRONJOBS: usize = 3;
/// Their `startingDeadlineSeconds`: a run due during the fault is still inside it after.
const STARTING_DEADLINE_SECONDS: i64 = 120;
/// The informers the controller runs (CronJobs and Jobs, in one namespace).
const INFORMERS: u64 = 2;
/// Requests allowed during one fault, per informer: a watch retried with kube's back-off
/// (0.8 s doubling to 30 s) makes about 7 attempts in 30 s.
const REQUESTS_PER_INFORMER: u64 = 20;
/// Requests allowed during one fault, per CronJob with a run due: its reconcile fails and is
/// retried with a back-off of 5 ms doubling, about 13 times in 20 s, with up to three
/// requests each (create the Job, write the status, record the Event). A hot loop makes
/// thousands.
const REQUESTS_PER_CRONJOB: u64 = 60;
/// Failed reconciles allowed per CronJob during one fault (the back-off's doubling).
const FAILURES_PER_CRONJOB: u64 = 20;
/// LIST requests allowed per informer once the control plane is back: one relist when the
/// watch's resource version is too old, one more if that list itself failed.
const LISTS_PER_INFORMER: u64 = 2;
/// From the fault's start, by when `/readyz` must report it: the cache counts a watch
/// unanswered after `ANSWER_TIMEOUT` as disconnected (a failed one at once), asks the
/// apiserver's `/readyz` with a 2 s timeout, and the probe is polled every second.
const DETECTION: Duration =
    Duration::from_secs(kubebuilder_runtime::cache::ANSWER_TIMEOUT.as_secs() + 3);
/// How long recovery may take: the watch's back-off (up to 30 s) plus its relist.
const RECOVERY_TIMEOUT: Duration = Duration::from_secs(90);

fn outage() -> Duration {
    std::env::var("FAULT_OUTAGE_SECONDS")
        .ok()
        .and_then(|seconds| seconds.parse().ok())
        .map_or(DEFAULT_OUTAGE, Duration::from_secs)
}

/// The part of the control plane a fault kills.
#[derive(Clone, Copy)]
enum Part {
    Apiserver,
    Etcd,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Apiserver => "apiserver",
            Part::Etcd => "etcd",
        }
    }

    fn kill(self, plane: &mut ControlPlane) {
        match self {
            Part::Apiserver => plane.kill_apiserver(),
            Part::Etcd => plane.kill_etcd(),
        }
    }

    fn start(self, plane: &mut ControlPlane) {
        let started = tokio::task::block_in_place(|| match self {
            Part::Apiserver => plane.start_apiserver(),
            Part::Etcd => plane.start_etcd(),
        });
        started.unwrap_or_else(|error| panic!("restarting {}: {error:#}", self.name()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_rides_out_its_apiserver_killed_for_30_s() {
    control_plane_down(Part::Apiserver).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_rides_out_etcd_killed_for_30_s() {
    control_plane_down(Part::Etcd).await;
}

/// Fault 3: `part` killed for the outage and started again, once per cycle.
async fn control_plane_down(part: Part) {
    let mut rig = Rig::start("faults-down").await;
    let mut report = FaultReport::new(&format!("{} down {} s", part.name(), outage().as_secs()));
    let mut cycle_figures = Vec::new();
    for _ in 0..faults::slow_cycles() {
        let figures = rig.outage(part).await;
        report.recoveries.push(figures.recovery);
        cycle_figures.push(figures);
    }
    rig.finish(report, &cycle_figures).await;
}

/// The service account the controller runs as in fault 5.
const ACCOUNT: &str = "controller-manager";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_recovers_when_its_revoked_permissions_come_back() {
    let plane = start_plane();
    let env = env_on(&plane, "faults-rbac").await;
    let binding = grant_roles(&plane, &env.namespace).await;
    let as_manager = plane
        .client_as_service_account(&env.namespace, ACCOUNT)
        .await
        .unwrap();
    let mut rig = Rig::with(plane, env, Some(as_manager)).await;
    let mut report = FaultReport::new("permissions revoked");
    let mut cycle_figures = Vec::new();
    for _ in 0..faults::slow_cycles() {
        let figures = rig.revocation(&binding).await;
        report.recoveries.push(figures.recovery);
        cycle_figures.push(figures);
    }
    rig.finish(report, &cycle_figures).await;
}

/// Binds the controller's generated role (config/rbac/role.yaml) to [`ACCOUNT`], and returns
/// that binding, the one fault 5 deletes. A second, narrow role lets the controller read
/// CronJobs and write their status whatever happens: with nothing left, the Degraded
/// condition could not be written at all.
async fn grant_roles(plane: &ControlPlane, namespace: &str) -> ClusterRoleBinding {
    // With the runtime's own rules, as `manifests` adds them (the Events the reconciler
    // records need them).
    let declared = kubebuilder::rbac::roles(&kubebuilder::rbac::registered(), "manager-role");
    let roles = kubebuilder::rbac::with_runtime_rules(declared, None);
    let [kubebuilder::rbac::GeneratedRole::Cluster(role)] = roles.as_slice() else {
        panic!("expected one ClusterRole, got {roles:?}");
    };
    let reporter: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "cronjob-status-reporter"},
        "rules": [
            {"apiGroups": ["batch.tutorial.kubebuilder.io"], "resources": ["cronjobs"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["batch.tutorial.kubebuilder.io"], "resources": ["cronjobs/status"], "verbs": ["get", "update", "patch"]}
        ]
    }))
    .unwrap();
    for role in [role, &reporter] {
        plane
            .grant_cluster_role(role, namespace, ACCOUNT)
            .await
            .unwrap();
    }
    // The name grant_cluster_role gives the binding.
    let name = format!("{}-{namespace}-{ACCOUNT}", role.name_any());
    let admin = plane.client().await.unwrap();
    let mut binding = Api::<ClusterRoleBinding>::all(admin)
        .get(&name)
        .await
        .unwrap();
    // What it takes to create it again.
    binding.metadata = kube::api::ObjectMeta {
        name: Some(name),
        ..Default::default()
    };
    binding
}

/// What one cycle of a fault measured.
#[derive(Default)]
struct Figures {
    /// Fault over → the manager ready again (or → the first successful reconcile).
    recovery: Duration,
    /// The manager's requests to the apiserver while the fault lasted.
    requests: u64,
    /// Reconciles that failed while it lasted.
    failures: u64,
    /// LIST requests for CronJobs and Jobs once the control plane was back.
    lists: Option<u64>,
    /// Fault over → the last Job of a run due during it created.
    catch_up: Duration,
    /// Runs due during the fault left without a Job inside their deadline.
    misses: u64,
    /// What broke the fault's contract.
    violations: Vec<String>,
}

/// A control plane of the test's own, a namespace on it, and the CronJob controller (on the
/// real clock) running there with its CronJobs.
struct Rig {
    plane: ControlPlane,
    env: TestEnv,
    controller: Controller,
    probes: HttpClient,
}

impl Rig {
    /// Starts it all, the manager with the admin client.
    async fn start(prefix: &str) -> Self {
        let plane = start_plane();
        let env = env_on(&plane, prefix).await;
        Self::with(plane, env, None).await
    }

    /// The controller on `env`, through `manager_client` when given (else the admin's).
    async fn with(plane: ControlPlane, env: TestEnv, manager_client: Option<Client>) -> Self {
        let client = manager_client.unwrap_or_else(|| env.client.clone());
        let manager = controller::cronjob::setup_with_manager(
            Manager::new(client, env.manager_args()),
            Arc::new(SystemClock),
        );
        let controller = Controller::start(manager).await;
        let probes = HttpClient::plain(controller.running.probe_addr().unwrap());
        for index in 0..CRONJOBS {
            let spec = json!({
                "schedule": "* * * * *",
                "startingDeadlineSeconds": STARTING_DEADLINE_SECONDS,
            });
            env.create_cronjob(&format!("every-minute-{index}"), spec)
                .await;
        }
        let rig = Self {
            plane,
            env,
            controller,
            probes,
        };
        common::eventually("the manager to be ready", TIMEOUT, || async {
            (rig.readiness().await == Some(200)).then_some(())
        })
        .await;
        rig
    }

    /// The status of `/readyz/cronjob`: 200 ready, 500 not, 404 when the controller has
    /// stopped; `None` when the manager does not answer at all.
    async fn readiness(&self) -> Option<u16> {
        let reply = self.probes.get("/readyz/cronjob", None).await.ok()?;
        Some(reply.status.as_u16())
    }

    /// The manager's requests to the apiserver so far, from its own metrics.
    fn requests(&self) -> u64 {
        metric_sum(&self.controller.metrics, "rest_client_requests_total{")
    }

    /// Reconciles that did not fail so far.
    fn successes(&self) -> u64 {
        self.controller.reconciles() - self.controller.failed_reconciles()
    }

    /// One cycle of fault 3.
    async fn outage(&mut self, part: Part) -> Figures {
        let first_due = sleep_until_lead().await;
        let lists_before = match part {
            // A restarted apiserver counts from zero.
            Part::Apiserver => 0,
            Part::Etcd => list_requests(&self.env.client).await,
        };
        let (requests, failures) = (self.requests(), self.controller.failed_reconciles());
        let killed = Instant::now();
        part.kill(&mut self.plane);
        let mut figures = Figures::default();
        self.watch_readiness_until(killed + outage(), killed, true, &mut figures)
            .await;
        figures.requests = self.requests() - requests;
        figures.failures = self.controller.failed_reconciles() - failures;
        let back = Instant::now();
        let back_at = Timestamp::now();
        part.start(&mut self.plane);
        figures.recovery = self.wait_until_ready(back, &mut figures).await;
        self.check_runs_created(first_due, back_at, &mut figures)
            .await;
        figures.lists = Some(list_requests(&self.env.client).await - lists_before);
        self.check_bounds(&mut figures);
        figures
    }

    /// One cycle of fault 5: `binding` deleted for the outage, then created again.
    async fn revocation(&mut self, binding: &ClusterRoleBinding) -> Figures {
        let first_due = sleep_until_lead().await;
        let bindings = Api::<ClusterRoleBinding>::all(self.env.client.clone());
        let (requests, failures) = (self.requests(), self.controller.failed_reconciles());
        let revoked = Instant::now();
        bindings
            .delete(&binding.name_any(), &DeleteParams::default())
            .await
            .unwrap();
        let mut figures = Figures::default();
        // Watches opened before stay open: readiness is not part of this fault's contract.
        self.watch_readiness_until(revoked + outage(), revoked, false, &mut figures)
            .await;
        figures.requests = self.requests() - requests;
        figures.failures = self.controller.failed_reconciles() - failures;
        if figures.failures == 0 {
            figures
                .violations
                .push("no reconcile failed while revoked".into());
        }
        self.check_degraded("True", "JobCreationFailed", &mut figures)
            .await;
        let successes = self.successes();
        let back = Instant::now();
        let back_at = Timestamp::now();
        bindings
            .create(&PostParams::default(), binding)
            .await
            .unwrap();
        figures.recovery = self.wait_for_success(successes, back, &mut figures).await;
        self.check_runs_created(first_due, back_at, &mut figures)
            .await;
        self.check_degraded("False", "Recovered", &mut figures)
            .await;
        self.check_bounds(&mut figures);
        figures
    }

    /// Waits until every CronJob's Degraded condition has this status and reason.
    async fn check_degraded(&self, status: &str, reason: &str, figures: &mut Figures) {
        let cronjobs: Api<CronJob> = self.env.cronjobs();
        for index in 0..CRONJOBS {
            let name = format!("every-minute-{index}");
            let deadline = Instant::now() + TIMEOUT;
            let shows = |cronjob: &CronJob| {
                common::condition(cronjob, "Degraded")
                    .is_some_and(|degraded| degraded.status == status && degraded.reason == reason)
            };
            loop {
                let cronjob = cronjobs.get(&name).await.unwrap();
                if shows(&cronjob) {
                    break;
                }
                if Instant::now() > deadline {
                    figures.violations.push(format!(
                        "{name}: no Degraded={status}/{reason} in {:?}",
                        cronjob.status
                    ));
                    break;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }

    /// Waits for a reconcile that succeeds, after `successes` of them; how long it took
    /// from `back`.
    async fn wait_for_success(
        &self,
        successes: u64,
        back: Instant,
        figures: &mut Figures,
    ) -> Duration {
        while back.elapsed() < RECOVERY_TIMEOUT {
            if self.successes() > successes {
                return back.elapsed();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        figures.violations.push(format!(
            "no successful reconcile {RECOVERY_TIMEOUT:?} after the permissions came back"
        ));
        back.elapsed()
    }

    /// Polls `/readyz/cronjob` every second until `until`: the manager must answer, its
    /// controller must run, and (when `down`) it must not be ready from `DETECTION` after
    /// `start` on.
    async fn watch_readiness_until(
        &self,
        until: Instant,
        start: Instant,
        down: bool,
        figures: &mut Figures,
    ) {
        let mut reported = false;
        while Instant::now() < until {
            let status = self.readiness().await;
            match status {
                None => figures
                    .violations
                    .push("the manager stopped answering its probes".into()),
                Some(404) => figures
                    .violations
                    .push("the cronjob controller stopped".into()),
                Some(200) if down && start.elapsed() > DETECTION => figures
                    .violations
                    .push(format!("/readyz OK {:.0?} into the fault", start.elapsed())),
                Some(_) => reported |= status != Some(200),
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        if down && !reported {
            figures
                .violations
                .push("/readyz never reported the fault".into());
        }
    }

    /// Waits until `/readyz` is OK again; how long it took from `back`.
    async fn wait_until_ready(&self, back: Instant, figures: &mut Figures) -> Duration {
        while back.elapsed() < RECOVERY_TIMEOUT {
            if self.readiness().await == Some(200) {
                return back.elapsed();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        figures.violations.push(format!(
            "/readyz not OK {RECOVERY_TIMEOUT:?} after the fault"
        ));
        back.elapsed()
    }

    /// Every run of every CronJob due during the fault (each minute from `first_due` to
    /// `back_at`) must get its Job once the fault is over, inside its starting deadline.
    /// Reads by name: a LIST would count as a relist in the apiserver's metrics.
    async fn check_runs_created(
        &self,
        first_due: Timestamp,
        back_at: Timestamp,
        figures: &mut Figures,
    ) {
        let mut due = first_due;
        while due < back_at {
            for index in 0..CRONJOBS {
                self.check_run_created(&format!("every-minute-{index}"), due, back_at, figures)
                    .await;
            }
            due += SignedDuration::from_secs(60);
        }
    }

    async fn check_run_created(
        &self,
        cronjob: &str,
        due: Timestamp,
        back_at: Timestamp,
        figures: &mut Figures,
    ) {
        let deadline = due + SignedDuration::from_secs(STARTING_DEADLINE_SECONDS);
        let name = controller::cronjob::jobs::job_name(cronjob, due);
        let created = loop {
            if let Some(job) = self.env.jobs().get_opt(&name).await.ok().flatten() {
                break job.creation_timestamp().map(|time| time.0);
            }
            if Timestamp::now() > deadline {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        match created {
            Some(created) => {
                let after = created.duration_since(back_at).max(SignedDuration::ZERO);
                figures.catch_up = figures.catch_up.max(after.unsigned_abs());
            }
            None => {
                figures.misses += 1;
                figures
                    .violations
                    .push(format!("no Job {name} inside its deadline"));
            }
        }
    }

    /// The request, failure and LIST counts of a cycle against their bounds.
    fn check_bounds(&self, figures: &mut Figures) {
        let cronjobs = CRONJOBS as u64;
        let mut bounds = vec![
            (
                "requests during the fault",
                figures.requests,
                INFORMERS * REQUESTS_PER_INFORMER + cronjobs * REQUESTS_PER_CRONJOB,
            ),
            (
                "failed reconciles during the fault",
                figures.failures,
                cronjobs * FAILURES_PER_CRONJOB,
            ),
        ];
        if let Some(lists) = figures.lists {
            bounds.push((
                "LISTs after the fault",
                lists,
                INFORMERS * LISTS_PER_INFORMER,
            ));
        }
        for (what, count, bound) in bounds {
            if count > bound {
                figures
                    .violations
                    .push(format!("{count} {what}, more than {bound}"));
            }
        }
    }

    /// Prints the report of `cycles`, stops everything, and fails on any violation.
    async fn finish(self, mut report: FaultReport, cycles: &[Figures]) {
        report.cycles = cycles.len() as u64;
        report.misses = cycles.iter().map(|figures| figures.misses).sum();
        report.duplicates = self.duplicate_runs().await;
        let violations: Vec<&String> = cycles
            .iter()
            .flat_map(|figures| &figures.violations)
            .collect();
        report.errors = violations.len() as u64 + report.duplicates;
        let max = |figure: fn(&Figures) -> u64| cycles.iter().map(figure).max().unwrap_or(0);
        let catch_up = cycles.iter().map(|figures| figures.catch_up).max();
        let lists = cycles.iter().filter_map(|figures| figures.lists).max();
        report.detail = format!(
            "max per fault: {} requests, {} failed reconciles{}; runs caught up within {:.1} s",
            max(|figures| figures.requests),
            max(|figures| figures.failures),
            lists.map_or_else(String::new, |lists| format!(", {lists} LISTs after")),
            catch_up.unwrap_or_default().as_secs_f64(),
        );
        report.print();
        let Self {
            plane, controller, ..
        } = self;
        controller.shutdown().await;
        tokio::task::block_in_place(|| plane.stop());
        assert!(
            violations.is_empty() && report.duplicates == 0,
            "{}: {violations:#?}, {} duplicate runs",
            report.fault,
            report.duplicates
        );
    }

    /// Jobs beyond the first for one run of one CronJob (its scheduled-at annotation).
    async fn duplicate_runs(&self) -> u64 {
        let jobs = self.env.jobs().list(&ListParams::default()).await.unwrap();
        let mut runs: Vec<(String, String)> = jobs
            .iter()
            .map(|job: &Job| {
                let owner = job
                    .owner_references()
                    .first()
                    .map(|owner| owner.name.clone());
                let scheduled = job
                    .annotations()
                    .get(controller::cronjob::jobs::SCHEDULED_AT_ANNOTATION)
                    .cloned();
                (owner.unwrap_or_default(), scheduled.unwrap_or_default())
            })
            .collect();
        let all = runs.len();
        runs.sort();
        runs.dedup();
        (all - runs.len()) as u64
    }
}

/// `TestEnv::new` on `plane` instead of the shared control plane (`new` keeps the shape
/// the tutorial quotes).
async fn env_on(plane: &ControlPlane, prefix: &str) -> TestEnv {
    plane.install_crds(&[CronJob::crd()]).await.unwrap();
    TestEnv {
        client: plane.client().await.unwrap(),
        namespace: plane.create_namespace(prefix).await.unwrap(),
        clock: kubebuilder_runtime::TestClock::new(Timestamp::now()),
    }
}

/// A control plane of the test's own: one it may stop.
fn start_plane() -> ControlPlane {
    tokio::task::block_in_place(|| ControlPlane::start_with(Options::default()))
        .expect("the control plane starts")
}

/// Sleeps until `LEAD` before the next minute at least `LEAD` away; returns that minute.
async fn sleep_until_lead() -> Timestamp {
    let now = Timestamp::now();
    let lead = SignedDuration::try_from(LEAD).unwrap();
    let mut minute = Timestamp::from_second((now.as_second() / 60 + 1) * 60).unwrap();
    if minute.duration_since(now) < lead {
        minute += SignedDuration::from_secs(60);
    }
    let wait = (minute - lead).duration_since(now);
    tokio::time::sleep(wait.unsigned_abs()).await;
    minute
}

/// The LIST requests for CronJobs and Jobs the apiserver has served since it started, from
/// its own metrics (the tests read those kinds by name, so these are the manager's).
async fn list_requests(admin: &Client) -> u64 {
    // `/metrics` is the object "metrics" under the empty path: a GET of it.
    let request = kube::core::Request::new("")
        .get("metrics", &kube::api::GetParams::default())
        .unwrap();
    let metrics = admin.request_text(request).await.unwrap();
    metrics
        .lines()
        .filter(|line| line.starts_with("apiserver_request_total{"))
        .filter(|line| line.contains("verb=\"LIST\""))
        .filter(|line| line.contains("resource=\"jobs\"") || line.contains("resource=\"cronjobs\""))
        .filter_map(|line| line.rsplit_once(' ')?.1.parse::<f64>().ok())
        .map(|count| count as u64)
        .sum()
}
