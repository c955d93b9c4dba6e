//! The files of one kind (`cargo xtask create api` and `create webhook`), in the layout and
//! style of this repository's CronJob: `api/src/<version>/<kind>_types.rs`,
//! `controller/src/<kind>/{mod,reconciler,webhook}.rs`, the tests of the controller and the
//! webhooks (`controller/tests/<kind>_{controller,webhook}.rs`), a sample, and the lines that
//! register them at the scaffold markers. In the multigroup layout, under the group:
//! `api/src/<group>/<version>/`, `controller/src/<group>/<kind>/`,
//! `controller/tests/<group>_<kind>_*.rs` (see `layout`).
//!
//! Placeholders: `kind` (`Frigate`), `kind_snake` (`frigate`), `kind_lower`, `plural`, `group`
//! (`ship`), `full_group` (`ship.example.com`), `version`, `project_name`, and the pieces that
//! depend on the options: `resource_args`, `watched`, `test_api`, `scope_imports`,
//! `mutating_path`, `validating_path`, `webhook_module`, `webhook_imports`, `webhook_doc`,
//! `webhook_types`, `webhook_test_types`, `webhook_test_traits`, `webhook_paths`,
//! `webhook_test_cases`, `version_args`, the layout's `api_module` (`api::v1`), `types_dir`,
//! `controller_module` (`frigate`), `group_module` and `unique_name` (the controller's and
//! webhooks' name), and `hub` (a kind's storage version) and `hub_module` for conversion.

/// The RBAC attributes of every reconciler of a kind: the kind, its status, and its
/// finalizers (needed to set blockOwnerDeletion on the objects it creates for them), in
/// `rbac_group` (the kind's API group, `core` for the core group).
macro_rules! kind_rbac {
    () => {
        r#"#[kubebuilder::rbac(
    groups = ["{{rbac_group}}"],{{rbac_namespace}}
    resources = ["{{plural}}"],
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
)]
#[kubebuilder::rbac(
    groups = ["{{rbac_group}}"],{{rbac_namespace}}
    resources = ["{{plural}}/status"],
    verbs = ["get", "update", "patch"]
)]
#[kubebuilder::rbac(
    groups = ["{{rbac_group}}"],{{rbac_namespace}}
    resources = ["{{plural}}/finalizers"],
    verbs = ["update"]
)]
"#
    };
}
pub(crate) use kind_rbac;

/// The constants of every scaffolded controller test.
macro_rules! controller_test_constants {
    () => {
        r#"/// How long the controller may take to reconcile.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The service account `config/rbac` binds the manager's roles to.
const SERVICE_ACCOUNT: &str = "controller-manager";
"#
    };
}
pub(crate) use controller_test_constants;

/// The manager's arguments and client in every scaffolded controller test: `--namespace`
/// set to the test's namespace, and the generated service account with the generated role.
macro_rules! controller_test_service_account {
    () => {
        r#"
    // The controller on a manager of its own, as `src/main.rs` runs it with `--namespace`
    // set to this test's namespace, as the service account: a call that the generated role
    // does not allow fails here as it would in the cluster.
    let args = ManagerArgs {
        health_probe_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        namespaces: vec![namespace.clone()],
        ..ManagerArgs::default()
    };
    let roles = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/rbac/role.yaml");
    plane.grant_roles_in_file(&roles, &namespace, SERVICE_ACCOUNT).await.unwrap();
    let as_manager = plane.client_as_service_account(&namespace, SERVICE_ACCOUNT).await.unwrap();
"#
    };
}
pub(crate) use controller_test_service_account;

