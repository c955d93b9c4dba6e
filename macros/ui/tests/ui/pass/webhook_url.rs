//! A webhook reached at a URL instead of through the webhook Service.

use kubebuilder::webhook::Declared;

#[kubebuilder::webhook(url = "https://hooks.example.com/validate", mutating = false,
    failure_policy = "Fail", side_effects = "None", groups = ["apps"], resources = ["deployments"],
    verbs = ["create"], versions = ["v1"], name = "vdeploy.example.com",
    admission_review_versions = ["v1"])]
pub struct DeploymentValidator;

fn main() {
    assert_eq!(DeploymentValidator::WEBHOOK.url.as_deref(), Some("https://hooks.example.com/validate"));
    assert_eq!(DeploymentValidator::WEBHOOK.path, None);
    let manifests = kubebuilder::webhook::manifests(&kubebuilder::webhook::registered(), &[]).unwrap();
    let hook = &manifests.validating.unwrap().webhooks.unwrap()[0];
    assert_eq!(hook.client_config.url.as_deref(), Some("https://hooks.example.com/validate"));
    assert!(hook.client_config.service.is_none());
}
