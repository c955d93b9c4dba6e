//! The CronJob controller against a real apiserver: the tutorial's scenarios, and the
//! schedule with a controlled clock. No kubelet or Job controller runs, so tests set Job
//! status themselves, as kubebuilder's tests do.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{
    Controller, JobStatus, TIMEOUT, TestEnv, condition, eventually, first_run_after_creation,
};
use controller::cronjob::jobs::SCHEDULED_AT_ANNOTATION;
use controller::cronjob::reconciler::CronJobReconciler;
use jiff::{SignedDuration, Timestamp};
use kube::ResourceExt as _;
use kube::api::{Patch, PatchParams};
use kubebuilder_runtime::{Context, Reconciler as _, is_conflict};
use serde_json::json;

fn seconds(seconds: i64) -> SignedDuration {
    SignedDuration::from_secs(seconds)
}

#[tokio::test]
async fn the_first_reconcile_initialises_the_conditions() {
    let env = TestEnv::new("cj-init").await;
    let controller = env.start_controller().await;
    env.create_cronjob("fresh", json!({})).await;

    let cronjob = env
        .wait_for_condition("fresh", "Available", "True", "AllJobsCompleted")
        .await;
    let status = cronjob.status.as_ref().unwrap();
    let summary: Vec<_> = status
        .conditions
        .iter()
        .map(|c| {
            (
                c.type_.as_str(),
                c.status.as_str(),
                c.reason.as_str(),
                c.message.as_str(),
                c.observed_generation,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "Progressing",
                "False",
                "NoJobsActive",
                "No jobs are currently active",
                Some(1)
            ),
            (
                "Available",
                "True",
                "AllJobsCompleted",
                "All jobs have completed successfully",
                Some(1)
            ),
        ]
    );
    assert!(status.active.is_empty());
    assert_eq!(status.last_schedule_time, None);
    assert_eq!(
        env.job_names().await,
        Vec::<String>::new(),
        "nothing was due"
    );
    assert_eq!(controller.failed_reconciles(), 0);
    controller.shutdown().await;
}

#[tokio::test]
async fn an_active_job_is_listed_in_the_status_and_makes_the_cronjob_available() {
    let env = TestEnv::new("cj-active").await;
    let controller = env.start_controller().await;
    let cronjob = env.create_cronjob("busy", json!({})).await;
    let scheduled: Timestamp = "2026-01-05T09:00:00Z".parse().unwrap();
    let job = env
        .create_owned_job(&cronjob, "busy-run", scheduled, JobStatus::Active)
        .await;

    let cronjob = env
        .wait_for_condition("busy", "Available", "True", "JobsActive")
        .await;
    let status = cronjob.status.as_ref().unwrap();
    assert_eq!(
        condition(&cronjob, "Available").unwrap().message,
        "CronJob is progressing with 1 active job(s)"
    );
    let progressing = condition(&cronjob, "Progressing").unwrap();
    assert_eq!(
        (
            progressing.status.as_str(),
            progressing.reason.as_str(),
            progressing.message.as_str()
        ),
        ("True", "JobsActive", "1 job(s) are currently active")
    );
    assert_eq!(status.active.len(), 1);
    let reference = &status.active[0];
    assert_eq!(reference.api_version.as_deref(), Some("batch/v1"));
    assert_eq!(reference.kind.as_deref(), Some("Job"));
    assert_eq!(reference.name.as_deref(), Some("busy-run"));
    assert_eq!(reference.namespace.as_deref(), Some(env.namespace.as_str()));
    assert_eq!(reference.uid, job.uid());
    assert!(reference.resource_version.is_some());
    assert_eq!(
        status.last_schedule_time.as_ref().map(|time| time.0),
        Some(scheduled)
    );
    controller.shutdown().await;
}

#[tokio::test]
async fn a_failed_job_degrades_the_cronjob() {
    let env = TestEnv::new("cj-failed").await;
    let controller = env.start_controller().await;
    let cronjob = env.create_cronjob("flaky", json!({})).await;
    let started: Timestamp = "2026-01-05T09:00:05Z".parse().unwrap();
    env.create_owned_job(
        &cronjob,
        "flaky-run",
        started,
        JobStatus::Failed { started },
    )
    .await;

    let cronjob = env
        .wait_for_condition("flaky", "Degraded", "True", "JobsFailed")
        .await;
    assert_eq!(
        condition(&cronjob, "Degraded").unwrap().message,
        "1 job(s) have failed"
    );
    let available = condition(&cronjob, "Available").unwrap();
    assert_eq!(
        (
            available.status.as_str(),
            available.reason.as_str(),
            available.message.as_str()
        ),
        ("False", "JobsFailed", "1 job(s) have failed")
    );
    assert!(cronjob.status.as_ref().unwrap().active.is_empty());
    controller.shutdown().await;
}

