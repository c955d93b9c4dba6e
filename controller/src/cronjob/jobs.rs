//! The Jobs of CronJobs: which CronJob controls a Job (the field the manager's cache indexes
//! Jobs by), how a Job's state is read (active, successful, failed, scheduled time), which
//! finished Jobs the history limits remove, and the Job a run creates.

use std::sync::Arc;

use api::v1::CronJob;
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::ObjectMeta;
use kube::{Resource, ResourceExt as _};

/// The annotation holding the time of the run a Job was created for (RFC 3339).
pub const SCHEDULED_AT_ANNOTATION: &str = "batch.tutorial.kubebuilder.io/scheduled-at";

/// The field index of Jobs by the UID of the CronJob controlling them (the tutorial's
/// `jobOwnerKey`; a UID rather than a name, so that a CronJob deleted and created again
/// does not adopt the Jobs of the old one while they are being collected).
pub const JOB_OWNER_KEY: &str = ".metadata.controller";

/// The UID of the Job's controller when that controller is a CronJob of this API.
pub fn controller_uid(job: &Job) -> Option<String> {
    job.owner_references()
        .iter()
        .find(|owner| owner.controller == Some(true))
        .filter(|owner| {
            owner.api_version == CronJob::api_version(&()) && owner.kind == CronJob::kind(&())
        })
        .map(|owner| owner.uid.clone())
}

/// Where a Job stands, from its first finished condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Active,
    Successful,
    Failed,
}

/// The first `Complete` or `Failed` condition with status True decides; none means the Job
/// is still active.
pub fn job_state(job: &Job) -> JobState {
    let conditions = job
        .status
        .as_ref()
        .and_then(|status| status.conditions.as_deref())
        .unwrap_or_default();
    conditions
        .iter()
        .filter(|condition| condition.status == "True")
        .find_map(|condition| match condition.type_.as_str() {
            "Complete" => Some(JobState::Successful),
            "Failed" => Some(JobState::Failed),
            _ => None,
        })
        .unwrap_or(JobState::Active)
}

/// The time of the run the Job was created for; `None` without the annotation.
pub fn scheduled_time(job: &Job) -> Result<Option<Timestamp>, jiff::Error> {
    job.annotations()
        .get(SCHEDULED_AT_ANNOTATION)
        .filter(|value| !value.is_empty())
        .map(|value| value.parse())
        .transpose()
}

/// A CronJob's Jobs by state, and its latest run.
#[derive(Debug, Default)]
pub struct Children {
    pub active: Vec<Arc<Job>>,
    pub successful: Vec<Arc<Job>>,
    pub failed: Vec<Arc<Job>>,
    /// The latest scheduled time among the Jobs.
    pub last_schedule_time: Option<Timestamp>,
}

impl Children {
    /// Sorts the Jobs by state and finds the latest run. A Job whose annotation does not
    /// parse is still counted, without a run time (and logged).
    pub fn classify(jobs: impl IntoIterator<Item = Arc<Job>>) -> Self {
        let mut children = Children::default();
        for job in jobs {
            match scheduled_time(&job) {
                Ok(Some(time)) => {
                    children.last_schedule_time = children.last_schedule_time.max(Some(time));
                }
                Ok(None) => {}
                Err(error) => {
                    tracing::error!(job = %job.name_any(), %error, "unable to parse the scheduled time of a child Job");
                }
            }
            match job_state(&job) {
                JobState::Active => children.active.push(job),
                JobState::Successful => children.successful.push(job),
                JobState::Failed => children.failed.push(job),
            }
        }
        children
    }
}

/// The reference to a Job kept in `status.active` (what client-go's `GetReference` gives).
pub fn job_reference(job: &Job) -> ObjectReference {
    ObjectReference {
        resource_version: job.resource_version(),
        ..job.object_ref(&())
    }
}

/// The Jobs to delete so that at most `limit` remain: the oldest by start time, Jobs that
/// never started counting as the oldest.
pub fn beyond_history_limit(jobs: &[Arc<Job>], limit: i32) -> Vec<Arc<Job>> {
    let keep = usize::try_from(limit).unwrap_or(0);
    let mut by_age = jobs.to_vec();
    // `None` sorts before every time: Jobs without a start time go first.
    by_age.sort_by_key(|job| {
        job.status
            .as_ref()
            .and_then(|status| status.start_time.clone())
            .map(|time| time.0)
    });
    let excess = by_age.len().saturating_sub(keep);
    by_age.truncate(excess);
    by_age
}

