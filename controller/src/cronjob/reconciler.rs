//! The CronJob reconciler. Its RBAC attributes are the permissions the manager's
//! ClusterRole (`config/rbac/role.yaml`, written by `cargo xtask manifests`) grants: every
//! call the reconciler makes must be covered here, and nothing more. The Events it records
//! are not: the runtime's recorder writes them, and `manifests` adds the runtime's own
//! rules (`kubebuilder::rbac::RUNTIME_RULES`) to that role.
//!
//! One reconcile follows kubebuilder's tutorial step by step (the numbers in the comments
//! below), with these differences: a Job that already exists when it is created counts as
//! created (restarts and leader changes never start a run twice), `spec.timeZone` is
//! honoured, Events are recorded, a run missed by more than `startingDeadlineSeconds` is
//! reported (see [`Schedule::runs`]), `lastScheduleTime` never moves back (a run whose Job
//! the history limits deleted is not run again) and is recorded as soon as a Job is
//! created, and the status is written only when it changed.

use std::sync::Arc;
use std::time::Duration;

use api::v1::{ConcurrencyPolicy, CronJob, CronJobStatus};
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Resource as _, ResourceExt as _};
use kubebuilder_runtime::cache::{CacheError, ListOptions};
use kubebuilder_runtime::events::{Event, EventType};
use kubebuilder_runtime::{Clock, Context};

use super::conditions::{self, DEGRADED, PROGRESSING, Status, Summary};
use super::jobs::{Children, JOB_OWNER_KEY, beyond_history_limit, job_for_run, job_reference};
use super::schedule::{Schedule, ScheduleError, is_past_deadline};

/// Reconciles CronJobs: keeps their Jobs running on schedule and their status current.
// The CronJobs it reconciles, their status and finalizers (the tutorial's markers; the
// finalizers permission lets it set blockOwnerDeletion on the Jobs it creates).
#[kubebuilder::rbac(
    groups = ["batch.tutorial.kubebuilder.io"],
    resources = ["cronjobs"],
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
)]
#[kubebuilder::rbac(
    groups = ["batch.tutorial.kubebuilder.io"],
    resources = ["cronjobs/status"],
    verbs = ["get", "update", "patch"]
)]
#[kubebuilder::rbac(
    groups = ["batch.tutorial.kubebuilder.io"],
    resources = ["cronjobs/finalizers"],
    verbs = ["update"]
)]
// The Jobs it creates, watches and deletes.
#[kubebuilder::rbac(
    groups = ["batch"],
    resources = ["jobs"],
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
)]
#[kubebuilder::rbac(groups = ["batch"], resources = ["jobs/status"], verbs = ["get"])]
pub struct CronJobReconciler {
    clock: Arc<dyn Clock>,
}