#[tokio::test]
async fn history_limits_prune_the_oldest_finished_jobs() {
    let env = TestEnv::new("cj-history").await;
    let cronjob = env
        .create_cronjob(
            "tidy",
            json!({"successfulJobsHistoryLimit": 1, "failedJobsHistoryLimit": 1}),
        )
        .await;
    let at = |text: &str| -> Timestamp { text.parse().unwrap() };
    for (name, started) in [
        ("ok-newest", "2026-01-05T09:30:00Z"),
        ("ok-oldest", "2026-01-05T09:10:00Z"),
        ("ok-middle", "2026-01-05T09:20:00Z"),
    ] {
        let started = at(started);
        env.create_owned_job(&cronjob, name, started, JobStatus::Succeeded { started })
            .await;
    }
    for (name, started) in [
        ("bad-old", "2026-01-05T09:05:00Z"),
        ("bad-new", "2026-01-05T09:25:00Z"),
    ] {
        let started = at(started);
        env.create_owned_job(&cronjob, name, started, JobStatus::Failed { started })
            .await;
    }
    // An active Job is not history: no limit applies to it.
    env.create_owned_job(
        &cronjob,
        "running",
        at("2026-01-05T09:00:00Z"),
        JobStatus::Active,
    )
    .await;

    let controller = env.start_controller().await;
    env.wait_for_jobs(&["bad-new", "ok-newest", "running"])
        .await;
    // Each Event is recorded after its Job's deletion: it may come after the Job is gone.
    let pruned = ["ok-oldest", "ok-middle", "bad-old"].map(|name| format!("Deleted job {name}"));
    eventually("a deletion Event per pruned Job", TIMEOUT, || async {
        let deleted: Vec<String> = env
            .events("SuccessfulDelete")
            .await
            .into_iter()
            .filter_map(|event| event.note)
            .collect();
        pruned
            .iter()
            .all(|note| deleted.contains(note))
            .then_some(())
    })
    .await;
    controller.shutdown().await;
}

#[tokio::test]
async fn a_suspended_cronjob_is_unavailable_and_starts_nothing() {
    let env = TestEnv::new("cj-suspend").await;
    let controller = env.start_controller().await;
    let cronjob = env
        .create_cronjob("paused", json!({"suspend": true, "schedule": "* * * * *"}))
        .await;
    env.wait_for_condition("paused", "Available", "False", "Suspended")
        .await;

    // A run is due, and still nothing starts.
    let due = first_run_after_creation(&cronjob, "* * * * *") + seconds(5);
    controller.reconcile_at(&env, "paused", due).await;
    let cronjob = env.cronjobs().get("paused").await.unwrap();
    assert_eq!(
        condition(&cronjob, "Available").unwrap().message,
        "CronJob is suspended"
    );
    assert_eq!(env.job_names().await, Vec::<String>::new());
    controller.shutdown().await;
}