/// The Job for the run at `scheduled`: named `<cronjob>-<unix seconds>` (the same run always
/// gets the same name, so a run is never started twice), with the template's labels,
/// annotations and spec, the scheduled-at annotation and the CronJob as controller.
pub fn job_for_run(cronjob: &CronJob, scheduled: Timestamp) -> Job {
    let template = &cronjob.spec.job_template;
    let template_metadata = template.metadata.clone().unwrap_or_default();
    let mut annotations = template_metadata.annotations.unwrap_or_default();
    annotations.insert(SCHEDULED_AT_ANNOTATION.to_owned(), scheduled.to_string());
    Job {
        metadata: ObjectMeta {
            name: Some(job_name(&cronjob.name_any(), scheduled)),
            namespace: cronjob.namespace(),
            labels: Some(template_metadata.labels.unwrap_or_default()),
            annotations: Some(annotations),
            owner_references: cronjob.controller_owner_ref(&()).map(|owner| {
                vec![
                    k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                        block_owner_deletion: Some(true),
                        ..owner
                    },
                ]
            }),
            ..ObjectMeta::default()
        },
        spec: template.spec.clone(),
        status: None,
    }
}

/// `<cronjob>-<unix seconds of the run>`.
pub fn job_name(cronjob: &str, scheduled: Timestamp) -> String {
    format!("{cronjob}-{}", scheduled.as_second())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use api::v1::CronJobSpec;
    use k8s_openapi::api::batch::v1::{JobCondition, JobStatus, JobTemplateSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};

    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn job(name: &str) -> Job {
        Job {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                ..ObjectMeta::default()
            },
            ..Job::default()
        }
    }

    fn with_conditions(mut job: Job, conditions: &[(&str, &str)]) -> Job {
        job.status = Some(JobStatus {
            conditions: Some(
                conditions
                    .iter()
                    .map(|(type_, status)| JobCondition {
                        type_: (*type_).into(),
                        status: (*status).into(),
                        ..JobCondition::default()
                    })
                    .collect(),
            ),
            ..JobStatus::default()
        });
        job
    }

    fn started(mut job: Job, start: Option<&str>) -> Arc<Job> {
        job.status.get_or_insert_with(JobStatus::default).start_time =
            start.map(|time| Time(at(time)));
        Arc::new(job)
    }

    fn owned_by(mut job: Job, uid: &str, kind: &str, controller: bool) -> Job {
        job.metadata.owner_references = Some(vec![OwnerReference {
            api_version: "batch.tutorial.kubebuilder.io/v1".into(),
            kind: kind.into(),
            name: "owner".into(),
            uid: uid.into(),
            controller: Some(controller),
            ..OwnerReference::default()
        }]);
        job
    }

    #[test]
    fn the_first_true_finished_condition_decides() {
        assert_eq!(job_state(&job("new")), JobState::Active);
        assert_eq!(
            job_state(&with_conditions(job("j"), &[("Suspended", "True")])),
            JobState::Active
        );
        assert_eq!(
            job_state(&with_conditions(job("j"), &[("Complete", "False")])),
            JobState::Active
        );
        assert_eq!(
            job_state(&with_conditions(job("j"), &[("Complete", "True")])),
            JobState::Successful
        );
        assert_eq!(
            job_state(&with_conditions(
                job("j"),
                &[("FailureTarget", "True"), ("Failed", "True")]
            )),
            JobState::Failed
        );
        assert_eq!(
            job_state(&with_conditions(
                job("j"),
                &[("Failed", "True"), ("Complete", "True")]
            )),
            JobState::Failed
        );
    }

    #[test]
    fn classification_finds_the_latest_run_and_tolerates_bad_annotations() {
        let annotated = |name: &str, time: &str| {
            let mut job = job(name);
            job.metadata.annotations = Some(BTreeMap::from([(
                SCHEDULED_AT_ANNOTATION.into(),
                time.into(),
            )]));
            job
        };
        let children = Children::classify([
            Arc::new(annotated("a", "2026-11-30T10:00:00Z")),
            Arc::new(with_conditions(
                annotated("b", "2026-11-30T10:05:00Z"),
                &[("Complete", "True")],
            )),
            Arc::new(with_conditions(
                annotated("c", "yesterday"),
                &[("Failed", "True")],
            )),
            Arc::new(job("no-annotation")),
        ]);
        let names = |jobs: &[Arc<Job>]| jobs.iter().map(|job| job.name_any()).collect::<Vec<_>>();
        assert_eq!(names(&children.active), ["a", "no-annotation"]);
        assert_eq!(names(&children.successful), ["b"]);
        assert_eq!(names(&children.failed), ["c"]);
        assert_eq!(
            children.last_schedule_time,
            Some(at("2026-11-30T10:05:00Z"))
        );
        assert_eq!(
            Children::classify([Arc::new(job("x"))]).last_schedule_time,
            None
        );
    }

    #[test]
    fn history_limits_remove_the_oldest_and_never_started_first() {
        let jobs = vec![
            started(job("newest"), Some("2026-11-30T10:03:00Z")),
            started(job("oldest"), Some("2026-11-30T10:01:00Z")),
            started(job("never-started"), None),
            started(job("middle"), Some("2026-11-30T10:02:00Z")),
        ];
        let names = |limit| {
            beyond_history_limit(&jobs, limit)
                .iter()
                .map(|job| job.name_any())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(1), ["never-started", "oldest", "middle"]);
        assert_eq!(names(3), ["never-started"]);
        assert_eq!(names(4), Vec::<String>::new());
        assert_eq!(names(10), Vec::<String>::new());
        assert_eq!(names(0).len(), 4);
    }

    #[test]
    fn a_run_gets_a_deterministic_job_from_the_template() {
        let template: JobTemplateSpec = serde_json::from_value(serde_json::json!({
            "metadata": {"labels": {"team": "a"}, "annotations": {"note": "n"}},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}}
        }))
        .unwrap();
        let spec: CronJobSpec = serde_json::from_value(
            serde_json::json!({"schedule": "0 0 * * *", "jobTemplate": template}),
        )
        .unwrap();
        let mut cronjob = CronJob::new("nightly", spec);
        cronjob.metadata.namespace = Some("ns".into());
        cronjob.metadata.uid = Some("uid-1".into());
        let job = job_for_run(&cronjob, at("2026-11-30T00:00:00Z"));
        assert_eq!(job.name_any(), "nightly-1795996800");
        assert_eq!(job.namespace().as_deref(), Some("ns"));
        assert_eq!(job.labels(), &BTreeMap::from([("team".into(), "a".into())]));
        assert_eq!(
            job.annotations(),
            &BTreeMap::from([
                ("note".into(), "n".into()),
                (
                    SCHEDULED_AT_ANNOTATION.into(),
                    "2026-11-30T00:00:00Z".into()
                ),
            ])
        );
        assert_eq!(job.spec, template.spec);
        let owner = &job.owner_references()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
            ("CronJob", "nightly", "uid-1")
        );
        assert_eq!(
            (owner.controller, owner.block_owner_deletion),
            (Some(true), Some(true))
        );
        assert_eq!(controller_uid(&job).as_deref(), Some("uid-1"));
    }

    #[test]
    fn only_a_cronjob_controller_is_indexed() {
        assert_eq!(
            controller_uid(&owned_by(job("mine"), "uid-1", "CronJob", true)).as_deref(),
            Some("uid-1")
        );
        assert_eq!(
            controller_uid(&owned_by(job("merely-owned"), "uid-1", "CronJob", false)),
            None
        );
        assert_eq!(
            controller_uid(&owned_by(job("other-kind"), "uid-1", "Deployment", true)),
            None
        );
        assert_eq!(controller_uid(&job("orphan")), None);
    }

    #[test]
    fn job_names_are_the_cronjob_and_the_unix_seconds() {
        assert_eq!(job_name("hello", at("1970-01-01T00:01:00Z")), "hello-60");
    }
}
