//! CronJob conversion is lossless: v1 → v2 → v1 and v2 → v1 → v2 give the same object back
//! for every object the version's validating webhook admits, over generated objects
//! (schedules with descriptors, odd spacing and explicit `*`s included).

use std::collections::BTreeMap;

use api::{v1, v2};
use controller::cronjob::schedule;
use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kubebuilder::conversion::Spoke as _;
use proptest::prelude::*;
use proptest::sample::select;

/// One cron field: the forms the reconciler's parser accepts, and some it refuses.
fn cron_field() -> impl Strategy<Value = String> {
    select(vec![
        "*", "0", "5", "*/1", "*/15", "1-5", "1,2,3", "MON", "mon-fri", "JAN", "61", "?",
    ])
    .prop_map(str::to_owned)
}

/// A v1 schedule: five fields with any spacing, or a descriptor in any case.
fn v1_schedule() -> impl Strategy<Value = String> {
    let spaced = (
        proptest::collection::vec(cron_field(), 5),
        proptest::collection::vec(select(vec![" ", "  ", "\t"]), 4),
        select(vec!["", " "]),
    )
        .prop_map(|(fields, gaps, edge)| {
            let mut schedule = edge.to_owned();
            for (index, field) in fields.iter().enumerate() {
                schedule.push_str(field);
                if let Some(gap) = gaps.get(index) {
                    schedule.push_str(gap);
                }
            }
            schedule.push_str(edge);
            schedule
        });
    let descriptor = select(vec![
        "@yearly",
        "@annually",
        "@Monthly",
        "@weekly",
        "@DAILY",
        "@hourly",
        " @daily ",
    ])
    .prop_map(str::to_owned);
    prop_oneof![3 => spaced, 1 => descriptor]
}

fn v2_schedule() -> impl Strategy<Value = v2::CronSchedule> {
    proptest::collection::vec(proptest::option::of(cron_field()), 5).prop_map(|fields| {
        let [minute, hour, day_of_month, month, day_of_week] =
            <[Option<String>; 5]>::try_from(fields).unwrap();
        v2::CronSchedule {
            minute,
            hour,
            day_of_month,
            month,
            day_of_week,
        }
    })
}

/// Metadata with labels and annotations of the user's (never the conversion's own keys).
fn metadata() -> impl Strategy<Value = ObjectMeta> {
    let pairs = proptest::collection::btree_map("[a-z]{1,8}", "[a-z0-9 ]{0,8}", 0..3);
    (pairs.clone(), pairs).prop_map(|(labels, annotations)| ObjectMeta {
        name: Some("hello".into()),
        namespace: Some("default".into()),
        uid: Some("4d6d6a3c".into()),
        resource_version: Some("42".into()),
        labels: non_empty(labels),
        annotations: non_empty(annotations),
        ..ObjectMeta::default()
    })
}

fn non_empty(map: BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
    (!map.is_empty()).then_some(map)
}

/// Everything but the schedule: `(time zone, deadline, policy, suspend, limits, last run)`.
type Rest = (
    Option<String>,
    Option<i64>,
    Option<usize>,
    Option<bool>,
    Option<i32>,
    Option<i32>,
    Option<i64>,
);

fn rest() -> impl Strategy<Value = Rest> {
    (
        proptest::option::of(select(vec!["UTC", "Europe/Paris"]).prop_map(str::to_owned)),
        proptest::option::of(0..3600i64),
        proptest::option::of(0..3usize),
        proptest::option::of(any::<bool>()),
        proptest::option::of(0..10i32),
        proptest::option::of(0..10i32),
        proptest::option::of(1_700_000_000..1_800_000_000i64),
    )
}

fn v1_cronjob(metadata: ObjectMeta, schedule: String, rest: Rest) -> v1::CronJob {
    let (time_zone, deadline, policy, suspend, successful, failed, last_run) = rest;
    let policies = [
        v1::ConcurrencyPolicy::Allow,
        v1::ConcurrencyPolicy::Forbid,
        v1::ConcurrencyPolicy::Replace,
    ];
    v1::CronJob {
        metadata,
        spec: v1::CronJobSpec {
            schedule,
            time_zone,
            starting_deadline_seconds: deadline,
            concurrency_policy: policy.map(|index| policies[index]),
            suspend,
            job_template: JobTemplateSpec::default(),
            successful_jobs_history_limit: successful,
            failed_jobs_history_limit: failed,
        },
        status: last_run.map(|seconds| v1::CronJobStatus {
            last_schedule_time: Some(Time(jiff::Timestamp::from_second(seconds).unwrap())),
            ..v1::CronJobStatus::default()
        }),
    }
}

proptest! {
    // Refused schedules are generated on purpose and skipped: allow many rejects.
    #![proptest_config(ProptestConfig {
        cases: 1000,
        max_global_rejects: 100_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn v1_to_v2_to_v1_is_the_same_object(
        metadata in metadata(),
        schedule in v1_schedule(),
        rest in rest(),
    ) {
        // Only what v1's validating webhook admits.
        prop_assume!(schedule::validate(&schedule).is_ok());
        let original = v1_cronjob(metadata, schedule, rest);
        let spoke = v2::CronJob::from_hub(original.clone()).unwrap();
        prop_assert_eq!(spoke.to_hub().unwrap(), original);
    }

    #[test]
    fn v2_to_v1_to_v2_is_the_same_object(
        metadata in metadata(),
        schedule in v2_schedule(),
        rest in rest(),
    ) {
        // Only what v2's validating webhook admits.
        let Ok(cron) = schedule.to_cron() else { return Ok(()) };
        prop_assume!(schedule::validate(&cron).is_ok());
        let mut original = v2::CronJob::from_hub(v1_cronjob(metadata, cron, rest)).unwrap();
        original.spec.schedule = schedule;
        let hub = original.clone().to_hub().unwrap();
        prop_assert_eq!(v2::CronJob::from_hub(hub).unwrap(), original);
    }
}
