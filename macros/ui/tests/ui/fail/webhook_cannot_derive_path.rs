// Two resources: which kind would the default path name?
#[kubebuilder::webhook(mutating = true, failure_policy = "Fail", side_effects = "None",
    groups = ["apps"], resources = ["deployments", "statefulsets"], verbs = ["create"],
    versions = ["v1"], name = "mapps.example.com", admission_review_versions = ["v1"])]
pub struct Defaulter;

fn main() {}
