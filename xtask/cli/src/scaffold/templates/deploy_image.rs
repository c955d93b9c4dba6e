//! The files of a kind made by the deploy-image/v1-alpha plugin (`cargo xtask create api
//! ... --plugins deploy-image/v1-alpha --image IMAGE`), kubebuilder's Getting Started
//! operator: in the places of [`super::kind`]'s (types, sample, controller module,
//! reconciler and its test), a kind whose controller keeps a Deployment of the operand image
//! at the `size` each object asks for, under the restricted Pod Security Standard, with
//! `Available` and `Degraded` conditions, Events and a finalizer.
//!
//! Placeholders: those of [`super::kind`], and `image` (the `--image`), `image_variable`
//! (the manager's environment variable naming it, `MEMCACHED_IMAGE`), `finalizer`
//! (`<group>.<domain>/finalizer`), `container_name` and `port_name`, and the pieces that
//! depend on the options: `container_port_field`, `sample_port`, `port_import`,
//! `container_command`, `container_ports`, `run_as_user`, `test_spec`, `expected_command`,
//! `expected_ports` and `expected_run_as_user`.

use super::kind::{controller_test_constants, controller_test_manager, kind_rbac};

/// `api/src/<version>/<kind>_types.rs`.
pub const TYPES_RS: &str = r#"//! The {{kind}} kind: how many pods of its operand run (`{{kind}}Spec`) and how that goes
//! (`{{kind}}Status`). The controller runs them as a Deployment of the image the manager's
//! `{{image_variable}}` names. Edit both, then run `cargo xtask manifests`: the CRD follows
//! the fields, their doc comments (descriptions) and their `#[kubebuilder(...)]` attributes
//! (kubebuilder's markers in Rust spelling), in
//! `config/crd/bases/{{full_group}}_{{plural}}.yaml`.

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
    /// size defines the number of {{kind}} instances: the replicas of its Deployment.
    #[kubebuilder(required, validation(minimum = 1, maximum = 3))]
    pub size: i32,{{container_port_field}}
}

/// {{kind}}Status defines the observed state of {{kind}}.
#[kubebuilder::schema{{status_schema_args}}]
#[derive(Default)]
pub struct {{kind}}Status {
    /// conditions represent the current state of the {{kind}}, one per aspect (`type`),
    /// each True, False or Unknown with a machine-readable reason and a message:
    /// "Available" (its Deployment is at `size`) and "Degraded" (it is being deleted).
    #[kubebuilder(optional, list_type = "map", list_map_key = "type")]
    pub conditions: Vec<Condition>,
}
"#;

/// [`TYPES_RS`]'s `container_port_field`, with `--image-container-port`.
pub const CONTAINER_PORT_FIELD: &str = "

    /// containerPort defines the port the operand's container listens on.
    #[kubebuilder(required, validation(minimum = 1, maximum = 65535))]
    pub container_port: i32,";

/// `config/samples/<group>_<version>_<kind>.yaml`.
pub const SAMPLE_YAML: &str = r#"apiVersion: {{full_group}}/{{version}}
kind: {{kind}}
metadata:
  labels:
    app.kubernetes.io/name: {{project_name}}
    app.kubernetes.io/managed-by: kustomize
  name: {{kind_lower}}-sample
spec:
  # How many pods of the operand run (1 to 3).
  size: 1{{sample_port}}
"#;

/// [`SAMPLE_YAML`]'s `sample_port` (placeholder `port`), with `--image-container-port`.
pub const SAMPLE_PORT: &str = "
  # The port the operand listens on.
  containerPort: {{port}}";

/// `controller/src/<kind>/mod.rs`: the setup on the manager, with the operand's image.
pub const CONTROLLER_MOD_RS: &str = r#"//! The {{kind}} controller: its reconciler, and its admission webhooks once `cargo xtask
//! create webhook` adds them.
//!
//! [`setup_with_manager`] registers the controller on a [`Manager`], as kubebuilder's
//! `SetupWithManager`: it watches {{kind}}s and the Deployments they own, and reconciles a
//! {{kind}} whenever it or its Deployment changes.

