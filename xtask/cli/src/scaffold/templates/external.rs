//! The files of a controller for a kind this project does not own (`cargo xtask create api
//! --resource=false` for one of Kubernetes' kinds, or with `--external-api-path` for another
//! project's): `controller/src/<kind>/{mod,reconciler}.rs` and the controller's test, in
//! the layout of a kind's own ([`super::kind`]), on the kind's Rust type; no types, CRD or
//! sample.
//!
//! Placeholders: `kind`, `kind_snake`, `kind_lower`, `plural`, `version`, `api_version`
//! (`apps/v1`), `rbac_group` (`apps`, `core` for the core group), `type_path`
//! (`k8s_openapi::api::apps::v1::Deployment`), `origin` (whose kind it is),
//! `rbac_namespace` (the RBAC attributes' `namespace` in a namespaced project, as a kind's own),
//! `watched`, `scope_imports`, `test_api` (as for a kind's own), `object` (the fields of the
//! test's new object) and `serve_kind` (what the test does for the apiserver to serve the
//! kind: nothing for Kubernetes' own, [`STAND_IN_CRD_RS`] for another project's).

use serde_json::Value;

use super::kind::{controller_test_service_account, kind_rbac};

/// `controller/src/<kind>/mod.rs`: the reconciler module and the setup on the manager.
pub const CONTROLLER_MOD_RS: &str = r#"//! The {{kind}} controller, for {{origin}}:
//! `{{type_path}}`. This project has no types or CRD of it, only the controller.
//!
//! [`setup_with_manager`] registers the controller on a [`Manager`], as kubebuilder's
//! `SetupWithManager`: it watches {{kind}}s and reconciles one whenever it changes.

pub mod reconciler;
// +kubebuilder:scaffold:submodules

use {{type_path}};
use kubebuilder_runtime::Manager;

use self::reconciler::{{kind}}Reconciler;

/// The controller's name: the `controller` label of its metrics and its readiness check.
pub const CONTROLLER_NAME: &str = "{{kind_lower}}";

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

/// `controller/src/<kind>/reconciler.rs`: the reconciler, with the RBAC attributes
/// kubebuilder gives a controller of the kind.
pub const RECONCILER_RS: &str = concat!(
    r#"//! The {{kind}} reconciler. Its RBAC attributes are the permissions the manager's
//! role (`config/rbac/role.yaml`, written by `cargo xtask manifests`) grants: add one
//! for every other kind the reconciler reads or writes, and nothing more.

use {{type_path}};
use kubebuilder_runtime::prelude::*;

/// The reason of the Event the reconciler records about each {{kind}} it reconciles.
pub const RECONCILED: &str = "Reconciled";

/// Reconciles {{kind}}s ({{api_version}}): makes the cluster match what they ask for.
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
        // Make the cluster match what the {{kind}} asks for here: read what exists through
        // `ctx`, then create, change or delete what differs (with an RBAC attribute above
        // for each kind it touches). The {{kind}} is not this project's: change it only as
        // its owner allows (labels, annotations, conditions of your own). The Event below
        // shows the controller at work; record one only when something happened.
        let message = "The {{kind}} is reconciled";
        ctx.normal(&*{{kind_snake}}, RECONCILED, message).await;
        Ok(Action::await_change())
    }
}
"#
);

/// `controller/tests/<kind>_controller.rs`: the controller against a real control plane.
pub const CONTROLLER_TEST_RS: &str = concat!(
    r#"//! The {{kind}} controller against a real control plane (`kubebuilder_envtest`, which
//! `cargo xtask test` provides), run as it is deployed: as its service account, allowed
//! what `config/rbac/role.yaml` grants it. A new {{kind}} is reconciled, as the
//! controller's `controller_runtime_reconcile_total` metric counts, and the reconciler's
//! Event about it is recorded. Add a test per behaviour of the reconciler.

use std::path::Path;
use std::time::{Duration, Instant};

use {{type_path}};
use controller::{{kind_snake}}::reconciler::RECONCILED;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, PostParams};
use kube::{Resource as _, ResourceExt as _};
use kubebuilder_envtest::eventually;
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs};
use serde_json::json;

/// How long the controller may take to reconcile.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The service account `config/rbac` binds the manager's roles to.
const SERVICE_ACCOUNT: &str = "controller-manager";

#[test]
fn the_rbac_attributes_name_where_the_type_is_served() {
    // What the reconciler's RBAC attributes grant (group {{rbac_group}}, resource
    // {{plural}}) must be where the type is served.
    assert_eq!({{kind}}::api_version(&()), "{{api_version}}");
    assert_eq!({{kind}}::kind(&()), "{{kind}}");
    assert_eq!({{kind}}::plural(&()), "{{plural}}");
}

