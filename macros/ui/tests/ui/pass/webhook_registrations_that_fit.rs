//! A mutating declaration served as a defaulter and a validating one as a validator.

use k8s_openapi::api::core::v1::ConfigMap;
use kubebuilder_runtime::webhook::{
    AdmissionContext, Defaulter, FieldError, Validator, Warnings, Webhooks,
};

#[kubebuilder::webhook(
    path = "/mutate-v1-configmap", mutating = true, failure_policy = "fail",
    side_effects = "None", groups = [""], resources = ["configmaps"], verbs = ["create"],
    versions = ["v1"], name = "mconfigmap.example.io", admission_review_versions = ["v1"]
)]
struct Mutating;

impl Defaulter<ConfigMap> for Mutating {
    async fn default(&self, _: &AdmissionContext<'_>, _: &mut ConfigMap) -> Result<(), Vec<FieldError>> {
        Ok(())
    }
}

#[kubebuilder::webhook(
    path = "/validate-v1-configmap", mutating = false, failure_policy = "fail",
    side_effects = "None", groups = [""], resources = ["configmaps"], verbs = ["create"],
    versions = ["v1"], name = "vconfigmap.example.io", admission_review_versions = ["v1"]
)]
struct Validating;

impl Validator<ConfigMap> for Validating {
    async fn validate_create(&self, _: &AdmissionContext<'_>, _: &ConfigMap) -> Result<Warnings, Vec<FieldError>> {
        Ok(Warnings::new())
    }

    async fn validate_update(&self, _: &AdmissionContext<'_>, _: &ConfigMap, _: &ConfigMap) -> Result<Warnings, Vec<FieldError>> {
        Ok(Warnings::new())
    }
}

fn main() {
    let _ = Webhooks::new().defaulter(Mutating).validator(Validating);
}
