//! CronJob v2 ⇄ v1, the hub: the schedule is joined from or split into its five fields;
//! everything else is the same field by field.
//!
//! Each version can say something the other cannot, and a round trip must give the same
//! object back, so that part travels in an annotation, as Kubernetes carries fields an
//! older version lacks (the annotation is consumed on the way back):
//! - [`V1_SCHEDULE_ANNOTATION`] on a v2 object: the v1 schedule, when its five fields do
//!   not spell it back (`@daily`, or spaces other than one between fields);
//! - [`V2_SCHEDULE_ANNOTATION`] on a v1 object: the v2 fields given as `*`, which v1
//!   writes as it writes missing ones.
//!
//! A carried value is used only while the other version's fields still mean it: a v2
//! update that changes the schedule wins over the `@daily` carried from v1.

use std::collections::BTreeMap;

use kubebuilder::conversion::{ConversionError, Spoke};

use super::cronjob_types::{ConcurrencyPolicy, CronJob, CronJobSpec, CronJobStatus, CronSchedule};
use crate::v1;

/// On a v2 object: the v1 schedule text the v2 fields stand for.
pub const V1_SCHEDULE_ANNOTATION: &str = "batch.tutorial.kubebuilder.io/v1-schedule";

/// On a v1 object: the v2 schedule fields given as `*` (comma-separated JSON names).
pub const V2_SCHEDULE_ANNOTATION: &str = "batch.tutorial.kubebuilder.io/v2-schedule";

/// The fields of the schedule in cron order, with their JSON names.
const FIELDS: [&str; 5] = ["minute", "hour", "dayOfMonth", "month", "dayOfWeek"];

impl Spoke<v1::CronJob> for CronJob {
    fn to_hub(self) -> Result<v1::CronJob, ConversionError> {
        let CronJob {
            mut metadata,
            spec,
            status,
        } = self;
        let carried = take_annotation(&mut metadata.annotations, V1_SCHEDULE_ANNOTATION);
        let fields = fields_of(&spec.schedule);
        let mut schedule = join(&fields)?;
        if let Some(carried) = carried
            && split(&carried).is_ok_and(|parts| parts.fields == fields.map(normalized))
        {
            schedule = carried;
        }
        let explicit_stars: Vec<&str> = FIELDS
            .iter()
            .zip(fields)
            .filter(|(_, field)| field == &Some("*"))
            .map(|(name, _)| *name)
            .collect();
        if !explicit_stars.is_empty() {
            put_annotation(
                &mut metadata.annotations,
                V2_SCHEDULE_ANNOTATION,
                explicit_stars.join(","),
            );
        }
        Ok(v1::CronJob {
            metadata,
            spec: v1::CronJobSpec {
                schedule,
                time_zone: spec.time_zone,
                starting_deadline_seconds: spec.starting_deadline_seconds,
                concurrency_policy: spec.concurrency_policy.map(ConcurrencyPolicy::into_v1),
                suspend: spec.suspend,
                job_template: spec.job_template,
                successful_jobs_history_limit: spec.successful_jobs_history_limit,
                failed_jobs_history_limit: spec.failed_jobs_history_limit,
            },
            status: status.map(CronJobStatus::into_v1),
        })
    }

    fn from_hub(hub: v1::CronJob) -> Result<Self, ConversionError> {
        let v1::CronJob {
            mut metadata,
            spec,
            status,
        } = hub;
        let explicit_stars = take_annotation(&mut metadata.annotations, V2_SCHEDULE_ANNOTATION);
        let parts = split(&spec.schedule)?;
        if !parts.exact {
            put_annotation(
                &mut metadata.annotations,
                V1_SCHEDULE_ANNOTATION,
                spec.schedule.clone(),
            );
        }
        let mut fields = parts.fields;
        for name in explicit_stars.iter().flat_map(|names| names.split(',')) {
            if let Some(index) = FIELDS.iter().position(|field| *field == name) {
                fields[index].get_or_insert_with(|| "*".to_owned());
            }
        }
        let [minute, hour, day_of_month, month, day_of_week] = fields;
        Ok(CronJob {
            metadata,
            spec: CronJobSpec {
                schedule: CronSchedule {
                    minute,
                    hour,
                    day_of_month,
                    month,
                    day_of_week,
                },
                time_zone: spec.time_zone,
                starting_deadline_seconds: spec.starting_deadline_seconds,
                concurrency_policy: spec.concurrency_policy.map(ConcurrencyPolicy::from_v1),
                suspend: spec.suspend,
                job_template: spec.job_template,
                successful_jobs_history_limit: spec.successful_jobs_history_limit,
                failed_jobs_history_limit: spec.failed_jobs_history_limit,
            },
            status: status.map(CronJobStatus::from_v1),
        })
    }
}