/// The start of the scaffolded controller tests of the project's own kinds: the shared
/// control plane with the kind's CRD, a namespace of its own, and the controller on a
/// manager of its own, run as the generated service account with the generated role.
macro_rules! controller_test_manager {
    () => {
        concat!(
            r#"    let plane = kubebuilder_envtest::shared();
    plane.install_crds(&[{{kind}}::crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("{{kind_lower}}").await.unwrap();
"#,
            $crate::scaffold::templates::kind::controller_test_service_account!(),
            r#"    let manager = controller::{{controller_module}}::setup_with_manager(Manager::new(as_manager, args))
        .start()
        .await
        .unwrap();
"#
        )
    };
}
pub(crate) use controller_test_manager;

// The scaffold markers: a comment line that `create` adds lines above (kubebuilder's
// `// +kubebuilder:scaffold:*` comments in Go).
/// In `api/src/lib.rs`: where version modules go (and group modules, in the multigroup
/// layout, whose `api/src/<group>/mod.rs` has the group's versions at this marker).
pub const VERSIONS_MARKER: &str = "// +kubebuilder:scaffold:versions";
/// In `api/src/<version>/mod.rs`: where a kind's types module and re-export go.
pub const KINDS_MARKER: &str = "// +kubebuilder:scaffold:kinds";
/// In `controller/src/lib.rs`: where kind modules go (and group modules, in the multigroup
/// layout, whose `controller/src/<group>/mod.rs` has the group's kinds at this marker).
pub const MODULES_MARKER: &str = "// +kubebuilder:scaffold:modules";
/// In `controller/src/<kind>/mod.rs`: where the webhook modules go.
pub const SUBMODULES_MARKER: &str = "// +kubebuilder:scaffold:submodules";
/// In `controller/src/main.rs`: where controllers are registered on the manager.
pub const CONTROLLERS_MARKER: &str = "// +kubebuilder:scaffold:controllers";
/// In `controller/src/main.rs`: where webhooks and conversions are registered on the manager.
pub const WEBHOOKS_MARKER: &str = "// +kubebuilder:scaffold:webhooks";

/// `api/src/lib.rs`: the version module (placeholder `version`).
pub const VERSION_MODULE_LINE: &str = "pub mod {{version}};";

/// `api/src/<version>/mod.rs`: the kind's types.
pub const KIND_TYPES_MODULE_LINE: &str = "mod {{kind_snake}}_types;";
/// `api/src/<version>/mod.rs`: the kind's types, re-exported as `api::<version>::<Kind>`.
pub const KIND_EXPORT_LINE: &str =
    "pub use {{kind_snake}}_types::{{{kind}}, {{kind}}List, {{kind}}Spec, {{kind}}Status};";

/// `controller/src/lib.rs` (`controller/src/<group>/mod.rs` in the multigroup layout): the
/// kind's module.
pub const KIND_MODULE_LINE: &str = "pub mod {{kind_snake}};";

/// `api/src/lib.rs` and `controller/src/lib.rs` in the multigroup layout: the group's module
/// (placeholder `group_module`).
pub const GROUP_MODULE_LINE: &str = "pub mod {{group_module}};";

/// `api/src/<group>/mod.rs`, in the multigroup layout.
pub const GROUP_API_MOD_RS: &str = r#"//! The API group `{{full_group}}`, one module per version.

// +kubebuilder:scaffold:versions
"#;

/// `controller/src/<group>/mod.rs`, in the multigroup layout.
pub const GROUP_CONTROLLER_MOD_RS: &str = r#"//! The controllers and webhooks of the `{{full_group}}` kinds, one module per kind.

// +kubebuilder:scaffold:modules
"#;

/// `controller/src/main.rs`: the controller on the manager.
pub const CONTROLLER_REGISTRATION_LINE: &str =
    "manager = controller::{{controller_module}}::setup_with_manager(manager);";
/// `controller/src/main.rs`: the kind's webhooks on the manager.
pub const WEBHOOK_REGISTRATION_LINE: &str = "manager = manager.webhooks(controller::{{controller_module}}::{{webhook_module}}::webhooks());";

/// `controller/src/<kind>/mod.rs`: the webhook module (`webhook`, or `webhook_<version>`
/// beside another version's).
pub const WEBHOOK_MODULE_LINE: &str = "pub mod {{webhook_module}};";

/// `api/src/<spoke>/mod.rs`: the spoke's conversion.
pub const CONVERSION_MODULE_LINE: &str = "mod {{kind_snake}}_conversion;";

/// `controller/src/main.rs`: conversion between the kind's versions through the hub.
pub const CONVERSION_REGISTRATION_LINE: &str =
    "manager = manager.conversion::<api::{{hub_module}}::{{kind}}>();";

// `config/default/kustomization.yaml`: cert-manager injects the webhook CA into the CRD of a
// kind that converts, through the `cert-manager.io/inject-ca-from` annotation
// (`<namespace>/<name>` of the serving certificate), which two replacements fill in.
/// Below the targets of the replacement that copies the certificate's namespace.
pub const CRD_CA_INJECTION_NAMESPACE_MARKER: &str =
    "# +kubebuilder:scaffold:crd-ca-injection-namespace";
/// Below the targets of the replacement that copies the certificate's name.
pub const CRD_CA_INJECTION_NAME_MARKER: &str = "# +kubebuilder:scaffold:crd-ca-injection-name";
/// The kind's CRD as a target of the namespace replacement (the annotation's first part).
pub const CRD_CA_INJECTION_NAMESPACE_LINE: &str = "- {select: {kind: CustomResourceDefinition, name: {{plural}}.{{full_group}}}, fieldPaths: [\"metadata.annotations.[cert-manager.io/inject-ca-from]\"], options: {delimiter: /, index: 0, create: true}}";
/// The kind's CRD as a target of the name replacement (the annotation's second part).
pub const CRD_CA_INJECTION_NAME_LINE: &str = "- {select: {kind: CustomResourceDefinition, name: {{plural}}.{{full_group}}}, fieldPaths: [\"metadata.annotations.[cert-manager.io/inject-ca-from]\"], options: {delimiter: /, index: 1, create: true}}";

/// The resource argument of a new version of an existing kind (placeholder `hub`, the
/// storage version): unserved until `create webhook --conversion` gives it a conversion.
pub const UNSERVED_VERSION_ARGS: &str = "
    // Not served until it converts to {{hub}}, the storage version: `cargo xtask create webhook
    // --group {{group}} --version {{hub}} --kind {{kind}} --conversion --spoke {{version}}`.
    unservedversion,";

/// What replaces [`UNSERVED_VERSION_ARGS`] once the version converts.
pub const HUB_ARG: &str = "hub = crate::{{hub_module}}::{{kind}}";

/// `api/src/<spoke>/<kind>_conversion.rs` (placeholders `version`: the spoke, and `hub`).
pub const CONVERSION_RS: &str = r#"//! {{kind}} {{version}} ⇄ {{hub}}, the hub (the storage version): every served version but the
//! hub converts to and from it, and the apiserver calls this through the manager's
//! `/convert` webhook whenever a client reads or writes {{version}}.
//!
//! The versions have the same fields so far, so they convert by field name. Once they
//! differ, convert field by field, and carry what {{hub}} cannot hold (in an annotation, say)
//! so that {{version}} → {{hub}} → {{version}} gives the same object back.

use kubebuilder::conversion::{ConversionError, Spoke, by_field_names};

use super::{{kind}};
use crate::{{hub_module}};

impl Spoke<{{hub}}::{{kind}}> for {{kind}} {
    fn to_hub(self) -> Result<{{hub}}::{{kind}}, ConversionError> {
        by_field_names(self)
    }

    fn from_hub(hub: {{hub}}::{{kind}}) -> Result<Self, ConversionError> {
        by_field_names(hub)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_{{kind_snake}}_comes_back_unchanged_from_{{hub}}() {
        let {{kind_snake}}: {{kind}} = serde_json::from_value(serde_json::json!({
            "apiVersion": "{{full_group}}/{{version}}",
            "kind": "{{kind}}",
            "metadata": {"name": "sample", "annotations": {"note": "kept"}},
            "spec": {},
        }))
        .unwrap();
        let hub = {{kind_snake}}.clone().to_hub().unwrap();
        assert_eq!(hub.metadata, {{kind_snake}}.metadata);
        assert_eq!({{kind}}::from_hub(hub).unwrap(), {{kind_snake}});
    }
}
"#;

/// A new version module.
pub const VERSION_MOD_RS: &str = r#"//! Version `{{version}}` of the API.

// +kubebuilder:scaffold:kinds
"#;

/// `api/src/<version>/<kind>_types.rs`: the kind's spec and status (kubebuilder's
/// `<kind>_types.go`).
pub const TYPES_RS: &str = r#"//! The {{kind}} kind: what users ask for (`{{kind}}Spec`) and what the controller reports
//! (`{{kind}}Status`). Edit both, then run `cargo xtask manifests`: the CRD follows the
//! fields, their doc comments (descriptions) and their `#[kubebuilder(...)]` attributes
//! (kubebuilder's markers in Rust spelling: `optional`, `required`, `validation(...)`,
//! `default = ...`), in `config/crd/bases/{{full_group}}_{{plural}}.yaml`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// {{kind}}Spec defines the desired state of {{kind}}.
#[kubebuilder::resource(
    group = "{{full_group}}",
    version = "{{version}}",
    kind = "{{kind}}",
    status = {{kind}}Status,{{resource_args}}
    subresource(status),{{version_args}}
)]{{spec_schema}}
pub struct {{kind}}Spec {
    /// An example field, to replace with the fields of the desired state.
    #[kubebuilder(optional)]
    pub foo: Option<String>,
}

/// {{kind}}Status defines the observed state of {{kind}}.
#[kubebuilder::schema{{status_schema_args}}]
#[derive(Default)]
pub struct {{kind}}Status {
    /// conditions represent the current state of the {{kind}}, one per aspect (`type`),
    /// each True, False or Unknown with a machine-readable reason and a message. The usual
    /// types are "Available" (it works), "Progressing" (it is being created or changed) and
    /// "Degraded" (it failed to reach or keep its desired state).
    #[kubebuilder(optional, list_type = "map", list_map_key = "type")]
    pub conditions: Vec<Condition>,
}
"#;

/// `controller/src/<kind>/mod.rs` of a kind with a controller: the reconciler module and
/// the setup on the manager (kubebuilder's `SetupWithManager`).
pub const CONTROLLER_MOD_RS: &str = r#"//! The {{kind}} controller: its reconciler, and its admission webhooks once `cargo xtask
//! create webhook` adds them.
//!
//! [`setup_with_manager`] registers the controller on a [`Manager`], as kubebuilder's
//! `SetupWithManager`: it watches {{kind}}s and reconciles one whenever it changes.

pub mod reconciler;
// +kubebuilder:scaffold:submodules

use {{api_module}}::{{kind}};
use kubebuilder_runtime::Manager;

use self::reconciler::{{kind}}Reconciler;

/// The controller's name: the `controller` label of its metrics and its readiness check.
pub const CONTROLLER_NAME: &str = "{{unique_name}}";

/// Registers the {{kind}} controller on `manager`.
pub fn setup_with_manager(manager: Manager) -> Manager {
    manager
        .controller_for::<{{kind}}>()
        .named(CONTROLLER_NAME)
        // Watch the objects the reconciler creates too (`.owns::<Child>()`), so that
        // their changes reconcile their owner.
        .complete({{kind}}Reconciler)
}
"#;

/// `controller/tests/<kind>_controller.rs`: the controller against a real control plane, as
/// kubebuilder scaffolds `<kind>_controller_test.go` on envtest.
pub const CONTROLLER_TEST_RS: &str = concat!(
    r#"//! The {{kind}} controller against a real control plane (`kubebuilder_envtest`, which
//! `cargo xtask test` provides), run as it is deployed: as its service account, allowed
//! what `config/rbac/role.yaml` grants it. A new {{kind}} is reconciled, as its `Available`
//! condition records, and the reconciler's Event about it is recorded. Add a test per
//! behaviour of the reconciler.

use std::path::Path;
use std::time::Duration;

use {{api_module}}::{{kind}};
use controller::{{controller_module}}::reconciler::{AVAILABLE, RECONCILED};
use k8s_openapi::api::events::v1::Event;
use kube::ResourceExt as _;
use kube::api::{Api, ListParams, PostParams};
use kubebuilder_envtest::eventually;
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs, conditions};
use serde_json::json;

"#,
    controller_test_constants!(),
    r#"
#[tokio::test]
async fn a_new_{{kind_snake}}_is_reconciled() {
"#,
    controller_test_manager!(),
    r#"
    // Events are written where the object is (`default` for a cluster-scoped one).
    let events: Api<Event> = Api::all(client.clone());
    let api: Api<{{kind}}> = {{test_api}};
    let {{kind_snake}}: {{kind}} = serde_json::from_value(json!({
        "apiVersion": "{{full_group}}/{{version}}",
        "kind": "{{kind}}",
        "metadata": {"name": "test-{{kind_lower}}"},
        "spec": {},
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &{{kind_snake}}).await.unwrap();

    eventually("the Available condition", TIMEOUT, || async {
        let current = api.get("test-{{kind_lower}}").await.unwrap();
        let conditions = current.status.map(|status| status.conditions).unwrap_or_default();
        conditions::find(&conditions, AVAILABLE)
            .filter(|available| available.status == "True" && available.reason == RECONCILED)
            .cloned()
    })
    .await;
    // Recorded as the service account: the role allows it.
    eventually("the reconciler's Event", TIMEOUT, || async {
        let recorded = events.list(&ListParams::default()).await.unwrap();
        recorded.items.into_iter().find(|event| {
            event.regarding.as_ref().and_then(|regarding| regarding.uid.as_deref())
                == created.uid().as_deref()
                && event.reason.as_deref() == Some(RECONCILED)
        })
    })
    .await;
    manager.shutdown().await.unwrap();
}
"#
);

/// `controller/src/<kind>/mod.rs` of a kind with webhooks and no controller.
pub const WEBHOOK_ONLY_MOD_RS: &str = r#"//! The {{kind}} admission webhooks.

// +kubebuilder:scaffold:submodules
"#;

/// `controller/src/<kind>/reconciler.rs`: the reconciler, with its RBAC attributes
/// (kubebuilder's `<kind>_controller.go`).
pub const RECONCILER_RS: &str = concat!(
    r#"//! The {{kind}} reconciler. Its RBAC attributes are the permissions the manager's
//! role (`config/rbac/role.yaml`, written by `cargo xtask manifests`) grants: add one
//! for every other kind the reconciler reads or writes, and nothing more.

use {{api_module}}::{{kind}};
use kubebuilder_runtime::prelude::*;

/// The condition type the reconciler sets on each {{kind}} it has reconciled...
pub const AVAILABLE: &str = "Available";
/// ...and its reason, which is also that of the Event recorded then.
pub const RECONCILED: &str = "Reconciled";

/// Reconciles {{kind}}s: makes the cluster match their spec and reports in their status.
// The {{kind}}s it reconciles, their status, and their finalizers (needed to set
// blockOwnerDeletion on the objects it creates for them).
"#,
    kind_rbac!(),
    r#"pub struct {{kind}}Reconciler;

impl Reconciler<{{kind}}> for {{kind}}Reconciler {
    type Error = Error;

    /// Runs for each {{kind}} that changes (and for every one when the controller starts);
    /// `ctx` holds the controller's client, cache, Event recorder and applier.
    async fn reconcile(&self, {{kind_snake}}: Arc<{{kind}}>, ctx: &Context) -> Result<Action> {
        // Logs inherit the reconcile's span, which names the {{kind}}.
        tracing::debug!("reconciling");
        // Make the cluster match `{{kind_snake}}.spec` here: read what exists, then create,
        // change or delete what differs (with an RBAC attribute above for each kind it
        // touches), and report the outcome in the conditions.
        let mut status = {{kind_snake}}.status.clone().unwrap_or_default();
        let message = "The {{kind}} is reconciled";
        let available = conditions::new(AVAILABLE, Status::True, RECONCILED, message);
        // Writing an unchanged status would only trigger another reconcile.
        if conditions::set_for(&*{{kind_snake}}, &mut status.conditions, available) {
            ctx.apply_status(&*{{kind_snake}}, &status).await?;
            // Shown by `kubectl describe`. No attribute above: `cargo xtask manifests` grants
            // the runtime's Events itself.
            ctx.normal(&*{{kind_snake}}, RECONCILED, message).await;
        }
        Ok(Action::await_change())
    }
}
"#
);

/// `controller/src/<kind>/webhook.rs`: the module, then a section per webhook.
pub const WEBHOOK_RS: &str = r#"//! The {{kind}} admission webhooks: {{webhook_doc}}. Their attributes, `for` the kind,
//! give the webhook server each type's path (the kind's default path), and `cargo xtask
//! manifests` the entries of `config/webhook/manifests.yaml`.

use {{api_module}}::{{{kind}}, {{kind}}Spec};
use kubebuilder_runtime::webhook::{{{webhook_imports}}};

/// The {{kind}} webhooks the manager serves.
pub fn webhooks() -> Webhooks {
    Webhooks::new(){{webhook_types}}
}
"#;

/// The defaulting section of [`WEBHOOK_RS`] (kubebuilder's `CustomDefaulter`), then
/// [`DEFAULTS_EXAMPLE_RS`] or [`DEFAULTS_TODO_RS`].
pub const DEFAULTER_RS: &str = r#"
/// Fills in the {{kind}} defaults users leave unset.
#[kubebuilder::webhook(
    for = {{kind}},
    mutating = true,
    failure_policy = "fail",
    side_effects = "None",
    verbs = ["create", "update"],
    name = "m{{unique_name}}-{{version}}.kb.io",
    admission_review_versions = ["v1"]
)]
pub struct Defaulter;