/// Why a reconcile failed; the object is retried with per-object back-off.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot list the Jobs of the CronJob: {0}")]
    ListJobs(#[source] CacheError),
    #[error("cannot update the CronJob status: {0}")]
    UpdateStatus(#[source] kube::Error),
    #[error("cannot delete active Job {job}: {source}")]
    DeleteActiveJob { job: String, source: kube::Error },
    #[error("cannot create Job {job}: {source}")]
    CreateJob { job: String, source: kube::Error },
}

impl kubebuilder_runtime::Reconciler<CronJob> for CronJobReconciler {
    type Error = Error;

    async fn reconcile(&self, cronjob: Arc<CronJob>, ctx: &Context) -> Result<Action, Error> {
        let cronjob = cronjob.as_ref();
        // 1. The controller hands over the CronJob from its cache (never a deleted one).
        let now = self.clock.now();
        let namespace = cronjob.namespace().unwrap_or_default();
        let cronjobs: Api<CronJob> = ctx.api(cronjob);
        let jobs: Api<Job> = ctx.api(cronjob);
        let mut status = StatusWriter::new(cronjob, now);

        // 2. First sight: say that reconciling has started.
        if status.status.conditions.is_empty() {
            status.set(
                PROGRESSING,
                Status::Unknown,
                "Reconciling",
                "Starting reconciliation",
            );
        }

        // 3. The Jobs this CronJob controls, from the cache's index.
        let uid = cronjob.uid().unwrap_or_default();
        let controlled = ListOptions::default()
            .in_namespace(&namespace)
            .matching_field(JOB_OWNER_KEY, &uid);
        let children = match ctx.cache().list::<Job>(&controlled).await {
            Ok(children) => Children::classify(children),
            Err(not_synced) => {
                let message = format!("Failed to list child jobs: {not_synced}");
                status.set(DEGRADED, Status::True, "ReconciliationError", message);
                status.write(&cronjobs).await?;
                return Err(Error::ListJobs(not_synced));
            }
        };
        status.resolve_degraded("ReconciliationError", "Listed child jobs");

        // 4, 5. The status rebuilt from the Jobs: last run and active Jobs. Unlike the
        // tutorial, the last run never moves back: once history limits have deleted its
        // Job, the run must still count as started, or it would start again.
        let recorded_run = status.status.last_schedule_time.as_ref().map(|time| time.0);
        let last_run = children.last_schedule_time.max(recorded_run);
        status.status.last_schedule_time = last_run.map(Time);
        status.status.active = children
            .active
            .iter()
            .map(|job| job_reference(job))
            .collect();
        tracing::debug!(
            active = children.active.len(),
            successful = children.successful.len(),
            failed = children.failed.len(),
            "job count"
        );

        // 6. Conditions from the Jobs.
        let suspended = cronjob.spec.suspend == Some(true);
        let summary = Summary {
            suspended,
            active: children.active.len(),
            failed: children.failed.len(),
        };
        conditions::summarise(
            &mut status.status.conditions,
            summary,
            status.cronjob.metadata.generation,
            now,
        );
        status.write(&cronjobs).await?;

        // 7. History limits; best effort: a failed deletion is retried on the next reconcile.
        for (finished, limit) in [
            (&children.failed, cronjob.spec.failed_jobs_history_limit),
            (
                &children.successful,
                cronjob.spec.successful_jobs_history_limit,
            ),
        ] {
            let Some(limit) = limit else { continue };
            for job in beyond_history_limit(finished, limit) {
                if let Err(error) = delete_job(ctx, &jobs, cronjob, &job, "old").await {
                    tracing::error!(job = %job.name_any(), %error, "unable to delete old job");
                }
            }
        }

        // 8. Suspended: no new runs.
        if suspended {
            tracing::debug!("cronjob suspended, skipping");
            return Ok(Action::await_change());
        }

        // 9. The run to start, if any, and the next one.
        let spec = &cronjob.spec;
        let created = cronjob
            .meta()
            .creation_timestamp
            .as_ref()
            .map_or(now, |time| time.0);
        let runs =
            Schedule::parse(&spec.schedule, spec.time_zone.as_deref()).and_then(|schedule| {
                schedule.runs(last_run, created, spec.starting_deadline_seconds, now)
            });
        let runs = match runs {
            Ok(runs) => runs,
            Err(error) => {
                // Nothing to retry until the spec changes: no error, no requeue.
                let (reason, message) = schedule_problem(&spec.schedule, &error);
                tracing::error!(%error, "unable to figure out CronJob schedule");
                report_degraded(ctx, &mut status, &cronjobs, reason, message).await?;
                return Ok(Action::await_change());
            }
        };

        // 10. Every exit from here comes back for the next run.
        let requeue =
            Action::requeue(Duration::try_from(runs.next.duration_since(now)).unwrap_or_default());

        // 11. Nothing due.
        let Some(run) = runs.missed else {
            tracing::debug!(next = %runs.next, "no upcoming scheduled times, sleeping until next");
            return Ok(requeue);
        };

        // 12. Too late to start this run.
        if is_past_deadline(run, spec.starting_deadline_seconds, now) {
            let message = format!("Missed starting deadline for run at {run}");
            report_degraded(ctx, &mut status, &cronjobs, "MissedSchedule", message).await?;
            return Ok(requeue);
        }

        // 13. Concurrency policy.
        match spec.concurrency_policy.unwrap_or_default() {
            ConcurrencyPolicy::Forbid if !children.active.is_empty() => {
                tracing::debug!(
                    active = children.active.len(),
                    "concurrency policy blocks concurrent runs, skipping"
                );
                return Ok(requeue);
            }
            ConcurrencyPolicy::Replace => {
                for job in &children.active {
                    delete_job(ctx, &jobs, cronjob, job, "active")
                        .await
                        .map_err(|source| Error::DeleteActiveJob {
                            job: job.name_any(),
                            source,
                        })?;
                }
            }
            ConcurrencyPolicy::Allow | ConcurrencyPolicy::Forbid => {}
        }

        // 14. The Job of this run.
        let job = job_for_run(cronjob, run);
        let job_name = job.name_any();
        match jobs.create(&PostParams::default(), &job).await {
            Ok(created) => {
                tracing::info!(job = %job_name, scheduled = %run, "created Job for CronJob run");
                let note = format!("Created job {job_name}");
                publish(
                    ctx,
                    cronjob,
                    EventType::Normal,
                    "SuccessfulCreate",
                    "Create",
                    note,
                    Some(created.object_ref(&())),
                )
                .await;
            }
            Err(kube::Error::Api(status)) if status.is_already_exists() => {
                // Created by an earlier reconcile whose Job this cache has not seen yet,
                // or by the previous leader: the run has started.
                tracing::debug!(job = %job_name, "Job for this run already exists");
            }
            Err(source) => {
                let message = format!("Failed to create job: {source}");
                status.set(DEGRADED, Status::True, "JobCreationFailed", message.clone());
                if let Err(error) = status.write(&cronjobs).await {
                    tracing::error!(%error, "failed to update CronJob status");
                }
                publish(
                    ctx,
                    cronjob,
                    EventType::Warning,
                    "FailedCreate",
                    "Create",
                    message,
                    None,
                )
                .await;
                return Err(Error::CreateJob {
                    job: job_name,
                    source,
                });
            }
        }
        status.resolve_degraded("JobCreationFailed", format!("Created job {job_name}"));
        // Recorded at once: a reconcile before the Job reaches the cache must not retry it.
        status.status.last_schedule_time = Some(Time(run));
        status.set(
            PROGRESSING,
            Status::True,
            "JobCreated",
            format!("Created job {job_name}"),
        );
        status.write(&cronjobs).await?;
        Ok(requeue)
    }
}

impl CronJobReconciler {
    /// A reconciler reading the time from `clock` (and the Jobs from the cache, indexed by
    /// [`JOB_OWNER_KEY`]).
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self { clock }
    }
}