pub mod reconciler;
// +kubebuilder:scaffold:submodules

use {{api_module}}::{{kind}};
use k8s_openapi::api::apps::v1::Deployment;
use kubebuilder_runtime::Manager;

use self::reconciler::{{kind}}Reconciler;

/// The controller's name: the `controller` label of its metrics and its readiness check.
pub const CONTROLLER_NAME: &str = "{{unique_name}}";

/// The manager's environment variable that names the image of the {{kind}}s' pods
/// (`config/manager/manager.yaml` sets it, so that another image needs no new build of the
/// manager)...
pub const IMAGE_VARIABLE: &str = "{{image_variable}}";
/// ...and the image where it is unset, as when `cargo xtask run` starts the manager outside
/// a pod: the one `create api --image` named.
pub const DEFAULT_IMAGE: &str = "{{image}}";

/// The image the {{kind}}s' pods run: [`IMAGE_VARIABLE`]'s, else [`DEFAULT_IMAGE`].
pub fn operand_image() -> String {
    std::env::var(IMAGE_VARIABLE).unwrap_or_else(|_| DEFAULT_IMAGE.to_owned())
}

/// Registers the {{kind}} controller on `manager`.
pub fn setup_with_manager(manager: Manager) -> Manager {
    manager
        .controller_for::<{{kind}}>()
        .named(CONTROLLER_NAME)
        // A change to a {{kind}}'s Deployment (scaled by hand, deleted) reconciles the
        // {{kind}}, which puts it back.
        .owns::<Deployment>()
        .complete({{kind}}Reconciler::new(operand_image()))
}
"#;

/// `controller/src/<kind>/reconciler.rs`: the reconciler, with its RBAC attributes.
pub const RECONCILER_RS: &str = concat!(
    r#"//! The {{kind}} reconciler: each {{kind}} gets a Deployment of `size` pods of the operand,
//! which it controls (the garbage collector deletes it with the {{kind}}), applied with
//! server-side apply, which puts back whatever else changed in what it sets. The `Available`
//! condition says how the last apply went; a finalizer keeps a deleted {{kind}} until the
//! reconciler has marked it `Degraded` and recorded an Event, the place for any cleanup of
//! what the {{kind}} does not own. Its RBAC attributes are the permissions the manager's
//! role (`config/rbac/role.yaml`, written by `cargo xtask manifests`) grants: add one for
//! every other kind the reconciler reads or writes, and nothing more.

use std::collections::BTreeMap;

use {{api_module}}::{{kind}};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container,{{port_import}} PodSecurityContext, PodSpec, PodTemplateSpec, SeccompProfile,
    SecurityContext,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use kubebuilder_runtime::prelude::*;

/// Holds a deleted {{kind}} until the reconciler has recorded its deletion.
pub const FINALIZER: &str = "{{finalizer}}";
/// The condition type that says whether the Deployment is applied as the {{kind}} asks...
pub const AVAILABLE: &str = "Available";
/// ...and the one that says the {{kind}} is being deleted.
pub const DEGRADED: &str = "Degraded";
/// The reason of [`AVAILABLE`], and of the Event recorded when it changes...
pub const RECONCILING: &str = "Reconciling";
/// ...and of [`DEGRADED`].
pub const FINALIZING: &str = "Finalizing";
/// The reason of the Event recorded when a {{kind}} is deleted.
pub const DELETING: &str = "Deleting";

/// The name of the operand's container (and of its port, if it has one).
const CONTAINER_NAME: &str = "{{container_name}}";

/// Reconciles {{kind}}s: keeps each one's Deployment as its spec asks, reports in its
/// status.
// The {{kind}}s it reconciles, their status, and their finalizers (which it adds and
// removes, and which setting blockOwnerDeletion on the Deployments needs).
"#,
    kind_rbac!(),
    r#"// The Deployments it applies and watches, and their pods, for a reconciler that reads how
// they run. (`cargo xtask manifests` grants the runtime's Events itself.)
#[kubebuilder::rbac(
    groups = ["apps"],{{rbac_namespace}}
    resources = ["deployments"],
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
)]
#[kubebuilder::rbac(
    groups = ["core"],{{rbac_namespace}}
    resources = ["pods"],
    verbs = ["get", "list", "watch"]
)]
pub struct {{kind}}Reconciler {
    /// The image of the operand's container.
    image: String,
}

