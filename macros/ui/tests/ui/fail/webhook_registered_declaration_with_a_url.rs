use k8s_openapi::api::core::v1::ConfigMap;
use kubebuilder_runtime::webhook::{AdmissionContext, Defaulter, FieldError, Webhooks};

#[kubebuilder::webhook(
    url = "https://webhooks.example.io/configmaps", mutating = true, failure_policy = "fail",
    side_effects = "None", groups = [""], resources = ["configmaps"], verbs = ["create"],
    versions = ["v1"], name = "mconfigmap.example.io", admission_review_versions = ["v1"]
)]
struct External;

impl Defaulter<ConfigMap> for External {
    async fn default(&self, _: &AdmissionContext<'_>, _: &mut ConfigMap) -> Result<(), Vec<FieldError>> {
        Ok(())
    }
}

fn main() {
    let _ = Webhooks::new().defaulter(External);
}