/// Deletes a Job with background propagation (its Pods go after it); already gone is
/// fine. Records an Event for the deletion.
async fn delete_job(
    ctx: &Context,
    jobs: &Api<Job>,
    cronjob: &CronJob,
    job: &Job,
    which: &str,
) -> Result<(), kube::Error> {
    let name = job.name_any();
    match jobs.delete(&name, &DeleteParams::background()).await {
        Ok(_) => {
            tracing::info!(job = %name, "deleted {which} job");
            let note = format!("Deleted job {name}");
            publish(
                ctx,
                cronjob,
                EventType::Normal,
                "SuccessfulDelete",
                "Delete",
                note,
                Some(job.object_ref(&())),
            )
            .await;
            Ok(())
        }
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(error) => Err(error),
    }
}

/// Sets `Degraded=True` with `reason` and `message`, writes the status, and records a
/// Warning Event when the condition changed (not on every reconcile that finds the
/// same problem).
async fn report_degraded(
    ctx: &Context,
    status: &mut StatusWriter,
    cronjobs: &Api<CronJob>,
    reason: &str,
    message: String,
) -> Result<(), Error> {
    let already_reported =
        conditions::find(&status.status.conditions, DEGRADED).is_some_and(|degraded| {
            degraded.status == "True" && degraded.reason == reason && degraded.message == message
        });
    status.set(DEGRADED, Status::True, reason, message.clone());
    status.write(cronjobs).await?;
    if !already_reported {
        publish(
            ctx,
            &status.cronjob,
            EventType::Warning,
            reason,
            "Schedule",
            message,
            None,
        )
        .await;
    }
    Ok(())
}

/// Records an Event about the CronJob. Events are informational: failing to record
/// one is logged, never fails the reconcile.
async fn publish(
    ctx: &Context,
    cronjob: &CronJob,
    type_: EventType,
    reason: &str,
    action: &str,
    note: String,
    related: Option<ObjectReference>,
) {
    let event = Event {
        type_,
        reason: reason.to_owned(),
        note: Some(note),
        action: action.to_owned(),
        secondary: related,
    };
    if let Err(error) = ctx
        .recorder()
        .publish(&event, &cronjob.object_ref(&()))
        .await
    {
        tracing::warn!(%error, reason, "unable to record an Event");
    }
}

/// The condition reason and message for a schedule that cannot be evaluated.
fn schedule_problem(schedule: &str, error: &ScheduleError) -> (&'static str, String) {
    match error {
        ScheduleError::UnknownTimeZone(_) => (
            "InvalidTimeZone",
            format!("Failed to load time zone: {error}"),
        ),
        ScheduleError::Parse(_) => (
            "InvalidSchedule",
            format!("Failed to parse schedule: unparseable schedule {schedule:?}: {error}"),
        ),
        ScheduleError::TooManyMissedRuns | ScheduleError::NoNextRun(_) => (
            "InvalidSchedule",
            format!("Failed to parse schedule: {error}"),
        ),
    }
}

