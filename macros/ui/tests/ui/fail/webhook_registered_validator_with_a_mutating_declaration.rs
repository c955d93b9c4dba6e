use k8s_openapi::api::core::v1::ConfigMap;
use kubebuilder_runtime::webhook::{AdmissionContext, FieldError, Validator, Warnings, Webhooks};

#[kubebuilder::webhook(
    path = "/mutate-v1-configmap", mutating = true, failure_policy = "fail",
    side_effects = "None", groups = [""], resources = ["configmaps"], verbs = ["create"],
    versions = ["v1"], name = "mconfigmap.example.io", admission_review_versions = ["v1"]
)]
struct Filler;

impl Validator<ConfigMap> for Filler {
    async fn validate_create(&self, _: &AdmissionContext<'_>, _: &ConfigMap) -> Result<Warnings, Vec<FieldError>> {
        Ok(Warnings::new())
    }

    async fn validate_update(&self, _: &AdmissionContext<'_>, _: &ConfigMap, _: &ConfigMap) -> Result<Warnings, Vec<FieldError>> {
        Ok(Warnings::new())
    }
}

fn main() {
    let _ = Webhooks::new().validator(Filler);
}
