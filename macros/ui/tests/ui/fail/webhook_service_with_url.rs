#[kubebuilder::webhook(url = "https://example.com/mutate", mutating = true,
    failure_policy = "Fail", side_effects = "None", service_name = "hooks", service_port = 443,
    groups = ["batch.tutorial.kubebuilder.io"], resources = ["cronjobs"], verbs = ["create", "update"], versions = ["v1"], name = "mcronjob-v1.kb.io", admission_review_versions = ["v1"])]
pub struct Defaulter;

fn main() {}