impl {{kind}}Reconciler {
    /// A reconciler whose Deployments run `image`.
    pub fn new(image: String) -> Self {
        Self { image }
    }

    /// Applies the Deployment `{{kind_snake}}` asks for and reports how that went in
    /// [`AVAILABLE`].
    async fn apply(&self, ctx: &Context, {{kind_snake}}: &{{kind}}) -> Result<Action> {
        let deployment = self.deployment_for({{kind_snake}})?;
        if let Err(error) = ctx.apply(&deployment).await {
            let message = format!("The Deployment cannot be applied: {error}");
            let unavailable = conditions::new(AVAILABLE, Status::False, RECONCILING, message);
            set_condition(ctx, {{kind_snake}}, unavailable).await?;
            return Err(error.into());
        }
        let message = format!(
            "Deployment {} runs {} replicas of {}",
            {{kind_snake}}.name_any(),
            {{kind_snake}}.spec.size,
            self.image
        );
        let available = conditions::new(AVAILABLE, Status::True, RECONCILING, message.clone());
        if set_condition(ctx, {{kind_snake}}, available).await? {
            ctx.normal({{kind_snake}}, RECONCILING, message).await;
        }
        Ok(Action::await_change())
    }

    /// The Deployment of `{{kind_snake}}`: `size` pods of the operand that meet the
    /// restricted Pod Security Standard, controlled by `{{kind_snake}}`.
    fn deployment_for(&self, {{kind_snake}}: &{{kind}}) -> Result<Deployment> {
        let labels = labels_for({{kind_snake}});
        let container = Container {
            name: CONTAINER_NAME.to_owned(),
            image: Some(self.image.clone()),
            image_pull_policy: Some("IfNotPresent".to_owned()),{{container_command}}{{container_ports}}
            security_context: Some(SecurityContext {
                run_as_non_root: Some(true),{{run_as_user}}
                allow_privilege_escalation: Some(false),
                capabilities: Some(Capabilities {
                    drop: Some(vec!["ALL".to_owned()]),
                    ..Capabilities::default()
                }),
                ..SecurityContext::default()
            }),
            ..Container::default()
        };
        let pod = PodSpec {
            containers: vec![container],
            security_context: Some(PodSecurityContext {
                run_as_non_root: Some(true),
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".to_owned(),
                    ..SeccompProfile::default()
                }),
                ..PodSecurityContext::default()
            }),
            ..PodSpec::default()
        };
        let mut deployment = Deployment {
            metadata: ObjectMeta {
                name: Some({{kind_snake}}.name_any()),
                namespace: {{kind_snake}}.namespace(),
                ..ObjectMeta::default()
            },
            spec: DeploymentSpec {
                replicas: Some({{kind_snake}}.spec.size),
                selector: LabelSelector {
                    match_labels: Some(labels.clone()),
                    ..LabelSelector::default()
                },
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(labels),
                        ..ObjectMeta::default()
                    }),
                    spec: Some(pod),
                },
                ..DeploymentSpec::default()
            },
            ..Deployment::default()
        };
        controllerutil::set_controller_reference({{kind_snake}}, &mut deployment)?;
        Ok(deployment)
    }
}

impl Reconciler<{{kind}}> for {{kind}}Reconciler {
    type Error = Error;

    /// Runs for each {{kind}} that changes, whose Deployment changes, or that is deleted
    /// (and for every one when the controller starts); `ctx` holds the controller's
    /// client, cache, Event recorder and applier.
    async fn reconcile(&self, {{kind_snake}}: Arc<{{kind}}>, ctx: &Context) -> Result<Action> {
        let api = ctx.api(&*{{kind_snake}});
        let action = controllerutil::finalize(&api, FINALIZER, {{kind_snake}}, async |event| match event {
            Finalizing::Apply({{kind_snake}}) => self.apply(ctx, &{{kind_snake}}).await,
            Finalizing::Cleanup({{kind_snake}}) => clean_up(ctx, &{{kind_snake}}).await,
        });
        Ok(action.await?)
    }
}