impl admission::Defaulter<{{kind}}> for Defaulter {
    async fn default(
        &self,
        _: &AdmissionContext<'_>,
        {{kind_snake}}: &mut {{kind}},
    ) -> Result<(), Vec<FieldError>> {
        set_defaults(&mut {{kind_snake}}.spec);
        Ok(())
    }
}
"#;

/// The defaults of a kind with the example field `foo`.
pub const DEFAULTS_EXAMPLE_RS: &str = r#"
/// The default of the example field `foo`.
const DEFAULT_FOO: &str = "default";

/// Sets every unset optional field that has a default; values already set stay.
fn set_defaults(spec: &mut {{kind}}Spec) {
    spec.foo.get_or_insert_with(|| DEFAULT_FOO.to_owned());
}
"#;

/// The defaults of a kind without the example field (the deploy-image plugin's), left to
/// the user as kubebuilder leaves them.
pub const DEFAULTS_TODO_RS: &str = r#"
/// Sets every unset optional field that has a default; values already set stay.
fn set_defaults(_spec: &mut {{kind}}Spec) {
    // TODO(user): set the defaults, e.g. `spec.field.get_or_insert(1);`.
}
"#;

/// The validating section of [`WEBHOOK_RS`] (kubebuilder's `CustomValidator`), then
/// [`VALIDATION_EXAMPLE_RS`] or [`VALIDATION_TODO_RS`].
pub const VALIDATOR_RS: &str = r#"
/// Refuses {{kind}}s that cannot work.
#[kubebuilder::webhook(
    for = {{kind}},
    mutating = false,
    failure_policy = "fail",
    side_effects = "None",
    verbs = ["create", "update"],
    name = "v{{unique_name}}-{{version}}.kb.io",
    admission_review_versions = ["v1"]
)]
pub struct Validator;

