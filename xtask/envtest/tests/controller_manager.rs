//! kube-controller-manager beside the control plane (`Options::controller_manager`): a
//! Deployment gets its ReplicaSet and Pods (Pending: there is no node), and an object whose
//! owner is deleted is garbage-collected. Without it (envtest's plane), neither happens:
//! the option is what does it.
//!
//! The plane with the controller-manager is shared by this file's tests and runs only the
//! controllers they need: the deployment, replicaset and garbage-collector controllers
//! (and the token controller, which it always runs), which starts in a second or two and
//! keeps the CPU quiet beside the other tests.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, ReplicaSet};
use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, PostParams};
use kube::{Resource, ResourceExt};
use kubebuilder_envtest::{ControlPlane, ControllerManager, Options, shared};

/// How long each wait may take: the controllers act within a second or two of the write.
const TIMEOUT: Duration = Duration::from_secs(60);

/// How long the plane without the controller-manager is watched for the same effects:
/// several times what they take with it, so that their absence is not slowness.
const QUIET_PERIOD: Duration = Duration::from_secs(10);

/// The plane with the controller-manager, shared by this file's tests.
fn with_controller_manager() -> &'static ControlPlane {
    static PLANE: OnceLock<Result<ControlPlane, String>> = OnceLock::new();
    let started = PLANE.get_or_init(|| {
        ControlPlane::start_with(Options {
            controller_manager: Some(ControllerManager::only(&[
                "deployment-controller",
                "replicaset-controller",
                "garbage-collector-controller",
            ])),
            ..Options::default()
        })
        .map_err(|error| format!("{error:#}"))
    });
    match started {
        Ok(plane) => plane,
        Err(reason) => panic!("the control plane could not start: {reason}"),
    }
}

#[tokio::test]
async fn a_deployment_gets_its_replica_set_and_pending_pods() {
    let plane = with_controller_manager();
    let namespace = plane.create_namespace("kcm-deployment").await.unwrap();
    let client = plane.client().await.unwrap();
    let deployment = create_deployment(&client, &namespace, 2).await;

    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), &namespace);
    let replica_set = wait_for(plane, "the Deployment's ReplicaSet", || async {
        let listed = replica_sets.list(&ListParams::default()).await.unwrap();
        listed
            .items
            .into_iter()
            .find(|set| controlled_by(set, &deployment))
            .ok_or_else(|| "no ReplicaSet controlled by the Deployment".to_owned())
    })
    .await;
    assert_eq!(replica_set.spec.replicas, Some(2));

    let pods: Api<Pod> = Api::namespaced(client, &namespace);
    let pods = wait_for(plane, "two Pods of the ReplicaSet", || async {
        let listed = pods.list(&ListParams::default()).await.unwrap();
        let owned: Vec<Pod> = listed
            .items
            .into_iter()
            .filter(|pod| controlled_by(pod, &replica_set))
            .collect();
        if owned.len() == 2 {
            Ok(owned)
        } else {
            Err(format!("{} Pods: {:?}", owned.len(), names(&owned)))
        }
    })
    .await;
    for pod in pods {
        let status = pod.status.unwrap_or_default();
        // No scheduler and no node: created, never placed.
        assert_eq!(
            status.phase.as_deref(),
            Some("Pending"),
            "{}",
            pod.metadata.name.unwrap_or_default()
        );
        assert_eq!(pod.spec.and_then(|spec| spec.node_name), None);
    }
}

#[tokio::test]
async fn an_object_whose_owner_is_deleted_is_garbage_collected() {
    let plane = with_controller_manager();
    let namespace = plane.create_namespace("kcm-gc").await.unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(plane.client().await.unwrap(), &namespace);
    create_orphan(&config_maps).await;

    wait_for(plane, "the owned ConfigMap to be deleted", || async {
        match config_maps.get_opt("owned").await.unwrap() {
            None => Ok(()),
            Some(owned) => Err(format!(
                "still there, owned by {:?}, deleted at {:?}",
                owned.metadata.owner_references, owned.metadata.deletion_timestamp
            )),
        }
    })
    .await;
}

#[tokio::test]
async fn without_the_controller_manager_neither_happens() {
    let plane = shared();
    let namespace = plane.create_namespace("no-kcm").await.unwrap();
    let client = plane.client().await.unwrap();
    create_deployment(&client, &namespace, 2).await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    create_orphan(&config_maps).await;

    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), &namespace);
    let pods: Api<Pod> = Api::namespaced(client, &namespace);
    let quiet_until = Instant::now() + QUIET_PERIOD;
    while Instant::now() < quiet_until {
        let sets = replica_sets
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        assert!(sets.is_empty(), "ReplicaSets appeared: {:?}", names(&sets));
        let created = pods.list(&ListParams::default()).await.unwrap().items;
        assert!(created.is_empty(), "Pods appeared: {:?}", names(&created));
        assert!(
            config_maps.get_opt("owned").await.unwrap().is_some(),
            "the owned ConfigMap was deleted"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Creates Deployment `web` of `replicas` Pods.
async fn create_deployment(client: &kube::Client, namespace: &str, replicas: i32) -> Deployment {
    let labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
    let deployment = Deployment {
        metadata: ObjectMeta {
            name: Some("web".into()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "web".into(),
                        // Never pulled: no node runs the Pods.
                        image: Some("registry.invalid/web:1".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    };
    Api::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap()
}

/// Creates ConfigMap `owned`, controlled by ConfigMap `owner` (with `blockOwnerDeletion`, as
/// a controller sets its owner reference), and deletes the owner as `kubectl delete` does
/// (in the background: the owner goes at once, its dependents are the garbage collector's).
async fn create_orphan(config_maps: &Api<ConfigMap>) {
    let owner = config_maps
        .create(&PostParams::default(), &named_config_map("owner"))
        .await
        .unwrap();
    let mut owned = named_config_map("owned");
    owned.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: owner.name_any(),
        uid: owner.uid().unwrap(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    config_maps
        .create(&PostParams::default(), &owned)
        .await
        .unwrap();
    config_maps
        .delete("owner", &DeleteParams::background())
        .await
        .unwrap();
}

fn named_config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Whether `object`'s controller is `owner`.
fn controlled_by(object: &impl Resource, owner: &impl Resource) -> bool {
    object
        .meta()
        .owner_references
        .iter()
        .flatten()
        .any(|reference| {
            reference.controller == Some(true) && Some(&reference.uid) == owner.meta().uid.as_ref()
        })
}

fn names(objects: &[impl Resource]) -> Vec<String> {
    objects
        .iter()
        .map(|object| object.meta().name.clone().unwrap_or_default())
        .collect()
}

/// Polls `look` until it returns `Ok`, for at most [`TIMEOUT`]; `Err` says what it saw
/// instead, which the failure shows with the end of the controller-manager's log.
async fn wait_for<T, F, Fut>(plane: &ControlPlane, what: &str, mut look: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + TIMEOUT;
    loop {
        match look().await {
            Ok(found) => return found,
            Err(seen) if Instant::now() > deadline => panic!(
                "timed out after {TIMEOUT:?} waiting for {what}; last seen: {seen}\n\
                 kube-controller-manager's log ends with:\n{}",
                plane.component_log("kube-controller-manager", 30)
            ),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}
