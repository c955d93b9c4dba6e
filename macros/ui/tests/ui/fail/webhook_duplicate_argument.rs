#[kubebuilder::webhook(
    mutating = true,
    mutating = false,
    failure_policy = "Fail",
    side_effects = "None",
    groups = ["batch.tutorial.kubebuilder.io"],
    resources = ["cronjobs"],
    versions = ["v1"],
    verbs = ["create"],
    name = "mcronjob-v1.kb.io",
    admission_review_versions = ["v1"],
)]
pub struct Defaulter;

#[kubebuilder::webhook_configuration(mutating = true, name = "a", name = "b")]
pub struct Configuration;

fn main() {}