impl admission::Validator<{{kind}}> for Validator {
    async fn validate_create(
        &self,
        _: &AdmissionContext<'_>,
        {{kind_snake}}: &{{kind}},
    ) -> Result<Warnings, Vec<FieldError>> {
        validate(&{{kind_snake}}.spec)
    }

    /// Only the new object matters here; compare it with `_old` for rules about changes
    /// (the context tells who asks, whether it is a dry run, and more).
    async fn validate_update(
        &self,
        _: &AdmissionContext<'_>,
        _old: &{{kind}},
        {{kind_snake}}: &{{kind}},
    ) -> Result<Warnings, Vec<FieldError>> {
        validate(&{{kind_snake}}.spec)
    }

    // Deletion keeps the trait's answer: always allowed.
}
"#;

/// The validation of a kind with the example field `foo`.
pub const VALIDATION_EXAMPLE_RS: &str = r#"
/// Every problem of `spec` at once, so one refusal lists all that needs fixing. (Rules on
/// one field alone fit the schema better: `validation(...)` on the field. Webhooks are for
/// the rest: rules across fields, on changes, or that ask the cluster.)
fn validate(spec: &{{kind}}Spec) -> Result<Warnings, Vec<FieldError>> {
    let errors: Vec<FieldError> = [validate_foo(spec)].into_iter().flatten().collect();
    if errors.is_empty() {
        Ok(Warnings::new())
    } else {
        Err(errors)
    }
}

