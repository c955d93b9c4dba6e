use k8s_openapi::api::core::v1::ConfigMap;
use kubebuilder_runtime::webhook::{AdmissionContext, Defaulter, FieldError, Webhooks};

#[kubebuilder::webhook(
    path = "/validate-v1-configmap", mutating = false, failure_policy = "fail",
    side_effects = "None", groups = [""], resources = ["configmaps"], verbs = ["create"],
    versions = ["v1"], name = "vconfigmap.example.io", admission_review_versions = ["v1"]
)]
struct Checker;

impl Defaulter<ConfigMap> for Checker {
    async fn default(&self, _: &AdmissionContext<'_>, _: &mut ConfigMap) -> Result<(), Vec<FieldError>> {
        Ok(())
    }
}

fn main() {
    let _ = Webhooks::new().defaulter(Checker);
}