/// What happens before a deleted {{kind}} goes: it is marked [`DEGRADED`] and a Warning
/// Event says so. Release here what the {{kind}} holds and does not own (backups to take,
/// objects elsewhere); its Deployment needs nothing, the garbage collector deletes it.
async fn clean_up(ctx: &Context, {{kind_snake}}: &{{kind}}) -> Result<Action> {
    let name = {{kind_snake}}.name_any();
    let message = format!("Finalizer operations for {name} are done");
    let degraded = conditions::new(DEGRADED, Status::True, FINALIZING, message);
    set_condition(ctx, {{kind_snake}}, degraded).await?;
    let namespace = {{kind_snake}}.namespace().unwrap_or_default();
    let note = format!("{{kind}} {name} is being deleted from the namespace {namespace}");
    ctx.warning({{kind_snake}}, DELETING, note).await;
    Ok(Action::await_change())
}

/// Sets `condition` in the status of `{{kind_snake}}`, which is written only when that
/// changed it (an unchanged write would only start another reconcile); whether it did.
async fn set_condition(ctx: &Context, {{kind_snake}}: &{{kind}}, condition: Condition) -> Result<bool> {
    let mut status = {{kind_snake}}.status.clone().unwrap_or_default();
    let changed = conditions::set_for({{kind_snake}}, &mut status.conditions, condition);
    if changed {
        ctx.apply_status({{kind_snake}}, &status).await?;
    }
    Ok(changed)
}

/// The labels of the pods of `{{kind_snake}}`, which its Deployment's selector matches:
/// one {{kind}}'s pods only.
fn labels_for({{kind_snake}}: &{{kind}}) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "{{project_name}}".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), {{kind_snake}}.name_any()),
        ("app.kubernetes.io/managed-by".to_owned(), "{{kind}}Controller".to_owned()),
    ])
}
"#
);

/// [`RECONCILER_RS`]'s `container_command` (placeholder `command`, Rust string literals
/// separated by commas), with `--image-container-command`.
pub const CONTAINER_COMMAND: &str = "
            command: Some(Vec::from([{{command}}].map(str::to_owned))),";

