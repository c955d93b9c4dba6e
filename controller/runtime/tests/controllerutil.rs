//! The controllerutil toolkit and server-side apply against the real apiserver:
//! create-or-update and create-or-patch (and what they leave unwritten), a write conflict
//! retried, the finalizer flow through deletion, and the refusals that write nothing.

// `common::eventually` is for the other test binaries.
#[allow(unused_imports)]
mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{Widget, WidgetSpec, widget_crd};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use kube::runtime::controller::Action;
use kube::{Client, ResourceExt as _};
use kubebuilder_envtest::shared;
use kubebuilder_runtime::apply::Applier;
use kubebuilder_runtime::controllerutil::{
    self, CreateOrUpdateError, FinalizeError, Finalizing, OperationResult, OwnerReferenceError,
};
use kubebuilder_runtime::is_conflict;
use serde_json::json;

const FINALIZER: &str = "runtime.kubebuilder.test/cleanup";

async fn namespace(prefix: &str) -> (Client, String) {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace(prefix).await.unwrap();
    (client, namespace)
}

async fn widgets(prefix: &str) -> (Client, Api<Widget>) {
    let (client, namespace) = namespace(prefix).await;
    shared().install_crds(&[widget_crd()]).await.unwrap();
    (client.clone(), Api::namespaced(client, &namespace))
}

fn sized(size: i64) -> impl FnMut(&mut Widget) -> Result<(), std::convert::Infallible> {
    move |widget| {
        widget.spec.size = Some(size);
        Ok(())
    }
}

#[tokio::test]
async fn create_or_update_creates_updates_and_writes_nothing_when_nothing_changed() {
    let (_, api) = widgets("cu-basic").await;

    let (created, result) = controllerutil::create_or_update(&api, "w", sized(1))
        .await
        .unwrap();
    assert_eq!(result, OperationResult::Created);
    assert_eq!(created.spec.size, Some(1));
    assert_eq!(created.kind, "Widget", "type meta is filled in");

    let (same, result) = controllerutil::create_or_update(&api, "w", sized(1))
        .await
        .unwrap();
    assert_eq!(result, OperationResult::Unchanged);
    assert_eq!(same.resource_version(), created.resource_version());
    let stored = api.get("w").await.unwrap();
    assert_eq!(stored.resource_version(), created.resource_version());

    let (updated, result) = controllerutil::create_or_update(&api, "w", sized(2))
        .await
        .unwrap();
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(api.get("w").await.unwrap().spec.size, Some(2));
    assert_ne!(updated.resource_version(), created.resource_version());

    let renamed = controllerutil::create_or_update(&api, "w", |widget: &mut Widget| {
        widget.metadata.name = Some("other".into());
        Ok::<_, std::convert::Infallible>(())
    })
    .await;
    assert!(matches!(
        renamed,
        Err(CreateOrUpdateError::KeyChanged { .. })
    ));
}

/// The mutation itself has another writer change the object once, between the read and
/// the write: the write conflicts, and the retry reads the other writer's change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_conflict_is_retried_from_a_fresh_read() {
    let (_, api) = widgets("cu-conflict").await;
    controllerutil::create_or_update(&api, "w", sized(1))
        .await
        .unwrap();
    let other_writer = api.clone();
    let calls = AtomicUsize::new(0);

    let (widget, result) = controllerutil::create_or_update(&api, "w", |widget: &mut Widget| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            let mut changed = widget.clone();
            changed.spec.size = Some(7);
            tokio::task::block_in_place(|| {
                tokio::runtime::Handle::current().block_on(other_writer.replace(
                    "w",
                    &PostParams::default(),
                    &changed,
                ))
            })
            .unwrap();
        }
        widget.spec.color = Some("blue".into());
        Ok::<_, std::convert::Infallible>(())
    })
    .await
    .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(result, OperationResult::Updated);
    let expected = WidgetSpec {
        size: Some(7),
        color: Some("blue".into()),
    };
    assert_eq!(widget.spec, expected);
    assert_eq!(api.get("w").await.unwrap().spec, expected);
}