#[tokio::test]
async fn a_due_run_creates_exactly_one_job_named_for_its_time() {
    let env = TestEnv::new("cj-due").await;
    let controller = env.start_controller().await;
    let cronjob = env
        .create_cronjob("report", json!({"schedule": "*/5 * * * *"}))
        .await;
    let run = first_run_after_creation(&cronjob, "*/5 * * * *");
    let job_name = format!("report-{}", run.as_second());

    // Just before the run: nothing.
    controller
        .reconcile_at(&env, "report", run - seconds(1))
        .await;
    assert_eq!(env.job_names().await, Vec::<String>::new());

    controller
        .reconcile_at(&env, "report", run + seconds(10))
        .await;
    env.wait_for_jobs(&[&job_name]).await;
    let job = env.jobs().get(&job_name).await.unwrap();
    assert_eq!(
        job.annotations().get(SCHEDULED_AT_ANNOTATION),
        Some(&run.to_string())
    );
    // The template's own labels and annotations never reach the controller: the CRD, as
    // controller-gen generates it by default, prunes the embedded `jobTemplate.metadata`
    // (the unit tests of `job_for_run` show they are copied).
    assert_eq!(
        job.annotations().keys().collect::<Vec<_>>(),
        [SCHEDULED_AT_ANNOTATION]
    );
    let owner = &job.owner_references()[0];
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.name.as_str(),
            Some(owner.uid.clone()),
            owner.controller,
            owner.block_owner_deletion
        ),
        ("CronJob", "report", cronjob.uid(), Some(true), Some(true))
    );
    let containers = &job
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .containers;
    assert_eq!(containers[0].image.as_deref(), Some("busybox"));

    let cronjob = env
        .wait_for_condition("report", "Progressing", "True", "JobsActive")
        .await;
    assert_eq!(
        cronjob
            .status
            .as_ref()
            .unwrap()
            .last_schedule_time
            .as_ref()
            .map(|time| time.0),
        Some(run)
    );
    let created = env.events("SuccessfulCreate").await;
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(
        created[0].note.as_deref(),
        Some(format!("Created job {job_name}").as_str())
    );

    // The same moment, reconciled again and again: still one Job.
    for _ in 0..3 {
        controller
            .reconcile_at(&env, "report", run + seconds(20))
            .await;
    }
    assert_eq!(env.job_names().await, [job_name]);
    assert_eq!(env.events("SuccessfulCreate").await.len(), 1);
    controller.shutdown().await;
}

/// The first two runs of a CronJob every five minutes, and their Jobs' names.
struct TwoRuns {
    first: Timestamp,
    second: Timestamp,
    first_job: String,
    second_job: String,
}

/// Creates `name`, every five minutes with `concurrency_policy`, and has the controller
/// start its first run: the Job exists and the CronJob reports it active.
async fn first_run_active(
    env: &TestEnv,
    controller: &Controller,
    name: &str,
    concurrency_policy: &str,
) -> TwoRuns {
    let cronjob = env
        .create_cronjob(name, json!({"concurrencyPolicy": concurrency_policy}))
        .await;
    let first = first_run_after_creation(&cronjob, "*/5 * * * *");
    let second = first + seconds(300);
    let runs = TwoRuns {
        first,
        second,
        first_job: format!("{name}-{}", first.as_second()),
        second_job: format!("{name}-{}", second.as_second()),
    };
    controller.reconcile_at(env, name, first + seconds(1)).await;
    env.wait_for_jobs(&[&runs.first_job]).await;
    env.wait_for_condition(name, "Available", "True", "JobsActive")
        .await;
    runs
}

#[tokio::test]
async fn forbid_skips_a_run_while_a_job_is_active() {
    let env = TestEnv::new("cj-forbid").await;
    let controller = env.start_controller().await;
    let TwoRuns {
        first,
        second,
        first_job,
        second_job,
    } = first_run_active(&env, &controller, "single", "Forbid").await;

    // The next run is due while the first Job is still active: skipped.
    controller
        .reconcile_at(&env, "single", second + seconds(1))
        .await;
    assert_eq!(env.job_names().await, std::slice::from_ref(&first_job));

    // Once the first Job completes, the same run starts.
    env.set_job_status(&first_job, JobStatus::Succeeded { started: first })
        .await;
    env.wait_for_jobs(&[&first_job, &second_job]).await;
    controller.shutdown().await;
}

#[tokio::test]
async fn replace_deletes_the_active_job_before_starting_the_next() {
    let env = TestEnv::new("cj-replace").await;
    let controller = env.start_controller().await;
    let TwoRuns {
        second,
        first_job,
        second_job,
        ..
    } = first_run_active(&env, &controller, "latest", "Replace").await;

    controller
        .reconcile_at(&env, "latest", second + seconds(1))
        .await;
    env.wait_for_jobs(&[&second_job]).await;

    let deleted = env.events("SuccessfulDelete").await;
    let created = env.events("SuccessfulCreate").await;
    let deleted_first = deleted
        .iter()
        .find(|event| event.note.as_deref() == Some(format!("Deleted job {first_job}").as_str()))
        .expect("an Event for the deletion of the active Job");
    let created_second = created
        .iter()
        .find(|event| event.note.as_deref() == Some(format!("Created job {second_job}").as_str()))
        .expect("an Event for the new Job");
    let time = |event: &k8s_openapi::api::events::v1::Event| event.event_time.as_ref().unwrap().0;
    assert!(
        time(deleted_first) < time(created_second),
        "the active Job is deleted before the next one is created"
    );
    controller.shutdown().await;
}