impl CronSchedule {
    /// The v1 schedule these fields stand for (`*` for a missing one), or why there is none:
    /// a field that is empty or holds spaces cannot be one part of a cron schedule.
    pub fn to_cron(&self) -> Result<String, ConversionError> {
        join(&fields_of(self))
    }
}

fn fields_of(schedule: &CronSchedule) -> [Option<&str>; 5] {
    [
        &schedule.minute,
        &schedule.hour,
        &schedule.day_of_month,
        &schedule.month,
        &schedule.day_of_week,
    ]
    .map(Option::as_deref)
}

/// A field as splitting its joined text gives it back: `*` is missing.
fn normalized(field: Option<&str>) -> Option<String> {
    field.filter(|part| *part != "*").map(str::to_owned)
}

fn join(fields: &[Option<&str>; 5]) -> Result<String, ConversionError> {
    let mut parts = Vec::with_capacity(5);
    for (name, field) in FIELDS.iter().zip(fields) {
        let part = field.unwrap_or("*");
        if part.is_empty() || part.contains(char::is_whitespace) {
            return Err(ConversionError::new(
                format!("spec.schedule.{name}"),
                format!("{part:?} is not one cron field (it must be non-empty, without spaces)"),
            ));
        }
        parts.push(part);
    }
    Ok(parts.join(" "))
}

/// A v1 schedule as v2 fields.
struct Parts {
    fields: [Option<String>; 5],
    /// Whether joining the fields gives the schedule back as written.
    exact: bool,
}

fn split(schedule: &str) -> Result<Parts, ConversionError> {
    let expanded = descriptor(schedule).unwrap_or(schedule);
    let parts: Vec<&str> = expanded.split_whitespace().collect();
    let Ok(parts) = <[&str; 5]>::try_from(parts) else {
        return Err(ConversionError::new(
            "spec.schedule",
            format!("invalid schedule {schedule:?}: not a standard 5-field schedule"),
        ));
    };
    Ok(Parts {
        fields: parts.map(|part| normalized(Some(part))),
        exact: parts.join(" ") == schedule,
    })
}

/// The five fields a cron descriptor stands for (the reconciler's parser, croner, reads
/// them case-insensitively and trimmed).
fn descriptor(schedule: &str) -> Option<&'static str> {
    let name = schedule.trim().to_ascii_lowercase();
    Some(match name.as_str() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        _ => return None,
    })
}

fn take_annotation(
    annotations: &mut Option<BTreeMap<String, String>>,
    key: &str,
) -> Option<String> {
    let map = annotations.as_mut()?;
    let value = map.remove(key);
    if map.is_empty() {
        *annotations = None;
    }
    value
}

fn put_annotation(annotations: &mut Option<BTreeMap<String, String>>, key: &str, value: String) {
    annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(key.to_owned(), value);
}

impl ConcurrencyPolicy {
    fn into_v1(self) -> v1::ConcurrencyPolicy {
        match self {
            Self::Allow => v1::ConcurrencyPolicy::Allow,
            Self::Forbid => v1::ConcurrencyPolicy::Forbid,
            Self::Replace => v1::ConcurrencyPolicy::Replace,
        }
    }

