//! `patch` is a JSON object of the webhook entry's fields, without strategic merge directives.

#[kubebuilder::webhook(mutating = true, failure_policy = "Fail", side_effects = "None",
    groups = ["apps"], resources = ["deployments"], verbs = ["create"], versions = ["v1"],
    name = "mdeployment.example.com", admission_review_versions = ["v1"],
    patch = r#"{"namespaceSelector": {"matchLabels": {"env": "prod"}"#)]
pub struct NotJson;

#[kubebuilder::webhook(mutating = true, failure_policy = "Fail", side_effects = "None",
    groups = ["apps"], resources = ["deployments"], verbs = ["create"], versions = ["v1"],
    name = "mdeployment.example.com", admission_review_versions = ["v1"],
    patch = r#"["namespaceSelector"]"#)]
pub struct NotAnObject;

#[kubebuilder::webhook(mutating = false, failure_policy = "Fail", side_effects = "None",
    groups = ["apps"], resources = ["deployments"], verbs = ["create"], versions = ["v1"],
    name = "vdeployment.example.com", admission_review_versions = ["v1"],
    patch = r#"{"namespaceSelecter": {}, "reinvocationPolicy": "Never"}"#)]
pub struct UnknownFields;

#[kubebuilder::webhook(mutating = true, failure_policy = "Fail", side_effects = "None",
    groups = ["apps"], resources = ["deployments"], verbs = ["create"], versions = ["v1"],
    name = "mdeployment.example.com", admission_review_versions = ["v1"],
    patch = r#"{"objectSelector": {"$patch": "replace", "matchLabels": {"a": "b"}}}"#)]
pub struct Directive;

fn main() {}
