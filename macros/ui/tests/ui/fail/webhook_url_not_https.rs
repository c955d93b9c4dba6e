#[kubebuilder::webhook(url = "http://example.com/mutate", mutating = true,
    failure_policy = "Fail", side_effects = "None",
    groups = ["batch.tutorial.kubebuilder.io"], resources = ["cronjobs"], verbs = ["create", "update"], versions = ["v1"], name = "mcronjob-v1.kb.io", admission_review_versions = ["v1"])]
pub struct Defaulter;

fn main() {}
