//! The CronJob v1 admission webhooks: a defaulter and a validator, declared with the
//! tutorial's markers (v2's are in `webhook_v2`). Each attribute is `for` the kind, which
//! gives the rule's group, version and resource and the default path; the attributes give
//! the webhook server each type's path and `cargo xtask manifests` the entries of
//! `config/webhook/manifests.yaml`.
//!
//! Every CronJob webhook, of either version, has `match_policy = "Exact"`: each version's
//! webhooks admit the requests made in that version. With the default (Equivalent), the
//! apiserver would convert a request to the other version first, and an object that
//! version cannot express would fail with 500 instead of being refused.

use api::v1::{ConcurrencyPolicy, CronJob, CronJobSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubebuilder_runtime::webhook::{
    self as admission, AdmissionContext, FieldError, FieldPath, Warnings, Webhooks,
};

use super::schedule;

/// The longest CronJob name. Its Jobs are named `<cronjob>-<unix seconds>` and that name
/// must fit a 63-character label value; the suffix takes 11 characters.
pub const MAX_NAME_LENGTH: usize = 63 - 11;

/// Finished Jobs kept per outcome when the CronJob does not say.
pub(super) const DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT: i32 = 3;
pub(super) const DEFAULT_FAILED_JOBS_HISTORY_LIMIT: i32 = 1;

/// The CronJob v1 webhooks the manager serves.
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
    name = "mcronjob-v1.kb.io",
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

/// Sets every unset optional field that has a default; values already set stay.
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
    name = "vcronjob-v1.kb.io",
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

    /// Only the new object matters: an old CronJob that no longer passes (stricter rules
    /// since) can still be fixed by an update.
    async fn validate_update(
        &self,
        _: &AdmissionContext<'_>,
        _old: &CronJob,
        cronjob: &CronJob,
    ) -> Result<Warnings, Vec<FieldError>> {
        validate(cronjob)
    }

    // Deletion keeps the trait's answer: always allowed.
}

/// Every problem of `cronjob` at once, so one refusal lists all that needs fixing.
fn validate(cronjob: &CronJob) -> Result<Warnings, Vec<FieldError>> {
    verdict([
        validate_name(&cronjob.metadata),
        validate_schedule(&cronjob.spec),
    ])
}

/// Allowed without warnings, or refused with every error found.
pub(super) fn verdict(
    checks: impl IntoIterator<Item = Option<FieldError>>,
) -> Result<Warnings, Vec<FieldError>> {
    let errors: Vec<FieldError> = checks.into_iter().flatten().collect();
    if errors.is_empty() {
        Ok(Warnings::new())
    } else {
        Err(errors)
    }
}

pub(super) fn validate_name(metadata: &ObjectMeta) -> Option<FieldError> {
    let name = metadata.name.as_deref().unwrap_or_default();
    // Kubernetes names are ASCII, so bytes are characters.
    (name.len() > MAX_NAME_LENGTH).then(|| {
        FieldError::invalid(
            FieldPath::new("metadata").child("name"),
            name,
            format!("must be no more than {MAX_NAME_LENGTH} characters"),
        )
    })
}

/// The same check the reconciler's schedule parser makes, so a CronJob admitted here is
/// one the controller can schedule.
fn validate_schedule(spec: &CronJobSpec) -> Option<FieldError> {
    schedule::validate(&spec.schedule).err().map(|err| {
        FieldError::invalid(
            FieldPath::new("spec").child("schedule"),
            spec.schedule.as_str(),
            err.to_string(),
        )
    })
}

#[cfg(test)]
mod tests {
    use kubebuilder::webhook::Declared;
    use kubebuilder_runtime::webhook::{
        Defaulter as _, FieldErrorType, Validator as _, invalid_status,
    };
    use std::sync::LazyLock;

    use kube::core::DynamicObject;
    use kube::core::admission::AdmissionRequest;
    use serde_json::{Value, json};

    use super::*;