    fn from_v1(policy: v1::ConcurrencyPolicy) -> Self {
        match policy {
            v1::ConcurrencyPolicy::Allow => Self::Allow,
            v1::ConcurrencyPolicy::Forbid => Self::Forbid,
            v1::ConcurrencyPolicy::Replace => Self::Replace,
        }
    }
}

impl CronJobStatus {
    fn into_v1(self) -> v1::CronJobStatus {
        v1::CronJobStatus {
            active: self.active,
            last_schedule_time: self.last_schedule_time,
            conditions: self.conditions,
        }
    }

    fn from_v1(status: v1::CronJobStatus) -> Self {
        Self {
            active: status.active,
            last_schedule_time: status.last_schedule_time,
            conditions: status.conditions,
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::JobTemplateSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn v1_with(schedule: &str) -> v1::CronJob {
        v1::CronJob {
            metadata: ObjectMeta {
                name: Some("hello".into()),
                ..ObjectMeta::default()
            },
            spec: v1::CronJobSpec {
                schedule: schedule.into(),
                time_zone: None,
                starting_deadline_seconds: Some(60),
                concurrency_policy: Some(v1::ConcurrencyPolicy::Forbid),
                suspend: None,
                job_template: JobTemplateSpec::default(),
                successful_jobs_history_limit: None,
                failed_jobs_history_limit: None,
            },
            status: None,
        }
    }

    fn minute(value: &str) -> CronSchedule {
        CronSchedule {
            minute: Some(value.into()),
            ..CronSchedule::default()
        }
    }

    #[test]
    fn the_tutorials_schedule_reads_as_a_minute_and_back() {
        let v2 = CronJob::from_hub(v1_with("*/1 * * * *")).unwrap();
        assert_eq!(v2.spec.schedule, minute("*/1"));
        assert_eq!(v2.metadata.annotations, None);
        assert_eq!(v2.spec.concurrency_policy, Some(ConcurrencyPolicy::Forbid));
        assert_eq!(v2.to_hub().unwrap(), v1_with("*/1 * * * *"));
    }

    #[test]
    fn a_descriptor_reads_as_its_fields_and_comes_back_while_they_stand() {
        let v2 = CronJob::from_hub(v1_with("@daily")).unwrap();
        assert_eq!(
            v2.spec.schedule,
            CronSchedule {
                minute: Some("0".into()),
                hour: Some("0".into()),
                ..CronSchedule::default()
            }
        );
        assert_eq!(
            v2.metadata.annotations.as_ref().unwrap()[V1_SCHEDULE_ANNOTATION],
            "@daily"
        );
        assert_eq!(v2.clone().to_hub().unwrap(), v1_with("@daily"));

        let mut edited = v2;
        edited.spec.schedule.hour = Some("5".into());
        assert_eq!(edited.to_hub().unwrap(), v1_with("0 5 * * *"));
    }

    #[test]
    fn an_explicit_star_survives_v1() {
        let v2 = CronJob::from_hub(v1_with("0 * * * *")).unwrap();
        let mut explicit = v2.clone();
        explicit.spec.schedule.hour = Some("*".into());
        let hub = explicit.clone().to_hub().unwrap();
        assert_eq!(hub.spec.schedule, "0 * * * *");
        assert_eq!(
            hub.metadata.annotations.as_ref().unwrap()[V2_SCHEDULE_ANNOTATION],
            "hour"
        );
        assert_eq!(CronJob::from_hub(hub).unwrap(), explicit);
    }

    #[test]
    fn what_is_not_five_fields_is_refused_with_its_field() {
        let error = CronJob::from_hub(v1_with("* * * *")).unwrap_err();
        assert_eq!(error.field, "spec.schedule");
        assert!(
            error.message.contains("not a standard 5-field schedule"),
            "{error}"
        );

        let mut v2 = CronJob::from_hub(v1_with("* * * * *")).unwrap();
        v2.spec.schedule.day_of_week = Some("1 2".into());
        let error = v2.to_hub().unwrap_err();
        assert_eq!(error.field, "spec.schedule.dayOfWeek");
    }
}
