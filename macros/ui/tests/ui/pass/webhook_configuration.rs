//! webhook_configuration names the configuration objects; it goes on any item.

use kubebuilder::webhook::{Configuration, manifests, registered, registered_configurations};

#[kubebuilder::webhook_configuration(mutating = true, name = "cronjob-mutating")]
#[kubebuilder::webhook(mutating = true, failure_policy = "Fail", side_effects = "None",
    groups = ["batch.tutorial.kubebuilder.io"], resources = ["cronjobs"], verbs = ["create"],
    versions = ["v1"], name = "mcronjob-v1.kb.io", admission_review_versions = ["v1"])]
pub struct Defaulter;

#[kubebuilder::webhook_configuration(mutating = false, name = "cronjob-validating")]
mod webhooks {}

fn main() {
    let mut configurations = registered_configurations();
    configurations.sort_by_key(|c| c.name.clone());
    assert_eq!(
        configurations,
        [
            Configuration { mutating: true, name: "cronjob-mutating".into() },
            Configuration { mutating: false, name: "cronjob-validating".into() },
        ]
    );
    let rendered = manifests(&registered(), &configurations).unwrap();
    assert_eq!(rendered.mutating.unwrap().metadata.name.as_deref(), Some("cronjob-mutating"));
    assert!(rendered.validating.is_none());
}
