// Declared `for` a kind, the rule and the path are the kind's: writing them too is refused.
#[kubebuilder::webhook(for = k8s_openapi::api::core::v1::Pod, path = "/validate-pods", mutating = false, failure_policy = "fail",
    side_effects = "None", groups = ["core"], resources = ["pods"], versions = ["v1"], kind = "Pod",
    verbs = ["create"], name = "vpod.example.com", admission_review_versions = ["v1"])]
pub struct PodValidator;

fn main() {}