/// Gives a new Deployment its selector and template (an existing one keeps what the
/// apiserver defaulted in them).
fn web_deployment(deployment: &mut Deployment) {
    if deployment.spec.template.spec.is_some() {
        return;
    }
    let labels: BTreeMap<String, String> = [("app".to_owned(), "web".to_owned())].into();
    deployment.spec = DeploymentSpec {
        selector: LabelSelector {
            match_labels: Some(labels.clone()),
            ..LabelSelector::default()
        },
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(labels),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "web".into(),
                    image: Some("nginx".into()),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
        },
        ..DeploymentSpec::default()
    };
}

/// Sets the replicas and the status' observed generation the test asks for.
async fn patch_deployment(
    api: &Api<Deployment>,
    replicas: i32,
    observed_generation: Option<i64>,
) -> (Deployment, OperationResult) {
    controllerutil::create_or_patch(api, "web", |deployment: &mut Deployment| {
        web_deployment(deployment);
        deployment.spec.replicas = Some(replicas);
        deployment
            .status
            .get_or_insert_default()
            .observed_generation = observed_generation;
        Ok::<_, std::convert::Infallible>(())
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn create_or_patch_patches_the_status_through_its_subresource() {
    let (client, namespace) = namespace("cu-patch").await;
    let api: Api<Deployment> = Api::namespaced(client, &namespace);

    assert_eq!(
        patch_deployment(&api, 1, Some(1)).await.1,
        OperationResult::Created
    );
    assert_eq!(
        patch_deployment(&api, 1, Some(1)).await.1,
        OperationResult::UpdatedStatusOnly,
        "the status is not written on creation"
    );
    let (_, result) = patch_deployment(&api, 2, Some(1)).await;
    assert_eq!(result, OperationResult::Updated);
    let (_, result) = patch_deployment(&api, 3, Some(2)).await;
    assert_eq!(result, OperationResult::UpdatedStatus);
    let (unchanged, result) = patch_deployment(&api, 3, Some(2)).await;
    assert_eq!(result, OperationResult::Unchanged);

    let stored = api.get("web").await.unwrap();
    assert_eq!(stored.spec.replicas, Some(3));
    assert_eq!(stored.status.unwrap().observed_generation, Some(2));
    assert_eq!(
        stored.metadata.resource_version,
        unchanged.metadata.resource_version
    );

    // A field the mutation removes from the status is removed.
    let (cleared, result) = patch_deployment(&api, 3, None).await;
    assert_eq!(result, OperationResult::UpdatedStatusOnly);
    assert_eq!(cleared.status.unwrap().observed_generation, None);

    // The status in one line, by server-side apply.
    let applied = Applier::new("status-writer")
        .apply_status(&api, "web", &json!({"observedGeneration": 5}))
        .await
        .unwrap();
    assert_eq!(applied.status.unwrap().observed_generation, Some(5));
}

/// What the finalizer flow's reconciler was called with.
type Calls = Arc<Mutex<Vec<&'static str>>>;

async fn finalize(
    api: &Api<ConfigMap>,
    finalizer: &str,
    calls: &Calls,
) -> Result<Action, FinalizeError> {
    let object = Arc::new(api.get("guarded").await.unwrap());
    let calls = calls.clone();
    controllerutil::finalize(api, finalizer, object, |event| async move {
        let call = match event {
            Finalizing::Apply(_) => "apply",
            Finalizing::Cleanup(_) => "cleanup",
        };
        calls.lock().unwrap().push(call);
        Ok::<_, std::io::Error>(Action::await_change())
    })
    .await
}

#[tokio::test]
async fn the_finalizer_flow_cleans_up_before_the_object_goes() {
    let (client, namespace) = namespace("cu-finalize").await;
    let api: Api<ConfigMap> = Api::namespaced(client, &namespace);
    let config_map: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "guarded"}})).unwrap();
    let created = api
        .create(&PostParams::default(), &config_map)
        .await
        .unwrap();
    let calls = Calls::default();

    let refused = finalize(&api, "cleanup", &calls).await.unwrap_err();
    assert!(
        matches!(refused, FinalizeError::InvalidName(_)),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("no domain prefix"),
        "{refused}"
    );
    let untouched = api.get("guarded").await.unwrap();
    assert_eq!(untouched.resource_version(), created.resource_version());

    finalize(&api, FINALIZER, &calls).await.unwrap();
    assert_eq!(api.get("guarded").await.unwrap().finalizers(), [FINALIZER]);
    finalize(&api, FINALIZER, &calls).await.unwrap();
    assert_eq!(*calls.lock().unwrap(), ["apply"]);

    api.delete("guarded", &DeleteParams::default())
        .await
        .unwrap();
    let deleting = api.get("guarded").await.unwrap();
    assert!(
        deleting.metadata.deletion_timestamp.is_some(),
        "the finalizer holds it"
    );
    finalize(&api, FINALIZER, &calls).await.unwrap();
    assert_eq!(*calls.lock().unwrap(), ["apply", "cleanup"]);
    assert!(
        api.get_opt("guarded").await.unwrap().is_none(),
        "gone once cleaned up"
    );
}

