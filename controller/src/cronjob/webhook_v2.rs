//! The CronJob v2 admission webhooks: v1's defaults and checks, on v2's structured
//! schedule (the tutorial's `mcronjob-v2.kb.io` and `vcronjob-v2.kb.io`), matched
//! exactly as v1's are (see `webhook`).

use api::v2::{ConcurrencyPolicy, CronJob, CronJobSpec};
use kubebuilder_runtime::webhook::{
    self as admission, AdmissionContext, FieldError, FieldPath, Warnings, Webhooks,
};

use super::schedule;
use super::webhook::{
    DEFAULT_FAILED_JOBS_HISTORY_LIMIT, DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT, validate_name,
    verdict,
};

/// The prefix of a refused schedule's message, as the tutorial's v2 validator writes it.
const INVALID_SCHEDULE: &str = "invalid cron schedule format: ";

/// The CronJob v2 webhooks.
pub fn webhooks() -> Webhooks {
    Webhooks::new().defaulter(Defaulter).validator(Validator)
}

/// Fills in the CronJob defaults the API leaves unset.
#[kubebuilder::webhook(
    for = CronJob,
    mutating = true,
    failure_policy = "fail",
    side_effects = "None",
    verbs = ["create", "update"],
    name = "mcronjob-v2.kb.io",
    admission_review_versions = ["v1"],
    match_policy = "Exact"
)]
pub struct Defaulter;

impl admission::Defaulter<CronJob> for Defaulter {
    async fn default(
        &self,
        _: &AdmissionContext<'_>,
        cronjob: &mut CronJob,
    ) -> Result<(), Vec<FieldError>> {
        set_defaults(&mut cronjob.spec);
        Ok(())
    }
}

fn set_defaults(spec: &mut CronJobSpec) {
    spec.concurrency_policy
        .get_or_insert(ConcurrencyPolicy::Allow);
    spec.suspend.get_or_insert(false);
    spec.successful_jobs_history_limit
        .get_or_insert(DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT);
    spec.failed_jobs_history_limit
        .get_or_insert(DEFAULT_FAILED_JOBS_HISTORY_LIMIT);
}

/// Refuses CronJobs whose name or schedule cannot work.
#[kubebuilder::webhook(
    for = CronJob,
    mutating = false,
    failure_policy = "fail",
    side_effects = "None",
    verbs = ["create", "update"],
    name = "vcronjob-v2.kb.io",
    admission_review_versions = ["v1"],
    match_policy = "Exact"
)]
pub struct Validator;

impl admission::Validator<CronJob> for Validator {
    async fn validate_create(
        &self,
        _: &AdmissionContext<'_>,
        cronjob: &CronJob,
    ) -> Result<Warnings, Vec<FieldError>> {
        validate(cronjob)
    }

    async fn validate_update(
        &self,
        _: &AdmissionContext<'_>,
        _old: &CronJob,
        cronjob: &CronJob,
    ) -> Result<Warnings, Vec<FieldError>> {
        validate(cronjob)
    }
}

fn validate(cronjob: &CronJob) -> Result<Warnings, Vec<FieldError>> {
    verdict([
        validate_name(&cronjob.metadata),
        validate_schedule(&cronjob.spec),
    ])
}

/// The fields must make one cron schedule (what v1, the storage version, holds) that the
/// reconciler's parser accepts.
fn validate_schedule(spec: &CronJobSpec) -> Option<FieldError> {
    let cron = match spec.schedule.to_cron() {
        Ok(cron) => cron,
        Err(not_a_field) => {
            return Some(FieldError::invalid(
                not_a_field.field.as_str(),
                serde_json::to_value(&spec.schedule).unwrap_or_default(),
                format!("{INVALID_SCHEDULE}{}", not_a_field.message),
            ));
        }
    };
    schedule::validate(&cron).err().map(|err| {
        FieldError::invalid(
            FieldPath::new("spec").child("schedule"),
            serde_json::to_value(&spec.schedule).unwrap_or_default(),
            format!("{INVALID_SCHEDULE}{err}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use std::sync::LazyLock;

    use kube::core::DynamicObject;
    use kube::core::admission::AdmissionRequest;
    use kubebuilder_runtime::webhook::{Defaulter as _, Validator as _};
    use serde_json::{Value, json};

    use super::*;

    fn context() -> AdmissionContext<'static> {
        static REQUEST: LazyLock<AdmissionRequest<DynamicObject>> = LazyLock::new(|| {
            serde_json::from_value(json!({
                "uid": "1",
                "kind": {"group": "batch.tutorial.kubebuilder.io", "version": "v2", "kind": "CronJob"},
                "resource": {"group": "batch.tutorial.kubebuilder.io", "version": "v2", "resource": "cronjobs"},
                "operation": "CREATE",
                "userInfo": {"username": "admin"},
            }))
            .unwrap()
        });
        AdmissionContext::new(&REQUEST)
    }

    fn cronjob(schedule: Value) -> CronJob {
        serde_json::from_value(json!({
            "apiVersion": "batch.tutorial.kubebuilder.io/v2",
            "kind": "CronJob",
            "metadata": {"name": "hello", "namespace": "default"},
            "spec": {
                "schedule": schedule,
                "jobTemplate": {"spec": {"template": {"spec": {
                    "containers": [{"name": "hello", "image": "busybox"}],
                    "restartPolicy": "OnFailure",
                }}}},
            },
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn defaults_are_v1s() {
        let mut defaulted = cronjob(json!({"minute": "*/1"}));
        Defaulter.default(&context(), &mut defaulted).await.unwrap();
        let spec = &defaulted.spec;
        assert_eq!(spec.concurrency_policy, Some(ConcurrencyPolicy::Allow));
        assert_eq!(spec.suspend, Some(false));
        assert_eq!(spec.successful_jobs_history_limit, Some(3));
        assert_eq!(spec.failed_jobs_history_limit, Some(1));
    }

    #[tokio::test]
    async fn a_schedule_of_fields_is_valid_and_a_bad_field_is_refused_at_its_path() {
        let valid = cronjob(json!({"minute": "*/1", "dayOfWeek": "1-5"}));
        assert_eq!(
            Validator.validate_create(&context(), &valid).await,
            Ok(vec![])
        );
        for (schedule, path) in [
            (json!({"minute": "61"}), "spec.schedule"),
            (json!({"hour": "1 2"}), "spec.schedule.hour"),
            (json!({"month": ""}), "spec.schedule.month"),
        ] {
            let errors = Validator
                .validate_create(&context(), &cronjob(schedule.clone()))
                .await
                .unwrap_err();
            assert_eq!(errors.len(), 1, "{schedule}");
            assert_eq!(errors[0].field.to_string(), path, "{schedule}");
            assert!(
                errors[0].detail.starts_with(INVALID_SCHEDULE),
                "{schedule}: {}",
                errors[0].detail
            );
        }
    }
}
