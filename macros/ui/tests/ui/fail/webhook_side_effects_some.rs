#[kubebuilder::webhook(mutating = true, failure_policy = "Fail", side_effects = "Some",
    groups = ["batch.tutorial.kubebuilder.io"], resources = ["cronjobs"], verbs = ["create", "update"], versions = ["v1"], name = "mcronjob-v1.kb.io", admission_review_versions = ["v1"])]
pub struct Defaulter;

#[kubebuilder::webhook(mutating = true, failure_policy = "Fail", side_effects = "Nope",
    groups = ["batch.tutorial.kubebuilder.io"], resources = ["cronjobs"], verbs = ["create", "update"], versions = ["v1"], name = "mcronjob-v2.kb.io", admission_review_versions = ["v1"])]
pub struct Other;

fn main() {}
