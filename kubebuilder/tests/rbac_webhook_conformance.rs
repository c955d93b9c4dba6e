//! Differential test against controller-gen: the markers of
//! `rbac_webhook_conformance/markers.go`, declared again below as attributes, must render to
//! the very bytes controller-gen writes for them (`role.yaml` and `manifests.yaml`).
//! Intentional differences are in `rbac_webhook_conformance/DIFFERENCES.md`; none of them
//! changes the output for markers both sides accept.

use std::path::{Path, PathBuf};
use std::process::Command;

use kubebuilder::{rbac, webhook};

// The tutorial's reconciler.
#[kubebuilder::rbac(
    groups = ["batch.tutorial.kubebuilder.io"],
    resources = ["cronjobs"],
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
)]
#[kubebuilder::rbac(
    groups = ["batch.tutorial.kubebuilder.io"],
    resources = ["cronjobs/status"],
    verbs = ["get", "update", "patch"]
)]
#[kubebuilder::rbac(
    groups = ["batch.tutorial.kubebuilder.io"],
    resources = ["cronjobs/finalizers"],
    verbs = ["update"]
)]
#[kubebuilder::rbac(
    groups = ["batch"],
    resources = ["jobs"],
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
)]
#[kubebuilder::rbac(groups = ["batch"], resources = ["jobs/status"], verbs = ["get"])]
pub struct CronJobReconciler;

// Normalisation.
#[kubebuilder::rbac(groups = ["core"], resources = ["pods", "services"], verbs = ["list", "get"])]
#[kubebuilder::rbac(groups = ["core"], resources = ["pods"], verbs = ["watch", "get"])]
#[kubebuilder::rbac(groups = [""], resources = ["nodes"], verbs = ["list"])]
#[kubebuilder::rbac(groups = ["apps", "extensions"], resources = ["deployments"], verbs = ["get"])]
#[kubebuilder::rbac(groups = ["apps"], resources = ["statefulsets"], verbs = ["get"])]
#[kubebuilder::rbac(groups = ["extensions"], resources = ["statefulsets"], verbs = ["get"])]
#[kubebuilder::rbac(groups = ["policy"], resources = ["poddisruptionbudgets"], verbs = ["get", "*"])]
#[kubebuilder::rbac(
    groups = ["core"],
    resources = ["configmaps"],
    resource_names = ["my-config", "other-config"],
    verbs = ["get", "update"]
)]
#[kubebuilder::rbac(urls = ["/metrics"], verbs = ["get"])]
#[kubebuilder::rbac(urls = ["/healthz", "/readyz"], verbs = ["get"])]
#[kubebuilder::rbac(urls = ["/debug/*"], verbs = ["get", "post"])]
pub enum NormalisationReconciler {}

// Roles per namespace and per role name.
#[kubebuilder::rbac(groups = ["core"], resources = ["secrets"], verbs = ["get"], namespace = "infra")]
#[kubebuilder::rbac(
    groups = ["coordination.k8s.io"],
    resources = ["leases"],
    verbs = ["get", "update"],
    namespace = "infra",
    role_name = "leader-election"
)]
#[kubebuilder::rbac(
    groups = ["core"],
    resources = ["events"],
    verbs = ["create", "patch"],
    role_name = "events-writer"
)]
#[kubebuilder::rbac(groups = ["core"], resources = ["secrets"], verbs = ["list"], namespace = "apps")]
pub struct NamespacedReconciler;

// The tutorial's webhooks, with the default path controller-gen's markers spell out.
#[kubebuilder::webhook(
    mutating = true,
    failure_policy = "fail",
    side_effects = "None",
    groups = ["batch.tutorial.kubebuilder.io"],
    resources = ["cronjobs"],
    verbs = ["create", "update"],
    versions = ["v1"],
    name = "mcronjob-v1.kb.io",
    admission_review_versions = ["v1"]
)]
pub struct CronJobDefaulter;

#[kubebuilder::webhook(
    mutating = false,
    failure_policy = "fail",
    side_effects = "None",
    groups = ["batch.tutorial.kubebuilder.io"],
    resources = ["cronjobs"],
    verbs = ["create", "update"],
    versions = ["v1"],
    name = "vcronjob-v1.kb.io",
    admission_review_versions = ["v1"]
)]
pub struct CronJobValidator;

// Every other webhook argument.
#[kubebuilder::webhook(
    mutating = true,
    failure_policy = "Ignore",
    match_policy = "Equivalent",
    side_effects = "NoneOnDryRun",
    groups = ["core"],
    resources = ["pods"],
    verbs = ["create", "update", "delete", "connect"],
    versions = ["v1"],
    name = "mpod.example.com",
    admission_review_versions = ["v1", "v1beta1"],
    reinvocation_policy = "IfNeeded",
    timeout_seconds = 5,
    service_name = "hooks",
    service_namespace = "hook-system",
    service_port = 8443
)]
pub struct PodDefaulter;

