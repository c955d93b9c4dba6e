//! Every optional argument, with the case-insensitive values normalised to the API spelling.

use std::borrow::Cow;

use kubebuilder::webhook::{Declared, Webhook};

#[kubebuilder::webhook(path = "/mutate-things", mutating = true, failure_policy = "ignore",
    match_policy = "equivalent", side_effects = "noneondryrun",
    groups = ["example.com", "core"], resources = ["things", "things/status"],
    verbs = ["create", "Update", "DELETE", "connect", "*"], versions = ["v1", "v2"],
    name = "mthing.example.com", admission_review_versions = ["v1", "v1beta1"],
    reinvocation_policy = "ifneeded", timeout_seconds = 30, webhook_versions = ["v1"],
    service_name = "hooks", service_namespace = "hook-system", service_port = 8443,
    patch = r#"{"namespaceSelector": {"matchLabels": {"hooks": "on"}}}"#)]
pub struct ThingDefaulter;

#[kubebuilder::webhook(mutating = false, failure_policy = "Fail", side_effects = "None",
    match_policy = "Exact", groups = ["example.com"], resources = ["people"], kind = "Person",
    verbs = ["delete"], versions = ["v1alpha1"], name = "vperson.example.com",
    admission_review_versions = ["v1"], timeout_seconds = 1)]
pub struct PersonValidator;

fn main() {
    assert_eq!(
        ThingDefaulter::WEBHOOK,
        Webhook {
            name: Cow::Borrowed("mthing.example.com"),
            mutating: true,
            path: Some(Cow::Borrowed("/mutate-things")),
            url: None,
            failure_policy: Cow::Borrowed("Ignore"),
            match_policy: Some(Cow::Borrowed("Equivalent")),
            side_effects: Cow::Borrowed("NoneOnDryRun"),
            groups: Cow::Borrowed(&[Cow::Borrowed("example.com"), Cow::Borrowed("")]),
            resources: Cow::Borrowed(&[Cow::Borrowed("things"), Cow::Borrowed("things/status")]),
            verbs: Cow::Borrowed(&[Cow::Borrowed("CREATE"), Cow::Borrowed("UPDATE"), Cow::Borrowed("DELETE"), Cow::Borrowed("CONNECT"), Cow::Borrowed("*")]),
            versions: Cow::Borrowed(&[Cow::Borrowed("v1"), Cow::Borrowed("v2")]),
            admission_review_versions: Cow::Borrowed(&[Cow::Borrowed("v1"), Cow::Borrowed("v1beta1")]),
            reinvocation_policy: Some(Cow::Borrowed("IfNeeded")),
            timeout_seconds: Some(30),
            service_name: Cow::Borrowed("hooks"),
            service_namespace: Cow::Borrowed("hook-system"),
            service_port: Some(8443),
            patch: Some(Cow::Borrowed(r#"{"namespaceSelector": {"matchLabels": {"hooks": "on"}}}"#)),
        }
    );
    // `kind` names the kind in the default path where the resource is not its plural.
    assert_eq!(PersonValidator::WEBHOOK.path.as_deref(), Some("/validate-example-com-v1alpha1-person"));
    assert_eq!(PersonValidator::WEBHOOK.match_policy.as_deref(), Some("Exact"));
    assert_eq!(PersonValidator::WEBHOOK.timeout_seconds, Some(1));
}