fn owner_error(error: CreateOrUpdateError) -> OwnerReferenceError {
    let CreateOrUpdateError::Mutate(failure) = error else {
        panic!("not the mutation's error: {error}");
    };
    *failure.downcast::<OwnerReferenceError>().unwrap()
}

#[tokio::test]
async fn refused_owners_leave_the_object_unwritten() {
    let (client, namespace) = namespace("cu-owners").await;
    let elsewhere = shared().create_namespace("cu-owners-other").await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let create = async |api: &Api<ConfigMap>, name: &str| {
        controllerutil::create_or_update(api, name, |_: &mut ConfigMap| {
            Ok::<_, std::convert::Infallible>(())
        })
        .await
        .unwrap()
        .0
    };
    let first = create(&api, "first").await;
    let second = create(&api, "second").await;
    let foreign = create(&Api::namespaced(client, &elsewhere), "foreign").await;

    let (child, _) = controllerutil::create_or_update(&api, "child", |child: &mut ConfigMap| {
        controllerutil::set_controller_reference(&first, child)
    })
    .await
    .unwrap();
    let reference = &child.owner_references()[0];
    assert_eq!(
        (
            reference.name.as_str(),
            reference.controller,
            reference.block_owner_deletion
        ),
        ("first", Some(true), Some(true))
    );

    let error = controllerutil::create_or_update(&api, "child", |child: &mut ConfigMap| {
        controllerutil::set_controller_reference(&second, child)
    })
    .await
    .unwrap_err();
    assert!(matches!(
        owner_error(error),
        OwnerReferenceError::AlreadyOwned { .. }
    ));

    let error = controllerutil::create_or_update(&api, "child", |child: &mut ConfigMap| {
        controllerutil::set_owner_reference(&foreign, child)
    })
    .await
    .unwrap_err();
    let error = owner_error(error);
    assert!(matches!(error, OwnerReferenceError::CrossNamespace { .. }));
    assert!(error.to_string().contains("foreign"), "{error}");

    let stored = api.get("child").await.unwrap();
    assert_eq!(stored.resource_version(), child.resource_version());
}

#[tokio::test]
async fn two_field_managers_share_an_object_and_force_takes_a_field_over() {
    let (_, api) = widgets("cu-apply").await;
    let sized = Widget::new(
        "w",
        WidgetSpec {
            size: Some(1),
            color: None,
        },
    );
    Applier::new("manager-a").apply(&api, &sized).await.unwrap();
    let painter = Applier::new("manager-b").without_force();
    let painted = painter
        .apply(
            &api,
            &json!({"metadata": {"name": "w"}, "spec": {"color": "red"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        painted.spec,
        WidgetSpec {
            size: Some(1),
            color: Some("red".into())
        }
    );

    let takeover = json!({"metadata": {"name": "w"}, "spec": {"color": "red", "size": 2}});
    let conflict = painter.apply(&api, &takeover).await.unwrap_err();
    assert!(is_conflict(&conflict), "{conflict}");
    assert_eq!(api.get("w").await.unwrap().spec.size, Some(1));

    let forced = Applier::new("manager-b")
        .apply(&api, &takeover)
        .await
        .unwrap();
    assert_eq!(
        forced.spec,
        WidgetSpec {
            size: Some(2),
            color: Some("red".into())
        }
    );
    let managers: Vec<_> = forced
        .managed_fields()
        .iter()
        .filter_map(|entry| entry.manager.as_deref())
        .collect();
    assert!(managers.contains(&"manager-b"), "{managers:?}");
}