/// [`RECONCILER_RS`]'s `container_ports`, with `--image-container-port`.
pub const CONTAINER_PORTS: &str = "
            ports: Some(vec![ContainerPort {
                container_port: {{kind_snake}}.spec.container_port,
                name: Some(\"{{port_name}}\".to_owned()),
                ..ContainerPort::default()
            }]),";

/// [`RECONCILER_RS`]'s `run_as_user` (placeholder `user`), with `--run-as-user`.
pub const RUN_AS_USER: &str = "
                run_as_user: Some({{user}}),";

/// `controller/tests/<kind>_controller.rs`: the controller against a real control plane.
pub const CONTROLLER_TEST_RS: &str = concat!(
    r#"//! The {{kind}} controller against a real control plane (`kubebuilder_envtest`, which
//! `cargo xtask test` provides), run as it is deployed: as its service account, allowed
//! what `config/rbac/role.yaml` grants it. A new {{kind}} gets its Deployment, of `size`
//! pods of the operand that meet the restricted Pod Security Standard, and is `Available`;
//! the Deployment follows `size` and is put back when changed; a deleted {{kind}} goes
//! once the reconciler has recorded it. (The control plane runs no pods: the Deployment
//! is checked as written.) Add a test per behaviour of the reconciler.

use std::path::Path;
use std::time::Duration;

use {{api_module}}::{{kind}};
use controller::{{controller_module}}::operand_image;
use controller::{{controller_module}}::reconciler::{AVAILABLE, DELETING, RECONCILING};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Container;
use k8s_openapi::api::events::v1::Event;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubebuilder_envtest::eventually;
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs, conditions};
use serde_json::json;

"#,
    controller_test_constants!(),
    r#"
/// The test's {{kind}}, and its Deployment.
const NAME: &str = "test-{{kind_lower}}";

#[tokio::test]
async fn a_{{kind_snake}}_is_run_as_a_restricted_deployment_of_its_size() {
"#,
    controller_test_manager!(),
    r#"
    let api: Api<{{kind}}> = Api::namespaced(client.clone(), &namespace);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &namespace);
    let {{kind_snake}}: {{kind}} = serde_json::from_value(json!({
        "apiVersion": "{{full_group}}/{{version}}",
        "kind": "{{kind}}",
        "metadata": {"name": NAME},
        "spec": {{{test_spec}}},
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &{{kind_snake}}).await.unwrap();

    // The Deployment: `size` pods of the operand, restricted, controlled by the {{kind}}.
    let deployment = eventually("the Deployment", TIMEOUT, || async {
        deployments.get_opt(NAME).await.unwrap()
    })
    .await;
    let owner = deployment.owner_references().first().cloned().unwrap();
    assert_eq!((owner.uid, owner.controller), (created.uid().unwrap(), Some(true)));
    let spec = deployment.spec;
    assert_eq!(spec.replicas, Some(1));
    let pod = spec.template.spec.unwrap();
    let pod_security = pod.security_context.unwrap();
    assert_eq!(pod_security.run_as_non_root, Some(true));
    assert_eq!(pod_security.seccomp_profile.unwrap().type_, "RuntimeDefault");
    let [container]: [Container; 1] = pod.containers.try_into().unwrap();
    assert_eq!(container.image, Some(operand_image()));
    assert_eq!(container.command, {{expected_command}});
    let ports: Vec<i32> = container.ports.iter().flatten().map(|port| port.container_port).collect();
    assert_eq!(ports, {{expected_ports}});
    let security = container.security_context.unwrap();
    assert_eq!(security.run_as_non_root, Some(true));
    assert_eq!(security.run_as_user, {{expected_run_as_user}});
    assert_eq!(security.allow_privilege_escalation, Some(false));
    assert_eq!(security.capabilities.unwrap().drop, Some(vec!["ALL".to_owned()]));

    eventually("the Available condition", TIMEOUT, || async {
        let current = api.get(NAME).await.unwrap();
        let conditions = current.status.map(|status| status.conditions).unwrap_or_default();
        conditions::find(&conditions, AVAILABLE)
            .filter(|available| available.status == "True" && available.reason == RECONCILING)
            .cloned()
    })
    .await;

    // A new size reaches the Deployment...
    let resize = Patch::Merge(json!({"spec": {"size": 3}}));
    api.patch(NAME, &PatchParams::default(), &resize).await.unwrap();
    eventually("3 replicas", TIMEOUT, || replicas_are(&deployments, 3)).await;
    // ...and a Deployment scaled by hand is put back to it.
    let scale = Patch::Merge(json!({"spec": {"replicas": 2}}));
    deployments.patch(NAME, &PatchParams::default(), &scale).await.unwrap();
    eventually("3 replicas again", TIMEOUT, || replicas_are(&deployments, 3)).await;

    // A deleted {{kind}} goes once the reconciler has recorded it.
    api.delete(NAME, &DeleteParams::default()).await.unwrap();
    eventually("the deletion", TIMEOUT, || async {
        api.get_opt(NAME).await.unwrap().is_none().then_some(())
    })
    .await;
    // Recorded as the service account: the role allows it.
    let events: Api<Event> = Api::namespaced(client, &namespace);
    eventually("the Event about the deletion", TIMEOUT, || async {
        let recorded = events.list(&ListParams::default()).await.unwrap();
        recorded.items.into_iter().find(|event| {
            event.regarding.as_ref().and_then(|regarding| regarding.uid.as_deref())
                == created.uid().as_deref()
                && event.reason.as_deref() == Some(DELETING)
        })
    })
    .await;
    manager.shutdown().await.unwrap();
}

/// `Some(())` once the Deployment has `replicas`.
async fn replicas_are(deployments: &Api<Deployment>, replicas: i32) -> Option<()> {
    let deployment = deployments.get(NAME).await.unwrap();
    (deployment.spec.replicas == Some(replicas)).then_some(())
}
"#
);