/// The example field `foo`, when set, must not be empty.
fn validate_foo(spec: &{{kind}}Spec) -> Option<FieldError> {
    let value = spec.foo.as_deref()?;
    value.is_empty().then(|| {
        FieldError::invalid(
            FieldPath::new("spec").child("foo"),
            value,
            "must not be empty",
        )
    })
}
"#;

/// The validation of a kind without the example field (the deploy-image plugin's), left
/// to the user as kubebuilder leaves it.
pub const VALIDATION_TODO_RS: &str = r#"
/// Every problem of `spec` at once, so one refusal lists all that needs fixing. (Rules on
/// one field alone fit the schema better: `validation(...)` on the field. Webhooks are for
/// the rest: rules across fields, on changes, or that ask the cluster.)
fn validate(_spec: &{{kind}}Spec) -> Result<Warnings, Vec<FieldError>> {
    // TODO(user): add a `FieldError` per problem, e.g. `FieldError::invalid(
    // FieldPath::new("spec").child("field"), value, "must be ...")`.
    let errors: Vec<FieldError> = Vec::new();
    if errors.is_empty() {
        Ok(Warnings::new())
    } else {
        Err(errors)
    }
}
"#;

/// `controller/tests/<kind>_<webhook module>.rs`: the webhooks' test (kubebuilder's
/// `<kind>_webhook_test.go`), then a section per webhook and the apiserver's test.
pub const WEBHOOK_TEST_RS: &str = r#"//! The {{kind}} {{version}} admission webhooks ({{webhook_doc}}), called directly and by a
//! real apiserver (`kubebuilder_envtest`, which `cargo xtask test` provides) that a manager
//! serving them registered them with, as in a cluster. {{webhook_test_cases_doc}}

