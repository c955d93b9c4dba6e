// A webhook declared `for` one kind cannot be registered for another.
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kubebuilder_runtime::webhook::{AdmissionContext, Defaulter, FieldError, Webhooks};

#[kubebuilder::webhook(for = Pod, mutating = true, failure_policy = "fail", side_effects = "None",
    verbs = ["create"], name = "mpod.example.com", admission_review_versions = ["v1"])]
pub struct PodDefaulter;

impl Defaulter<ConfigMap> for PodDefaulter {
    async fn default(&self, _: &AdmissionContext<'_>, _: &mut ConfigMap) -> Result<(), Vec<FieldError>> {
        Ok(())
    }
}

fn main() {
    let _ = Webhooks::new().defaulter(PodDefaulter);
}