#[kubebuilder::webhook(
    url = "https://hooks.example.com/validate",
    mutating = false,
    failure_policy = "ignore",
    match_policy = "exact",
    side_effects = "none",
    groups = ["apps"],
    resources = ["deployments", "statefulsets"],
    verbs = ["*"],
    versions = ["v1", "v1beta1"],
    name = "vapps.example.com",
    admission_review_versions = ["v1"],
    timeout_seconds = 30,
    webhook_versions = ["v1"]
)]
pub struct AppsValidator;

#[kubebuilder::webhook_configuration(mutating = true, name = "my-mutating-configuration")]
#[kubebuilder::webhook(
    path = "/mutate-apps-v1-deployment",
    mutating = true,
    failure_policy = "Fail",
    side_effects = "None",
    groups = ["apps"],
    resources = ["deployments"],
    verbs = ["CREATE"],
    versions = ["v1"],
    name = "adeployment.example.com",
    admission_review_versions = ["v1"],
    reinvocation_policy = "never"
)]
pub struct DeploymentDefaulter;

#[kubebuilder::webhook(
    path = "/validate-apps-v1-replicaset",
    mutating = false,
    failure_policy = "Fail",
    side_effects = "None",
    groups = ["apps"],
    resources = ["replicasets"],
    verbs = ["create"],
    versions = ["v1"],
    name = "vreplicaset.example.com",
    admission_review_versions = ["v1"],
    timeout_seconds = 10,
    patch = r#"{"namespaceSelector":{"matchLabels":{"webhooks":"enabled"}},"objectSelector":{"matchExpressions":[{"key":"tier","operator":"In","values":["frontend","backend"]}]},"matchConditions":[{"name":"not-kube-system","expression":"request.namespace != 'kube-system'"}],"timeoutSeconds":null}"#
)]
pub struct ReplicaSetValidator;

#[kubebuilder::webhook(
    path = "/mutate-apps-v1-replicaset",
    mutating = true,
    failure_policy = "Fail",
    side_effects = "None",
    groups = ["apps"],
    resources = ["replicasets"],
    verbs = ["create"],
    versions = ["v1"],
    name = "mreplicaset.example.com",
    admission_review_versions = ["v1"],
    patch = r#"{"name":"a-replicaset.example.com","clientConfig":{"service":{"port":9443}}}"#
)]
pub struct ReplicaSetDefaulter;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rbac_webhook_conformance")
}

/// controller-gen's `role.yaml` and `manifests.yaml` for the Go markers.
fn controller_gen_output() -> (String, String) {
    let controller_gen = std::env::var_os("CONTROLLER_GEN").expect(
        "CONTROLLER_GEN must name the pinned controller-gen (`cargo xtask test` installs it and sets it)",
    );
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(controller_gen)
        .current_dir(fixture_dir())
        .args([
            "rbac:roleName=manager-role",
            "webhook",
            "paths=./...",
            &format!("output:rbac:dir={}", out.path().join("rbac").display()),
            &format!(
                "output:webhook:dir={}",
                out.path().join("webhook").display()
            ),
        ])
        .output()
        .expect("running controller-gen");
    assert!(
        output.status.success(),
        "controller-gen failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read = |path: &str| std::fs::read_to_string(out.path().join(path)).unwrap();
    (read("rbac/role.yaml"), read("webhook/manifests.yaml"))
}

/// The first differing line, to point at the problem in a long file.
fn first_difference(ours: &str, theirs: &str) -> String {
    let (ours_lines, theirs_lines): (Vec<_>, Vec<_>) =
        (ours.lines().collect(), theirs.lines().collect());
    let at = ours_lines
        .iter()
        .zip(&theirs_lines)
        .position(|(a, b)| a != b)
        .unwrap_or(ours_lines.len().min(theirs_lines.len()));
    format!(
        "line {}: ours {:?}, controller-gen {:?}",
        at + 1,
        ours_lines.get(at),
        theirs_lines.get(at)
    )
}

#[test]
fn roles_and_webhook_configurations_match_controller_gen_byte_for_byte() {
    let (their_roles, their_webhooks) = controller_gen_output();

    let our_roles = rbac::to_yaml(&rbac::roles(&rbac::registered(), rbac::DEFAULT_ROLE_NAME));
    assert!(
        our_roles == their_roles,
        "role.yaml differs ({}):\n--- ours\n{our_roles}\n--- controller-gen\n{their_roles}",
        first_difference(&our_roles, &their_roles)
    );

    let our_webhooks = webhook::manifests(
        &webhook::registered(),
        &webhook::registered_configurations(),
    )
    .unwrap()
    .to_yaml();
    assert!(
        our_webhooks == their_webhooks,
        "manifests.yaml differs ({}):\n--- ours\n{our_webhooks}\n--- controller-gen\n{their_webhooks}",
        first_difference(&our_webhooks, &their_webhooks)
    );
}