use std::time::{Duration, Instant};

use {{api_module}}::{{kind}};
use controller::{{controller_module}}::{{webhook_module}}::{{{webhook_test_types}}};
use kube::api::{Api, PostParams};
use kubebuilder_runtime::webhook::{{{webhook_test_traits}}};
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs};
use serde_json::json;

/// How long the apiserver may take to call webhooks it was just told of.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A {{kind}} named `name` with `spec`, as a user writes it.
fn sample(name: &str, spec: serde_json::Value) -> {{kind}} {
    serde_json::from_value(json!({
        "apiVersion": "{{full_group}}/{{version}}",
        "kind": "{{kind}}",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .unwrap()
}

/// What a webhook called directly is told besides the object (the scaffolded ones read
/// none of it).
fn context() -> AdmissionContext<'static> {
    type Request = kube::core::admission::AdmissionRequest<kube::core::DynamicObject>;
    static REQUEST: std::sync::LazyLock<Request> = std::sync::LazyLock::new(|| {
        serde_json::from_value(json!({
            "uid": "test",
            "kind": {"group": "{{full_group}}", "version": "{{version}}", "kind": "{{kind}}"},
            "resource": {"group": "{{full_group}}", "version": "{{version}}", "resource": "{{plural}}"},
            "operation": "CREATE",
            "userInfo": {"username": "test"},
        }))
        .unwrap()
    });
    AdmissionContext::new(&REQUEST)
}
"#;

/// The defaulter's section of [`WEBHOOK_TEST_RS`], for a kind with the example field.
pub const WEBHOOK_TEST_DEFAULTER_RS: &str = r#"
#[tokio::test]
async fn the_defaulter_fills_in_unset_fields() {
    let mut defaulted = sample("defaulted", json!({}));
    Defaulter.default(&context(), &mut defaulted).await.unwrap();
    assert_eq!(defaulted.spec.foo.as_deref(), Some("default"));
}

#[tokio::test]
async fn the_defaulter_keeps_what_is_set() {
    let set = sample("set", json!({"foo": "bar"}));
    let mut defaulted = set.clone();
    Defaulter.default(&context(), &mut defaulted).await.unwrap();
    assert_eq!(defaulted, set);
}
"#;

/// The validator's section of [`WEBHOOK_TEST_RS`], for a kind with the example field.
pub const WEBHOOK_TEST_VALIDATOR_RS: &str = r#"
#[tokio::test]
async fn the_validator_admits_a_valid_{{kind_snake}}() {
    for valid in [sample("unset", json!({})), sample("set", json!({"foo": "bar"}))] {
        assert_eq!(Validator.validate_create(&context(), &valid).await, Ok(Vec::new()));
        assert_eq!(
            Validator.validate_update(&context(), &valid, &valid).await,
            Ok(Vec::new())
        );
    }
}

#[tokio::test]
async fn the_validator_refuses_an_empty_foo_naming_the_field() {
    let empty = sample("empty", json!({"foo": ""}));
    let refusal = [FieldError::invalid("spec.foo", "", "must not be empty")];
    let created = Validator.validate_create(&context(), &empty).await;
    assert_eq!(created.unwrap_err(), refusal);
    let valid = sample("empty", json!({"foo": "bar"}));
    let updated = Validator.validate_update(&context(), &valid, &empty).await;
    assert_eq!(updated.unwrap_err(), refusal);
}

/// Checks that the apiserver refused the request as the validator does: 422 Invalid,
/// naming `field`.
fn assert_refused_at(answer: Result<{{kind}}, kube::Error>, field: &str) {
    match answer {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            let causes = status.details.map(|details| details.causes).unwrap_or_default();
            assert!(
                causes.iter().any(|cause| cause.field == field),
                "{field} is not named: {causes:?}"
            );
        }
        other => panic!("expected a refusal naming {field}, got {other:?}"),
    }
}
"#;

/// The apiserver's section of [`WEBHOOK_TEST_RS`] (placeholders `webhook_paths`, the paths
/// of the webhooks, and `webhook_test_cases`, [`WEBHOOK_TEST_DEFAULTING_CASE`] and
/// [`WEBHOOK_TEST_VALIDATION_CASE`] as they apply).
pub const WEBHOOK_TEST_APISERVER_RS: &str = r#"
#[tokio::test]
async fn the_apiserver_calls_the_webhooks() {
    let plane = kubebuilder_envtest::shared();
    plane.install_crds(&[{{kind}}::crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("webhook").await.unwrap();
    let api: Api<{{kind}}> = {{test_api}};
    let running = serve_webhooks(&api, &namespace).await;
{{webhook_test_cases}}
    running.shutdown().await.unwrap();
}

/// The {{kind}} webhooks on a manager of their own, as `src/main.rs` serves them,
/// registered with the apiserver of `api` (for objects in `namespace`); returns once the
/// apiserver calls each of them.
async fn serve_webhooks(api: &Api<{{kind}}>, namespace: &str) -> kubebuilder_runtime::RunningManager {
    let args = ManagerArgs {
        health_probe_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        webhook_port: 0,
        ..ManagerArgs::default()
    };
    let registration =
        LoopbackRegistration::new(&format!("{namespace}-{{kind_lower}}")).only_namespace(namespace);
    let manager = Manager::new(api.clone().into_client(), args)
        .webhooks(webhooks())
        .enable_webhooks(true)
        .serve_webhooks_on_loopback(registration);
    let metrics = manager.metrics().clone();
    let running = manager.start().await.unwrap();
    // The apiserver learns of new webhooks a little later: dry runs (which store nothing)
    // until the manager has answered each webhook.
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let _ = api.create(&dry_run, &sample("probe", json!({{valid_spec}}))).await;
        let answered = metrics.encode();
        if [{{webhook_paths}}].iter().all(|path| called(&answered, path)) {
            return running;
        }
        assert!(
            Instant::now() < deadline,
            "the apiserver did not call the webhooks within {TIMEOUT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether `metrics` count a review answered at `path`.
fn called(metrics: &str, path: &str) -> bool {
    let series = format!("controller_runtime_webhook_requests_total{{webhook=\"{path}\",code=\"200\"}} ");
    metrics
        .lines()
        .filter_map(|line| line.strip_prefix(&series))
        .any(|count| count.trim().parse::<f64>().is_ok_and(|count| count > 0.0))
}
"#;

/// The defaulting case of [`WEBHOOK_TEST_APISERVER_RS`].
pub const WEBHOOK_TEST_DEFAULTING_CASE: &str = r#"
    // Created without `foo`, stored with the defaulter's value.
    let created = api
        .create(&PostParams::default(), &sample("defaulted", json!({})))
        .await
        .unwrap();
    assert_eq!(created.spec.foo.as_deref(), Some("default"));
"#;

/// The defaulter's and the validator's sections of [`WEBHOOK_TEST_RS`] for a kind without
/// the example field (placeholder `valid_spec`, the spec of the kind's sample): what
/// holds before any rule.
pub const WEBHOOK_TEST_TODO_DEFAULTER_RS: &str = r#"
#[tokio::test]
async fn the_defaulter_keeps_what_is_set() {
    let set = sample("set", json!({{valid_spec}}));
    let mut defaulted = set.clone();
    Defaulter.default(&context(), &mut defaulted).await.unwrap();
    assert_eq!(defaulted, set);
}
"#;

/// See [`WEBHOOK_TEST_TODO_DEFAULTER_RS`].
pub const WEBHOOK_TEST_TODO_VALIDATOR_RS: &str = r#"
#[tokio::test]
async fn the_validator_admits_a_valid_{{kind_snake}}() {
    let valid = sample("valid", json!({{valid_spec}}));
    assert_eq!(Validator.validate_create(&context(), &valid).await, Ok(Vec::new()));
    assert_eq!(
        Validator.validate_update(&context(), &valid, &valid).await,
        Ok(Vec::new())
    );
}
"#;

/// The apiserver's case of [`WEBHOOK_TEST_APISERVER_RS`] for a kind without the example
/// field.
pub const WEBHOOK_TEST_TODO_CASE: &str = r#"
    // The kind's sample is admitted as written.
    let valid = sample("valid", json!({{valid_spec}}));
    let admitted = api.create(&PostParams::default(), &valid).await.unwrap();
    assert_eq!(admitted.spec, valid.spec);
"#;

/// The validation case of [`WEBHOOK_TEST_APISERVER_RS`].
pub const WEBHOOK_TEST_VALIDATION_CASE: &str = r#"
    // A valid {{kind}} is admitted as written; an invalid one is refused, on create and on
    // update, and not stored.
    let valid = sample("valid", json!({"foo": "bar"}));
    let admitted = api.create(&PostParams::default(), &valid).await.unwrap();
    assert_eq!(admitted.spec, valid.spec);
    let refused = api
        .create(&PostParams::default(), &sample("empty", json!({"foo": ""})))
        .await;
    assert_refused_at(refused, "spec.foo");
    assert!(api.get_opt("empty").await.unwrap().is_none());
    let update = json!({"spec": {"foo": ""}});
    let updated = api
        .patch("valid", &kube::api::PatchParams::default(), &kube::api::Patch::Merge(update))
        .await;
    assert_refused_at(updated, "spec.foo");
"#;

/// `config/samples/<group>_<version>_<kind>.yaml`.
pub const SAMPLE_YAML: &str = r#"apiVersion: {{full_group}}/{{version}}
kind: {{kind}}
metadata:
  labels:
    app.kubernetes.io/name: {{project_name}}
    app.kubernetes.io/managed-by: kustomize
  name: {{kind_lower}}-sample
spec:
  # The fields of {{kind}}Spec ({{types_dir}}/{{kind_snake}}_types.rs).
  foo: bar
"#;
