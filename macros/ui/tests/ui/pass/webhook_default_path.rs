//! The tutorial's webhooks without `path`: kubebuilder's default path is derived from the
//! group, the version and the resource singularised; `Declared` gives it to the server.

use kubebuilder::webhook::{Declared, registered};

#[kubebuilder::webhook(mutating = true, failure_policy = "fail", side_effects = "None",
    groups = ["batch.tutorial.kubebuilder.io"], resources = ["cronjobs"], verbs = ["create", "update"],
    versions = ["v1"], name = "mcronjob-v1.kb.io", admission_review_versions = ["v1"])]
pub struct Defaulter;

#[kubebuilder::webhook(mutating = false, failure_policy = "fail", side_effects = "None",
    groups = ["batch.tutorial.kubebuilder.io"], resources = ["cronjobs"], verbs = ["create", "update"],
    versions = ["v1"], name = "vcronjob-v1.kb.io", admission_review_versions = ["v1"])]
pub struct Validator;

#[kubebuilder::webhook(mutating = true, failure_policy = "Ignore", side_effects = "None",
    groups = ["networking.k8s.io"], resources = ["ingresses"], verbs = ["create"],
    versions = ["v1"], name = "mingress.example.com", admission_review_versions = ["v1"])]
pub struct IngressDefaulter;

#[kubebuilder::webhook(mutating = false, failure_policy = "Ignore", side_effects = "None",
    groups = ["core"], resources = ["pods"], verbs = ["create"],
    versions = ["v1"], name = "vpod.example.com", admission_review_versions = ["v1"])]
pub struct PodValidator;

fn main() {
    assert_eq!(Defaulter::WEBHOOK.path.as_deref(), Some("/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"));
    assert_eq!(Validator::WEBHOOK.path.as_deref(), Some("/validate-batch-tutorial-kubebuilder-io-v1-cronjob"));
    assert_eq!(IngressDefaulter::WEBHOOK.path.as_deref(), Some("/mutate-networking-k8s-io-v1-ingress"));
    // The core group is "", as in kubebuilder's path for core kinds.
    assert_eq!(PodValidator::WEBHOOK.path.as_deref(), Some("/validate--v1-pod"));
    assert_eq!(*PodValidator::WEBHOOK.groups, [""]);
    assert_eq!(Defaulter::WEBHOOK.failure_policy, "Fail");
    assert_eq!(*Defaulter::WEBHOOK.verbs, ["CREATE", "UPDATE"]);
    assert_eq!(Defaulter::WEBHOOK.service_name, "webhook-service");
    assert_eq!(Defaulter::WEBHOOK.service_namespace, "system");
    assert_eq!(registered().len(), 4);
}