    /// What the webhooks are told besides the object: they read none of it.
    fn context() -> AdmissionContext<'static> {
        static REQUEST: LazyLock<AdmissionRequest<DynamicObject>> = LazyLock::new(|| {
            serde_json::from_value(json!({
                "uid": "1",
                "kind": {"group": "batch.tutorial.kubebuilder.io", "version": "v1", "kind": "CronJob"},
                "resource": {"group": "batch.tutorial.kubebuilder.io", "version": "v1", "resource": "cronjobs"},
                "operation": "CREATE",
                "userInfo": {"username": "admin"},
            }))
            .unwrap()
        });
        AdmissionContext::new(&REQUEST)
    }

    /// A CronJob as a user writes it: name, schedule and Job template only.
    fn cronjob(name: &str, schedule: &str, optional_spec_fields: Value) -> CronJob {
        let mut spec = json!({
            "schedule": schedule,
            "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "hello", "image": "busybox"}],
                "restartPolicy": "OnFailure",
            }}}},
        });
        if let Value::Object(fields) = optional_spec_fields {
            spec.as_object_mut().unwrap().extend(fields);
        }
        serde_json::from_value(json!({
            "apiVersion": "batch.tutorial.kubebuilder.io/v1",
            "kind": "CronJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn defaults_fill_every_unset_field() {
        let mut defaulted = cronjob("hello", "*/1 * * * *", json!({}));
        Defaulter.default(&context(), &mut defaulted).await.unwrap();
        let spec = &defaulted.spec;
        assert_eq!(spec.concurrency_policy, Some(ConcurrencyPolicy::Allow));
        assert_eq!(spec.suspend, Some(false));
        assert_eq!(spec.successful_jobs_history_limit, Some(3));
        assert_eq!(spec.failed_jobs_history_limit, Some(1));
        // Fields without a default stay unset.
        assert_eq!(spec.starting_deadline_seconds, None);
    }

    #[tokio::test]
    async fn defaults_never_overwrite_set_values() {
        // Zero and false are set values too, not "unset".
        let set = json!({
            "concurrencyPolicy": "Forbid",
            "suspend": true,
            "successfulJobsHistoryLimit": 0,
            "failedJobsHistoryLimit": 0,
        });
        let original = cronjob("hello", "*/1 * * * *", set);
        let mut defaulted = original.clone();
        Defaulter.default(&context(), &mut defaulted).await.unwrap();
        assert_eq!(defaulted, original);
    }

    #[tokio::test]
    async fn a_valid_cronjob_is_allowed_without_warnings() {
        let longest_name = "a".repeat(MAX_NAME_LENGTH);
        for (name, schedule) in [
            ("hello", "*/1 * * * *"),
            (longest_name.as_str(), "0 9 * * 1-5"),
            ("nightly", "@daily"),
        ] {
            let valid = cronjob(name, schedule, json!({}));
            assert_eq!(
                Validator.validate_create(&context(), &valid).await,
                Ok(Warnings::new()),
                "{name} {schedule}"
            );
            assert_eq!(
                Validator.validate_update(&context(), &valid, &valid).await,
                Ok(Warnings::new())
            );
        }
    }

    #[tokio::test]
    async fn a_name_over_52_characters_is_invalid_at_metadata_name() {
        let name = "a".repeat(MAX_NAME_LENGTH + 1);
        let errors = Validator
            .validate_create(&context(), &cronjob(&name, "*/1 * * * *", json!({})))
            .await
            .unwrap_err();
        assert_eq!(
            errors,
            [FieldError::invalid(
                "metadata.name",
                name.as_str(),
                "must be no more than 52 characters"
            )]
        );
    }

    #[tokio::test]
    async fn an_unparsable_schedule_is_invalid_at_spec_schedule_with_the_parsers_message() {
        for schedule in ["* * * *", "61 * * * *", "0 0 * * * *", "every minute"] {
            let errors = Validator
                .validate_create(&context(), &cronjob("hello", schedule, json!({})))
                .await
                .unwrap_err();
            let parser_message = schedule::validate(schedule).unwrap_err().to_string();
            assert_eq!(
                errors,
                [FieldError::invalid(
                    "spec.schedule",
                    schedule,
                    parser_message
                )],
                "{schedule:?}"
            );
        }
    }

    #[tokio::test]
    async fn every_error_is_reported_at_once_on_create_and_update() {
        let name = "n".repeat(60);
        let broken = cronjob(&name, "not a schedule", json!({}));
        let valid = cronjob(&name[..MAX_NAME_LENGTH], "*/5 * * * *", json!({}));
        for errors in [
            Validator
                .validate_create(&context(), &broken)
                .await
                .unwrap_err(),
            Validator
                .validate_update(&context(), &valid, &broken)
                .await
                .unwrap_err(),
        ] {
            let fields: Vec<(FieldErrorType, String)> = errors
                .iter()
                .map(|error| (error.error_type, error.field.to_string()))
                .collect();
            assert_eq!(
                fields,
                [
                    (FieldErrorType::Invalid, "metadata.name".to_owned()),
                    (FieldErrorType::Invalid, "spec.schedule".to_owned()),
                ]
            );
            // What the runtime turns them into: one Invalid status for the kind.
            let status = invalid_status("batch.tutorial.kubebuilder.io", "CronJob", &name, &errors);
            assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
            assert!(
                status.message.starts_with(&format!(
                    r#"CronJob.batch.tutorial.kubebuilder.io "{name}" is invalid: [metadata.name: "#
                )),
                "{}",
                status.message
            );
        }
    }

    #[tokio::test]
    async fn deleting_is_always_allowed() {
        let broken = cronjob(&"n".repeat(60), "not a schedule", json!({}));
        assert_eq!(
            Validator.validate_delete(&context(), &broken).await,
            Ok(Warnings::new())
        );
    }

    #[test]
    fn the_webhooks_are_served_at_their_declared_paths() {
        let webhooks = webhooks();
        let served: Vec<(&str, bool, Option<&str>)> = webhooks
            .declarations()
            .iter()
            .map(|webhook| (&*webhook.name, webhook.mutating, webhook.path.as_deref()))
            .collect();
        assert_eq!(
            served,
            [
                (
                    "mcronjob-v1.kb.io",
                    true,
                    Some("/mutate-batch-tutorial-kubebuilder-io-v1-cronjob")
                ),
                (
                    "vcronjob-v1.kb.io",
                    false,
                    Some("/validate-batch-tutorial-kubebuilder-io-v1-cronjob")
                ),
            ]
        );
        assert_eq!(webhooks.declarations()[0], Defaulter::WEBHOOK);
        assert_eq!(webhooks.declarations()[1], Validator::WEBHOOK);
    }
}