#[tokio::test]
async fn allow_runs_jobs_side_by_side() {
    let env = TestEnv::new("cj-allow").await;
    let controller = env.start_controller().await;
    let cronjob = env
        .create_cronjob("many", json!({"concurrencyPolicy": "Allow"}))
        .await;
    let first = first_run_after_creation(&cronjob, "*/5 * * * *");
    let second = first + seconds(300);

    controller
        .reconcile_at(&env, "many", first + seconds(1))
        .await;
    env.wait_for_jobs(&[&format!("many-{}", first.as_second())])
        .await;
    controller
        .reconcile_at(&env, "many", second + seconds(1))
        .await;
    env.wait_for_jobs(&[
        &format!("many-{}", first.as_second()),
        &format!("many-{}", second.as_second()),
    ])
    .await;
    env.wait_for_condition("many", "Available", "True", "JobsActive")
        .await;
    controller.shutdown().await;
}

#[tokio::test]
async fn a_run_missed_beyond_the_starting_deadline_degrades_the_cronjob() {
    let env = TestEnv::new("cj-missed").await;
    let controller = env.start_controller().await;
    let cronjob = env
        .create_cronjob("late", json!({"startingDeadlineSeconds": 60}))
        .await;
    let run = first_run_after_creation(&cronjob, "*/5 * * * *");

    controller
        .reconcile_at(&env, "late", run + seconds(120))
        .await;
    let cronjob = env
        .wait_for_condition("late", "Degraded", "True", "MissedSchedule")
        .await;
    assert_eq!(
        condition(&cronjob, "Degraded").unwrap().message,
        format!("Missed starting deadline for run at {run}")
    );
    assert_eq!(env.job_names().await, Vec::<String>::new());
    let missed = env.events("MissedSchedule").await;
    assert_eq!(missed.len(), 1, "{missed:?}");
    assert_eq!(missed[0].type_.as_deref(), Some("Warning"));

    // The next run, on time, starts.
    let next = run + seconds(300);
    controller
        .reconcile_at(&env, "late", next + seconds(30))
        .await;
    env.wait_for_jobs(&[&format!("late-{}", next.as_second())])
        .await;
    controller.shutdown().await;
}

#[tokio::test]
async fn an_invalid_schedule_degrades_the_cronjob_once_and_is_not_retried() {
    let env = TestEnv::new("cj-invalid").await;
    let controller = env.start_controller().await;
    env.create_cronjob("broken", json!({"schedule": "every minute"}))
        .await;

    let cronjob = env
        .wait_for_condition("broken", "Degraded", "True", "InvalidSchedule")
        .await;
    let message = &condition(&cronjob, "Degraded").unwrap().message;
    assert!(
        message.starts_with("Failed to parse schedule: unparseable schedule \"every minute\": "),
        "{message}"
    );
    controller.wait_idle().await;
    let settled = controller.reconciles();
    // An error or a requeue would come back within this time (the back-off starts at 5 ms).
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(controller.reconciles(), settled, "no reconcile loop");
    assert!(settled <= 3, "{settled} reconciles for one invalid CronJob");
    assert_eq!(controller.failed_reconciles(), 0, "not an error");
    let events = env.events("InvalidSchedule").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].series, None, "recorded once");
    controller.shutdown().await;
}

#[tokio::test]
async fn a_status_write_from_a_stale_cronjob_is_refused_as_a_conflict() {
    let env = TestEnv::new("cj-stale").await;
    let stale = env.create_cronjob("stale", json!({})).await;
    // Someone else writes the status first: `stale` is now an old version, as an object
    // from a cache that has not seen the latest write yet.
    let newer = env
        .cronjobs()
        .patch_status(
            "stale",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"lastScheduleTime": "2026-01-05T09:00:00Z"}})),
        )
        .await
        .unwrap();
    // The reconciler alone, on the cache (with the Job index) of a manager never started.
    let manager = env.manager(env.client.clone(), env.manager_args());
    let reconciler = CronJobReconciler::new(Arc::new(env.clock.clone()));
    let ctx = Context::new("cronjob", env.client.clone(), manager.cache().clone());

    // The write from the old version is refused as a conflict, which the manager's
    // controller retries from the newer version rather than reporting an error.
    let error = reconciler
        .reconcile(Arc::new(stale), &ctx)
        .await
        .expect_err("the status write from an old version is refused");
    assert!(is_conflict(&error), "{error}");
    let unchanged = env.cronjobs().get("stale").await.unwrap();
    assert_eq!(unchanged.resource_version(), newer.resource_version());

    // From the latest version the same reconcile writes its conditions.
    reconciler
        .reconcile(Arc::new(newer), &ctx)
        .await
        .expect("the reconcile succeeds from fresh data");
    let reconciled = env.cronjobs().get("stale").await.unwrap();
    assert!(condition(&reconciled, "Available").is_some());
}

