//! `for = Kind`: the rule's group, version and resource and the default path come from the
//! kind, and the type may be registered for that kind alone.

use kubebuilder::webhook::{Declared, manifests, registered};
use kubebuilder_runtime::webhook::{AdmissionContext, Defaulter, FieldError, Validator, Warnings, Webhooks};

/// A frigate.
#[kubebuilder::resource(group = "fleet.example.com", version = "v1alpha1", kind = "Frigate")]
pub struct FrigateSpec {
    pub guns: Option<i32>,
}

#[kubebuilder::webhook(for = Frigate, mutating = true, failure_policy = "fail", side_effects = "None",
    verbs = ["create", "update"], name = "mfrigate.example.com", admission_review_versions = ["v1"])]
pub struct FrigateDefaulter;

impl Defaulter<Frigate> for FrigateDefaulter {
    async fn default(&self, _: &AdmissionContext<'_>, frigate: &mut Frigate) -> Result<(), Vec<FieldError>> {
        frigate.spec.guns.get_or_insert(1);
        Ok(())
    }
}

// A `url` replaces the default path; the rule is still the kind's.
#[kubebuilder::webhook(for = Frigate, url = "https://hooks.example.com/frigates", mutating = false,
    failure_policy = "ignore", side_effects = "None", verbs = ["delete"],
    name = "vfrigate.example.com", admission_review_versions = ["v1"])]
pub struct FrigateValidator;

impl Validator<Frigate> for FrigateValidator {
    async fn validate_create(&self, _: &AdmissionContext<'_>, _: &Frigate) -> Result<Warnings, Vec<FieldError>> {
        Ok(Warnings::new())
    }

    async fn validate_update(&self, _: &AdmissionContext<'_>, _: &Frigate, _: &Frigate) -> Result<Warnings, Vec<FieldError>> {
        Ok(Warnings::new())
    }

    async fn validate_delete(&self, _: &AdmissionContext<'_>, _: &Frigate) -> Result<Warnings, Vec<FieldError>> {
        Ok(Warnings::new())
    }
}

fn main() {
    let webhook = FrigateDefaulter::WEBHOOK;
    assert_eq!(webhook.path.as_deref(), Some("/mutate-fleet-example-com-v1alpha1-frigate"));
    assert_eq!(*webhook.groups, ["fleet.example.com"]);
    assert_eq!(*webhook.versions, ["v1alpha1"]);
    assert_eq!(*webhook.resources, ["frigates"]);
    assert_eq!(*webhook.verbs, ["CREATE", "UPDATE"]);
    let validator = FrigateValidator::WEBHOOK;
    assert_eq!(validator.path, None);
    assert_eq!(validator.url.as_deref(), Some("https://hooks.example.com/frigates"));
    assert_eq!(*validator.resources, ["frigates"]);
    let rendered = manifests(&registered(), &[]).unwrap();
    assert!(rendered.mutating.is_some() && rendered.validating.is_some());
    let _ = Webhooks::new().defaulter(FrigateDefaulter);
}