#[tokio::test]
async fn a_new_{{kind_snake}}_is_reconciled() {
    let plane = kubebuilder_envtest::shared();
    let client = plane.client().await.unwrap();{{serve_kind}}
    let namespace = plane.create_namespace("{{kind_lower}}").await.unwrap();
"#,
    controller_test_service_account!(),
    r#"    let manager = controller::{{kind_snake}}::setup_with_manager(Manager::new(as_manager, args));
    let metrics = manager.metrics().clone();
    let manager = manager.start().await.unwrap();

    // A new object, with the fields the apiserver needs to create one.
    // Events are written where the object is (`default` for a cluster-scoped one).
    let events: Api<Event> = Api::all(client.clone());
    let api: Api<{{kind}}> = {{test_api}};
    let object: {{kind}} = serde_json::from_value(json!({
{{object}}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &object).await.unwrap();

    // Counted once the reconciler returns Ok (an error counts as `result="error"` and is
    // retried).
    let deadline = Instant::now() + TIMEOUT;
    while !reconciled(&metrics.encode()) {
        assert!(Instant::now() < deadline, "not reconciled within {TIMEOUT:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
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

/// Whether `metrics` count a reconcile of the controller that succeeded.
fn reconciled(metrics: &str) -> bool {
    let series = format!(
        "controller_runtime_reconcile_total{{controller=\"{}\",result=\"success\"}} ",
        controller::{{kind_snake}}::CONTROLLER_NAME
    );
    metrics
        .lines()
        .filter_map(|line| line.strip_prefix(&series))
        .any(|count| count.trim().parse::<f64>().is_ok_and(|count| count > 0.0))
}
"#
);

/// [`CONTROLLER_TEST_RS`]'s `serve_kind` for another project's kind (placeholder `scope`,
/// `Namespaced` or `Cluster`, besides the others).
pub const SERVE_KIND_LINE: &str = "\n    serve_{{kind_snake}}s(&client).await;";

/// Appended to [`CONTROLLER_TEST_RS`] for another project's kind: the stand-in CRD.
pub const STAND_IN_CRD_RS: &str = r#"
/// {{kind}}'s CRD comes with the project that defines {{kind}}: until this test installs
/// that one, the apiserver serves a stand-in that keeps any fields (unless it serves
/// {{api_version}} {{plural}} already).
async fn serve_{{kind_snake}}s(client: &kube::Client) {
    let served = client
        .list_api_group_resources("{{api_version}}")
        .await
        .is_ok_and(|list| list.resources.iter().any(|resource| resource.name == "{{plural}}"));
    if served {
        return;
    }
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
    let stand_in: apiextensions::CustomResourceDefinition =
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "{{plural}}.{{rbac_group}}"},
            "spec": {
                "group": "{{rbac_group}}",
                "names": {"kind": "{{kind}}", "plural": "{{plural}}"},
                "scope": "{{scope}}",
                "versions": [{
                    "name": "{{version}}",
                    "served": true,
                    "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                    "subresources": {"status": {}},
                }],
            },
        }))
        .unwrap();
    kubebuilder_envtest::shared()
        .install_crds(&[stand_in])
        .await
        .unwrap();
}
"#;

/// The entries of a JSON object as lines inside `json!({ ... })` at 8 spaces, each with its
/// trailing comma, a [`NAMESPACE`](crate::scaffold::names::core_kinds::NAMESPACE) string
/// written as the test's `namespace`.
pub fn object_entries(fields: &serde_json::Map<String, Value>) -> String {
    fields
        .iter()
        .map(|(key, value)| format!("        {key:?}: {},\n", json_text(value, 8)))
        .collect::<String>()
        .trim_end_matches('\n')
        .to_owned()
}

/// How far `json!` text may reach before a value is split over lines.
const WIDTH: usize = 96;

/// `value` as `json!` text for a line indented by `indent`: on one line if it fits, else
/// an entry per line.
fn json_text(value: &Value, indent: usize) -> String {
    let flat = flat_text(value);
    if indent + flat.len() <= WIDTH {
        return flat;
    }
    let inner = " ".repeat(indent + 4);
    let close = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            let entries: String = map
                .iter()
                .map(|(key, value)| format!("{inner}{key:?}: {},\n", json_text(value, indent + 4)))
                .collect();
            format!("{{\n{entries}{close}}}")
        }
        Value::Array(items) if !items.is_empty() => {
            let entries: String = items
                .iter()
                .map(|item| format!("{inner}{},\n", json_text(item, indent + 4)))
                .collect();
            format!("[\n{entries}{close}]")
        }
        _ => flat,
    }
}

fn flat_text(value: &Value) -> String {
    match value {
        Value::String(text) if text == crate::scaffold::names::core_kinds::NAMESPACE => {
            "namespace".to_owned()
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("{key:?}: {}", flat_text(value)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(flat_text).collect();
            format!("[{}]", items.join(", "))
        }
        Value::String(text) => format!("{text:?}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn objects_are_written_as_json_macro_text() {
        let fields = json!({
            "metadata": {"name": "test"},
            "involvedObject": {"kind": "Pod", "namespace": "$NAMESPACE"},
            "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "Never"}}},
        });
        assert_eq!(
            object_entries(fields.as_object().unwrap()),
            r#"        "metadata": {"name": "test"},
        "involvedObject": {"kind": "Pod", "namespace": namespace},
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "Never"},
            },
        },"#
        );
    }
}
