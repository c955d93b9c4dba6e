//! `for = Kind` with a k8s-openapi kind: the core group is `""`, in the path too.

use k8s_openapi::api::core::v1::Pod;
use kubebuilder::webhook::Declared;
use kubebuilder_runtime::webhook::{AdmissionContext, FieldError, Validator, Warnings, Webhooks};

#[kubebuilder::webhook(for = Pod, mutating = false, failure_policy = "fail", side_effects = "None",
    verbs = ["create"], name = "vpod.example.com", admission_review_versions = ["v1"])]
pub struct PodValidator;

impl Validator<Pod> for PodValidator {
    async fn validate_create(&self, _: &AdmissionContext<'_>, _: &Pod) -> Result<Warnings, Vec<FieldError>> {
        Ok(Warnings::new())
    }

    async fn validate_update(&self, _: &AdmissionContext<'_>, _: &Pod, _: &Pod) -> Result<Warnings, Vec<FieldError>> {
        Ok(Warnings::new())
    }
}

fn main() {
    let webhook = PodValidator::WEBHOOK;
    assert_eq!(webhook.path.as_deref(), Some("/validate--v1-pod"));
    assert_eq!(*webhook.groups, [""]);
    assert_eq!(*webhook.resources, ["pods"]);
    assert_eq!(*webhook.versions, ["v1"]);
    let _ = Webhooks::new().validator(PodValidator);
}
