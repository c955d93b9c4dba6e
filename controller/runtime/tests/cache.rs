//! The manager's shared cache against the real apiserver: field index lookups as a child
//! is created, updated and deleted; cached reads scoped as `--namespace` is; and what a read
//! of an unknown index or namespace says.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{eventually, test_args};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kubebuilder_envtest::shared;
use kubebuilder_runtime::cache::{CacheError, ListOptions};
use kubebuilder_runtime::{Manager, ManagerArgs};
use serde_json::json;

/// The index of ConfigMaps by their `owner` label (as controllers index children by owner).
const OWNER_INDEX: &str = ".metadata.labels.owner";

fn owner_label(config_map: &ConfigMap) -> Vec<String> {
    config_map
        .labels()
        .get("owner")
        .cloned()
        .into_iter()
        .collect()
}

/// A manager (never started) watching only `namespace`: its cache is what the tests read.
fn manager_of(client: &kube::Client, namespace: &str) -> Manager {
    Manager::new(
        client.clone(),
        ManagerArgs {
            namespaces: vec![namespace.to_owned()],
            ..test_args()
        },
    )
}

#[tokio::test]
async fn index_lookups_follow_a_child_through_create_update_and_delete() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-cache").await.unwrap();
    let other = plane.create_namespace("rt-cache-other").await.unwrap();
    let manager = manager_of(&client, &namespace);
    let cache = manager.cache().clone();
    cache.index_field::<ConfigMap, _>(OWNER_INDEX, owner_label);
    let owned_by = |owner: &str| {
        ListOptions::default()
            .in_namespace(&namespace)
            .matching_field(OWNER_INDEX, owner)
    };
    let names = |found: Vec<std::sync::Arc<ConfigMap>>| {
        found
            .iter()
            .map(|object| object.name_any())
            .collect::<Vec<_>>()
    };
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let child: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "child", "labels": {"owner": "alpha"}}
    }))
    .unwrap();

    // Nothing yet; the first read starts the informer and waits for its list.
    assert!(
        cache
            .list::<ConfigMap>(&owned_by("alpha"))
            .await
            .unwrap()
            .is_empty()
    );

    config_maps
        .create(&PostParams::default(), &child)
        .await
        .unwrap();
    eventually(
        "the new child under alpha",
        Duration::from_secs(20),
        || async {
            (names(cache.list(&owned_by("alpha")).await.unwrap()) == ["child"]).then_some(())
        },
    )
    .await;
    let cached: Option<std::sync::Arc<ConfigMap>> =
        cache.get(Some(&namespace), "child").await.unwrap();
    assert_eq!(cached.unwrap().labels()["owner"], "alpha");

    config_maps
        .patch(
            "child",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"owner": "beta"}}})),
        )
        .await
        .unwrap();
    eventually(
        "the child moved to beta",
        Duration::from_secs(20),
        || async {
            let alpha = names(cache.list(&owned_by("alpha")).await.unwrap());
            let beta = names(cache.list(&owned_by("beta")).await.unwrap());
            (alpha.is_empty() && beta == ["child"]).then_some(())
        },
    )
    .await;

    config_maps
        .delete("child", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the child gone from the index",
        Duration::from_secs(20),
        || async {
            cache
                .list::<ConfigMap>(&owned_by("beta"))
                .await
                .unwrap()
                .is_empty()
                .then_some(())
        },
    )
    .await;
    assert!(
        cache
            .get::<ConfigMap>(Some(&namespace), "child")
            .await
            .unwrap()
            .is_none()
    );

    // Reads are scoped as --namespace is; an unknown index is an error, not an empty list.
    let outside = cache
        .list::<ConfigMap>(&ListOptions::default().in_namespace(&other))
        .await
        .unwrap_err();
    assert!(
        matches!(outside, CacheError::NamespaceNotCached { .. }),
        "{outside}"
    );
    let unknown = cache
        .list::<ConfigMap>(&ListOptions::default().matching_field("spec.nothing", "x"))
        .await
        .unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "no field index \"spec.nothing\" is registered for ConfigMap"
    );
    // Without a namespace: every watched namespace (here the one, with its root CA).
    let everything = cache
        .list::<ConfigMap>(&ListOptions::default())
        .await
        .unwrap();
    assert!(
        everything
            .iter()
            .all(|object| object.namespace().as_deref() == Some(namespace.as_str()))
    );
}

#[tokio::test]
async fn a_transform_changes_what_the_cache_keeps_after_managed_fields_are_dropped() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-cache-transform").await.unwrap();
    let manager = manager_of(&client, &namespace);
    let cache = manager.cache().clone();
    cache.transform::<ConfigMap, _>(|object| object.data = None);
    let created = create_big_config_map(&client, &namespace).await;
    assert!(created.metadata.managed_fields.is_some());
    let cached = cached_config_map(manager.cache(), &namespace).await;
    assert_eq!(cached.data, None);
    // By default, as controller-runtime's TransformStripManagedFields.
    assert_eq!(cached.metadata.managed_fields, None);
    assert_eq!(cached.labels(), &BTreeMap::new());
}

#[tokio::test]
async fn managed_fields_stay_with_cache_keep_managed_fields() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-cache-managed").await.unwrap();
    let manager = Manager::new(
        client.clone(),
        ManagerArgs {
            namespaces: vec![namespace.clone()],
            cache_keep_managed_fields: true,
            ..test_args()
        },
    );
    let created = create_big_config_map(&client, &namespace).await;
    let cached = cached_config_map(manager.cache(), &namespace).await;
    assert_eq!(
        cached.metadata.managed_fields,
        created.metadata.managed_fields
    );
    assert!(cached.data.is_some());
}

async fn create_big_config_map(client: &kube::Client, namespace: &str) -> ConfigMap {
    let config_map: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "big"}, "data": {"payload": "x".repeat(1024)}
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &config_map)
        .await
        .unwrap()
}

async fn cached_config_map(
    cache: &kubebuilder_runtime::cache::Cache,
    namespace: &str,
) -> std::sync::Arc<ConfigMap> {
    eventually("the ConfigMap cached", Duration::from_secs(20), || async {
        cache
            .get::<ConfigMap>(Some(namespace), "big")
            .await
            .unwrap()
    })
    .await
}