#[tokio::test]
async fn an_unknown_time_zone_degrades_the_cronjob() {
    let env = TestEnv::new("cj-zone-bad").await;
    let controller = env.start_controller().await;
    env.create_cronjob("martian", json!({"timeZone": "Mars/Olympus_Mons"}))
        .await;
    let cronjob = env
        .wait_for_condition("martian", "Degraded", "True", "InvalidTimeZone")
        .await;
    assert_eq!(
        condition(&cronjob, "Degraded").unwrap().message,
        "Failed to load time zone: unknown time zone \"Mars/Olympus_Mons\""
    );
    controller.shutdown().await;
}

#[tokio::test]
async fn the_schedule_runs_in_its_time_zone() {
    let env = TestEnv::new("cj-zone").await;
    let controller = env.start_controller().await;
    // 09:00 in Tokyo (UTC+9, no daylight saving) is midnight UTC.
    let cronjob = env
        .create_cronjob(
            "tokyo",
            json!({"schedule": "0 9 * * *", "timeZone": "Asia/Tokyo"}),
        )
        .await;
    let midnight_utc = first_run_after_creation(&cronjob, "0 0 * * *");
    controller
        .reconcile_at(&env, "tokyo", midnight_utc + seconds(5))
        .await;
    env.wait_for_jobs(&[&format!("tokyo-{}", midnight_utc.as_second())])
        .await;
    controller.shutdown().await;
}

#[tokio::test]
async fn a_weekday_schedule_fires_on_that_weekday() {
    let env = TestEnv::new("cj-weekday").await;
    let controller = env.start_controller().await;
    let cronjob = env
        .create_cronjob("monday", json!({"schedule": "0 9 * * 1"}))
        .await;
    let monday = first_run_after_creation(&cronjob, "0 9 * * 1");
    assert_eq!(
        monday.to_zoned(jiff::tz::TimeZone::UTC).weekday(),
        jiff::civil::Weekday::Monday
    );
    let job = |run: Timestamp| format!("monday-{}", run.as_second());

    controller
        .reconcile_at(&env, "monday", monday + seconds(30))
        .await;
    env.wait_for_jobs(&[&job(monday)]).await;

    // Sunday 09:00, where a Quartz-style reading of `1` would fire: nothing new.
    let week = seconds(7 * 86_400);
    let sunday = monday + week - seconds(86_400);
    controller
        .reconcile_at(&env, "monday", sunday + seconds(30))
        .await;
    assert_eq!(env.job_names().await, [job(monday)]);

    controller
        .reconcile_at(&env, "monday", monday + week + seconds(30))
        .await;
    env.wait_for_jobs(&[&job(monday), &job(monday + week)])
        .await;
    controller.shutdown().await;
}

#[tokio::test]
async fn a_run_whose_job_was_pruned_is_not_started_again() {
    let env = TestEnv::new("cj-pruned").await;
    let controller = env.start_controller().await;
    let cronjob = env
        .create_cronjob("once", json!({"successfulJobsHistoryLimit": 0}))
        .await;
    let run = first_run_after_creation(&cronjob, "*/5 * * * *");
    let job = format!("once-{}", run.as_second());
    controller
        .reconcile_at(&env, "once", run + seconds(5))
        .await;
    env.wait_for_jobs(&[&job]).await;
    env.set_job_status(&job, JobStatus::Succeeded { started: run })
        .await;
    env.wait_for_jobs(&[]).await;

    // No Job tells of the run any more; the status still does.
    controller
        .reconcile_at(&env, "once", run + seconds(10))
        .await;
    assert_eq!(env.job_names().await, Vec::<String>::new());
    let cronjob = env.cronjobs().get("once").await.unwrap();
    assert_eq!(
        cronjob
            .status
            .as_ref()
            .unwrap()
            .last_schedule_time
            .as_ref()
            .map(|time| time.0),
        Some(run)
    );
    assert_eq!(env.events("SuccessfulCreate").await.len(), 1);
    controller.shutdown().await;
}