/// The CronJob as last read or written, and the status being built for it: writes go out
/// only when the status changed, and each write starts from the previous one's result.
struct StatusWriter {
    cronjob: CronJob,
    status: CronJobStatus,
    now: Timestamp,
}

impl StatusWriter {
    fn new(cronjob: &CronJob, now: Timestamp) -> Self {
        Self {
            status: cronjob.status.clone().unwrap_or_default(),
            cronjob: cronjob.clone(),
            now,
        }
    }

    fn set(&mut self, type_: &str, status: Status, reason: &str, message: impl Into<String>) {
        let condition =
            kubebuilder_runtime::conditions::new_at(type_, status, reason, message, self.now);
        kubebuilder_runtime::conditions::set_for(
            &self.cronjob,
            &mut self.status.conditions,
            condition,
        );
    }

    /// Clears `Degraded=True` when it reports `failure`, a step that has now succeeded
    /// (listing the Jobs, creating one): the error was transient (the apiserver away,
    /// permissions revoked for a while), and the condition must not outlive it.
    fn resolve_degraded(&mut self, failure: &str, message: impl Into<String>) {
        let reported = conditions::find(&self.status.conditions, DEGRADED)
            .is_some_and(|degraded| degraded.status == "True" && degraded.reason == failure);
        if reported {
            self.set(DEGRADED, Status::False, "Recovered", message);
        }
    }

    /// Replaces the status (an update with the resourceVersion read: a conflict fails and
    /// the reconcile is retried with fresh data).
    async fn write(&mut self, cronjobs: &Api<CronJob>) -> Result<(), Error> {
        if self.cronjob.status.as_ref() == Some(&self.status) {
            return Ok(());
        }
        let mut updated = self.cronjob.clone();
        updated.status = Some(self.status.clone());
        self.cronjob = cronjobs
            .replace_status(&updated.name_any(), &PostParams::default(), &updated)
            .await
            .map_err(Error::UpdateStatus)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_degraded_condition_clears_once_the_failed_step_succeeds() {
        let cronjob: CronJob = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "flaky", "namespace": "ns", "generation": 1},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {}}}}
        }))
        .unwrap();
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let mut status = StatusWriter::new(&cronjob, now);
        let degraded = |status: &StatusWriter| {
            let condition = conditions::find(&status.status.conditions, DEGRADED).unwrap();
            (condition.status.clone(), condition.reason.clone())
        };
        status.set(DEGRADED, Status::True, "JobCreationFailed", "forbidden");
        status.resolve_degraded("ReconciliationError", "Listed child jobs");
        assert_eq!(
            degraded(&status),
            ("True".into(), "JobCreationFailed".into())
        );
        status.resolve_degraded("JobCreationFailed", "Created job flaky-1");
        assert_eq!(degraded(&status), ("False".into(), "Recovered".into()));

        // Other reasons are not a failed step: they stay until their cause goes.
        status.set(DEGRADED, Status::True, "MissedSchedule", "too late");
        status.resolve_degraded("JobCreationFailed", "Created job flaky-2");
        assert_eq!(degraded(&status), ("True".into(), "MissedSchedule".into()));
    }

    #[test]
    fn schedule_problems_name_their_cause() {
        let parse = ScheduleError::Parse("bad minute".into());
        assert_eq!(
            schedule_problem("61 * * * *", &parse),
            (
                "InvalidSchedule",
                "Failed to parse schedule: unparseable schedule \"61 * * * *\": bad minute"
                    .to_owned()
            )
        );
        assert_eq!(
            schedule_problem("* * * * *", &ScheduleError::TooManyMissedRuns),
            (
                "InvalidSchedule",
                "Failed to parse schedule: Too many missed start times (> 100). Set or decrease .spec.startingDeadlineSeconds or check clock skew.".to_owned()
            )
        );
        assert_eq!(
            schedule_problem(
                "* * * * *",
                &ScheduleError::UnknownTimeZone("Mars/Olympus".into())
            ),
            (
                "InvalidTimeZone",
                "Failed to load time zone: unknown time zone \"Mars/Olympus\"".to_owned()
            )
        );
    }
}
