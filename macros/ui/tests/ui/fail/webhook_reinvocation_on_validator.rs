#[kubebuilder::webhook(mutating = false, failure_policy = "Fail", side_effects = "None",
    groups = ["batch.tutorial.kubebuilder.io"], resources = ["cronjobs"], verbs = ["create", "update"], versions = ["v1"], name = "vcronjob-v1.kb.io", admission_review_versions = ["v1"],
    reinvocation_policy = "IfNeeded")]
pub struct Validator;

fn main() {}
