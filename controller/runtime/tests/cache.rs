//! The manager's shared cache against the real apiserver: field index lookups as a child
//! is created, updated and deleted; cached reads scoped as `--namespace` is; and what a read
//! of an unknown index or namespace says. Per-kind watches: a label-selected kind (its
//! cache and a controller on it), a kind watched in namespaces of its own with a field
//! selector, what refuses bad options, and metadata-only reads and owners. Reads of, and a
//! controller of, a kind known only by group, version and kind, and of one the apiserver
//! does not serve.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{GROUP, Widget, WidgetSpec, eventually, test_args, widget_crd};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{GroupVersionKind, PartialObjectMeta};
use kube::runtime::controller::Action;
use kubebuilder_envtest::shared;
use kubebuilder_runtime::cache::{ByObject, ByObjectError, CacheError, ListOptions};
use kubebuilder_runtime::{Context, Manager, ManagerArgs, Reconciler};
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

/// The names of ConfigMaps a controller reconciled, in order.
#[derive(Clone, Default)]
struct Reconciled(Arc<Mutex<Vec<String>>>);

impl Reconciler<ConfigMap> for Reconciled {
    type Error = std::convert::Infallible;

    async fn reconcile(&self, object: Arc<ConfigMap>, _: &Context) -> Result<Action, Self::Error> {
        self.0.lock().unwrap().push(object.name_any());
        Ok(Action::await_change())
    }
}

impl Reconciler<Widget> for Reconciled {
    type Error = std::convert::Infallible;

    async fn reconcile(&self, object: Arc<Widget>, _: &Context) -> Result<Action, Self::Error> {
        self.0.lock().unwrap().push(object.name_any());
        Ok(Action::await_change())
    }
}

impl Reconciler<DynamicObject> for Reconciled {
    type Error = std::convert::Infallible;

    async fn reconcile(
        &self,
        object: Arc<DynamicObject>,
        _: &Context,
    ) -> Result<Action, Self::Error> {
        self.0.lock().unwrap().push(object.name_any());
        Ok(Action::await_change())
    }
}

impl Reconciled {
    fn names(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Waits until `name` has been reconciled `times` times.
    async fn wait_for(&self, name: &str, times: usize) {
        eventually(
            &format!("{name} reconciled {times} times"),
            Duration::from_secs(20),
            || async {
                let count = self.names().iter().filter(|seen| *seen == name).count();
                (count >= times).then_some(())
            },
        )
        .await;
    }
}

async fn create_labelled(client: &kube::Client, namespace: &str, name: &str, app: &str) {
    let config_map: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app": app}}
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &config_map)
        .await
        .unwrap();
}

/// The names of the ConfigMaps the cache holds.
async fn cached_names(cache: &kubebuilder_runtime::cache::Cache) -> Vec<String> {
    cache
        .list::<ConfigMap>(&ListOptions::default())
        .await
        .unwrap()
        .iter()
        .map(|object| object.name_any())
        .collect()
}

#[tokio::test]
async fn a_label_selected_kind_caches_and_reconciles_only_the_matching_objects() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-cache-labels").await.unwrap();
    // Made before the manager starts: its first list must leave them out too.
    create_labelled(&client, &namespace, "other-before", "other").await;
    create_labelled(&client, &namespace, "selected-before", "selected").await;
    let manager = manager_of(&client, &namespace);
    manager
        .cache()
        .by_object::<ConfigMap>(ByObject::default().labels("app in (selected)").unwrap())
        .unwrap();
    let cache = manager.cache().clone();
    let reconciled = Reconciled::default();
    let running = manager
        .controller_for::<ConfigMap>()
        .complete(reconciled.clone())
        .start()
        .await
        .unwrap();
    reconciled.wait_for("selected-before", 1).await;

    create_labelled(&client, &namespace, "other-after", "other").await;
    create_labelled(&client, &namespace, "selected-after", "selected").await;
    reconciled.wait_for("selected-after", 1).await;
    assert_eq!(
        cached_names(&cache).await,
        ["selected-after", "selected-before"],
        "neither the others nor the namespace's root CA ConfigMap"
    );

    // Relabelled: the apiserver tells the watch that one left the selection, one joined.
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    for (name, app) in [("selected-before", "other"), ("other-before", "selected")] {
        let labels = json!({"metadata": {"labels": {"app": app}}});
        config_maps
            .patch(name, &PatchParams::default(), &Patch::Merge(&labels))
            .await
            .unwrap();
    }
    reconciled.wait_for("other-before", 1).await;
    eventually(
        "the relabelled ones moved",
        Duration::from_secs(20),
        || async {
            (cached_names(&cache).await == ["other-before", "selected-after"]).then_some(())
        },
    )
    .await;
    running.shutdown().await.unwrap();
    assert!(
        !reconciled.names().contains(&"other-after".to_owned()),
        "{:?}",
        reconciled.names()
    );
}

#[tokio::test]
async fn a_kind_watched_in_namespaces_of_its_own_with_a_field_selector() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let flagged = plane.create_namespace("rt-cache-flagged").await.unwrap();
    let own = plane.create_namespace("rt-cache-own").await.unwrap();
    for namespace in [&flagged, &own] {
        for name in ["kept", "dropped"] {
            create_labelled(&client, namespace, name, "any").await;
        }
    }
    let manager = manager_of(&client, &flagged);
    let cache = manager.cache().clone();
    let options = ByObject::default()
        .namespaces([own.as_str()])
        .unwrap()
        .fields("metadata.name=kept")
        .unwrap();
    cache.by_object::<ConfigMap>(options).unwrap();

    let everything = cache
        .list::<ConfigMap>(&ListOptions::default())
        .await
        .unwrap();
    let found: Vec<_> = everything
        .iter()
        .map(|object| (object.namespace().unwrap(), object.name_any()))
        .collect();
    assert_eq!(found, [(own.clone(), "kept".to_owned())]);
    assert!(
        cache
            .get::<ConfigMap>(Some(&own), "dropped")
            .await
            .unwrap()
            .is_none()
    );
    // --namespace does not apply to this kind: its namespace is not cached.
    let outside = cache
        .get::<ConfigMap>(Some(&flagged), "kept")
        .await
        .unwrap_err();
    assert_eq!(
        outside,
        CacheError::NamespaceNotCached {
            namespace: flagged.clone(),
            watched: vec![own.clone()],
        }
    );
}

#[tokio::test]
async fn bad_options_are_refused_when_given_and_nothing_is_watched() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-cache-bad").await.unwrap();
    let manager = manager_of(&client, &namespace);
    let cache = manager.cache();
    assert_eq!(
        ByObject::default()
            .labels("app in (web")
            .unwrap_err()
            .to_string(),
        "the label selector \"app in (web\" is invalid: a `(` with no `)`"
    );
    assert_eq!(
        ByObject::default()
            .fields("metadata.name")
            .unwrap_err()
            .to_string(),
        "the field selector \"metadata.name\" is invalid: \"metadata.name\" is not key=value, key==value or key!=value"
    );
    let cluster_scoped = ByObject::default()
        .namespaces([namespace.as_str()])
        .unwrap();
    assert_eq!(
        cache.by_object::<Namespace>(cluster_scoped).unwrap_err(),
        ByObjectError::ClusterScoped {
            kind: "Namespace".into()
        }
    );
    // Refused, so Namespaces keep no options: these are the first and are taken.
    cache
        .by_object::<Namespace>(ByObject::default().labels("absent").unwrap())
        .unwrap();
    assert!(
        cache
            .list::<Namespace>(&ListOptions::default())
            .await
            .unwrap()
            .is_empty(),
        "no namespace has the label `absent`"
    );
}

#[tokio::test]
async fn metadata_only_reads_and_owners_watched_by_their_metadata() {
    let plane = shared();
    plane.install_crds(&[widget_crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-cache-metadata").await.unwrap();
    let widgets: Api<Widget> = Api::namespaced(client.clone(), &namespace);
    let reconciled = Reconciled::default();
    let manager = manager_of(&client, &namespace);
    let cache = manager.cache().clone();
    let running = manager
        .controller_for::<Widget>()
        .owns::<PartialObjectMeta<ConfigMap>>()
        .complete(reconciled.clone())
        .start()
        .await
        .unwrap();
    let widget = widgets
        .create(
            &PostParams::default(),
            &Widget::new("w", WidgetSpec::default()),
        )
        .await
        .unwrap();
    reconciled.wait_for("w", 1).await;

    let child: ConfigMap = serde_json::from_value(json!({
        "metadata": {
            "name": "child",
            "labels": {"app": "w"},
            "ownerReferences": [{
                "apiVersion": format!("{GROUP}/v1"), "kind": "Widget", "name": "w",
                "uid": widget.metadata.uid, "controller": true,
            }],
        },
        "data": {"payload": "x".repeat(1024)},
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), &namespace)
        .create(&PostParams::default(), &child)
        .await
        .unwrap();
    reconciled.wait_for("w", 2).await;

    let cached: Arc<PartialObjectMeta<ConfigMap>> = cache
        .get(Some(&namespace), "child")
        .await
        .unwrap()
        .expect("the child is cached");
    assert_eq!(cached.labels()["app"], "w");
    // What the apiserver sends a metadata watch; a full object's kind would be ConfigMap.
    assert_eq!(
        cached.types.as_ref().map(|types| types.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    running.shutdown().await.unwrap();
}

/// A Widget named `name` in `namespace` and a ConfigMap it controls, labelled `app=owned`.
async fn widget_with_child(client: &kube::Client, namespace: &str, name: &str) {
    let widget = create_widget(client, namespace, name).await;
    create_child(client, namespace, &widget).await;
}

/// [`widget_with_child`] for a running controller: the child comes once the Widget is
/// reconciled, so that its event cannot merge into the Widget's first reconcile (a queue
/// holds a key once, however many events name it) and makes a second one of its own.
async fn widget_then_child(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    reconciled: &Reconciled,
) {
    let widget = create_widget(client, namespace, name).await;
    reconciled.wait_for(name, 1).await;
    create_child(client, namespace, &widget).await;
}

async fn create_widget(client: &kube::Client, namespace: &str, name: &str) -> Widget {
    Api::<Widget>::namespaced(client.clone(), namespace)
        .create(
            &PostParams::default(),
            &Widget::new(name, WidgetSpec::default()),
        )
        .await
        .unwrap()
}

/// A ConfigMap `widget` controls, labelled `app=owned`.
async fn create_child(client: &kube::Client, namespace: &str, widget: &Widget) {
    let name = widget.name_any();
    let child: ConfigMap = serde_json::from_value(json!({"metadata": {
        "name": format!("{name}-child"),
        "labels": {"app": "owned"},
        "ownerReferences": [{
            "apiVersion": format!("{GROUP}/v1"), "kind": "Widget", "name": name,
            "uid": widget.metadata.uid, "controller": true,
        }],
    }}))
    .unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &child)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_controller_across_all_namespaces_owns_a_kind_watched_in_several() {
    let plane = shared();
    plane.install_crds(&[widget_crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let first = plane.create_namespace("rt-cache-all-a").await.unwrap();
    let second = plane.create_namespace("rt-cache-all-b").await.unwrap();
    // No --namespace: Widgets are watched everywhere, ConfigMaps in the two namespaces.
    let manager = Manager::new(client.clone(), test_args());
    let options = ByObject::default()
        .namespaces([first.as_str(), second.as_str()])
        .unwrap()
        .labels("app=owned")
        .unwrap();
    manager.cache().by_object::<ConfigMap>(options).unwrap();
    let reconciled = Reconciled::default();
    let running = manager
        .controller_for::<Widget>()
        .owns::<ConfigMap>()
        .complete(reconciled.clone())
        .start()
        .await
        .unwrap();
    // Named after their namespaces: the controller sees every test's Widgets.
    for namespace in [&first, &second] {
        widget_then_child(&client, namespace, namespace, &reconciled).await;
    }
    // Each namespace's child reaches its owner: a reconcile of its own.
    for namespace in [&first, &second] {
        reconciled.wait_for(namespace, 2).await;
    }
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_controller_in_a_namespace_the_owned_kind_is_not_watched_in_sees_none_of_it() {
    let plane = shared();
    plane.install_crds(&[widget_crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let unwatched = plane.create_namespace("rt-cache-scope-x").await.unwrap();
    let watched = plane.create_namespace("rt-cache-scope-y").await.unwrap();
    let manager = Manager::new(
        client.clone(),
        ManagerArgs {
            namespaces: vec![unwatched.clone(), watched.clone()],
            ..test_args()
        },
    );
    let only_watched = ByObject::default().namespaces([watched.as_str()]).unwrap();
    manager
        .cache()
        .by_object::<ConfigMap>(only_watched)
        .unwrap();
    let reconciled = Reconciled::default();
    let running = manager
        .controller_for::<Widget>()
        .owns::<ConfigMap>()
        .complete(reconciled.clone())
        .start()
        .await
        .unwrap();
    widget_then_child(&client, &unwatched, "x", &reconciled).await;
    widget_then_child(&client, &watched, "y", &reconciled).await;
    reconciled.wait_for("y", 2).await;
    running.shutdown().await.unwrap();
    assert_eq!(
        reconciled
            .names()
            .iter()
            .filter(|name| *name == "x")
            .count(),
        1,
        "x's child, in a namespace ConfigMaps are not watched in, never reached it"
    );
}

#[tokio::test]
async fn a_kind_known_only_at_run_time_is_read_from_the_cache_and_one_not_served_is_an_error() {
    let plane = shared();
    plane.install_crds(&[widget_crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-cache-dynamic").await.unwrap();
    let manager = manager_of(&client, &namespace);
    let cache = manager.cache();
    let spec = WidgetSpec {
        size: Some(3),
        ..WidgetSpec::default()
    };
    Api::<Widget>::namespaced(client.clone(), &namespace)
        .create(&PostParams::default(), &Widget::new("w", spec))
        .await
        .unwrap();
    let widget = GroupVersionKind::gvk(GROUP, "v1", "Widget");

    let cached = eventually("the widget cached", Duration::from_secs(20), || async {
        cache
            .get_dynamic(&widget, Some(&namespace), "w")
            .await
            .unwrap()
    })
    .await;
    assert_eq!(cached.data["spec"]["size"], 3);
    let listed = cache
        .list_dynamic(&widget, &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|object| object.name_any())
            .collect::<Vec<_>>(),
        ["w"]
    );
    // --namespace applies as to typed kinds.
    let outside = cache
        .get_dynamic(&widget, Some("default"), "w")
        .await
        .unwrap_err();
    assert!(
        matches!(outside, CacheError::NamespaceNotCached { .. }),
        "{outside}"
    );

    let gadget = GroupVersionKind::gvk(GROUP, "v1", "Gadget");
    let not_served = cache
        .get_dynamic(&gadget, Some(&namespace), "g")
        .await
        .unwrap_err();
    assert_eq!(
        not_served.to_string(),
        format!(
            "the apiserver does not serve {GROUP}/v1, Kind=Gadget: Error from discovery: \
             Missing Kind: GroupVersionKind {{ group: \"{GROUP}\", version: \"v1\", kind: \"Gadget\" }}"
        )
    );
    // Options of a dynamic kind: discovery is asked when they are given.
    let refused = manager_of(&client, &namespace)
        .cache()
        .by_object_dynamic(&gadget, ByObject::default())
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ByObjectError::Kind(CacheError::NotServed { .. })),
        "{refused}"
    );
    let mut picked = Widget::new("picked", WidgetSpec::default());
    picked.metadata.labels = Some([("app".to_owned(), "picked".to_owned())].into());
    Api::<Widget>::namespaced(client.clone(), &namespace)
        .create(&PostParams::default(), &picked)
        .await
        .unwrap();
    let selective = manager_of(&client, &namespace);
    let only_picked = ByObject::default().labels("app=picked").unwrap();
    selective
        .cache()
        .by_object_dynamic(&widget, only_picked)
        .await
        .unwrap();
    let listed = selective
        .cache()
        .list_dynamic(&widget, &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|object| object.name_any())
            .collect::<Vec<_>>(),
        ["picked"]
    );

    let no_group = GroupVersionKind::gvk("nothing.example.com", "v1", "Thing");
    let not_served = cache
        .list_dynamic(&no_group, &ListOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&not_served, CacheError::NotServed { kind, .. } if kind == "nothing.example.com/v1, Kind=Thing"),
        "{not_served}"
    );
}

#[tokio::test]
async fn a_controller_of_a_kind_known_only_at_run_time_reconciles_it_and_its_owned_objects() {
    let plane = shared();
    plane.install_crds(&[widget_crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-dynamic-ctl").await.unwrap();
    widget_with_child(&client, &namespace, "w").await;
    let reconciled = Reconciled::default();
    let running = manager_of(&client, &namespace)
        .controller_for_dynamic(&GroupVersionKind::gvk(GROUP, "v1", "Widget"))
        .owns::<ConfigMap>()
        .complete(reconciled.clone())
        .start()
        .await
        .unwrap();
    reconciled.wait_for("w", 1).await;
    // A change to the ConfigMap it controls reconciles the Widget, found by its owner
    // reference to the kind discovery named.
    let changed = json!({"data": {"changed": "yes"}});
    Api::<ConfigMap>::namespaced(client.clone(), &namespace)
        .patch("w-child", &PatchParams::default(), &Patch::Merge(changed))
        .await
        .unwrap();
    reconciled.wait_for("w", 2).await;
    running.shutdown().await.unwrap();

    // A kind the apiserver does not serve: the manager stops at start-up, naming it.
    let stopped = manager_of(&client, &namespace)
        .controller_for_dynamic(&GroupVersionKind::gvk(GROUP, "v1", "Gadget"))
        .complete(Reconciled::default())
        .start()
        .await
        .unwrap()
        .run_until(std::future::pending());
    let stopped = tokio::time::timeout(Duration::from_secs(20), stopped)
        .await
        .expect("the manager stops at once");
    let Err(kubebuilder_runtime::ManagerError::RunnableFailed(message)) = stopped else {
        panic!("{stopped:?}");
    };
    assert!(
        message.starts_with(&format!(
            "the controller \"gadget\" cannot start: the apiserver does not serve {GROUP}/v1, Kind=Gadget"
        )),
        "{message}"
    );
}

#[tokio::test]
async fn a_controller_across_all_namespaces_of_a_kind_watched_in_several_stops_the_manager() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let first = plane.create_namespace("rt-cache-several-a").await.unwrap();
    let second = plane.create_namespace("rt-cache-several-b").await.unwrap();
    let manager = Manager::new(client.clone(), test_args());
    let options = ByObject::default()
        .namespaces([first.as_str(), second.as_str()])
        .unwrap();
    manager.cache().by_object::<ConfigMap>(options).unwrap();
    let running = manager
        .controller_for::<ConfigMap>()
        .complete(Reconciled::default())
        .start()
        .await
        .unwrap();
    // Its store would hold one namespace's ConfigMaps only: the controller does not start.
    let stopped = tokio::time::timeout(
        Duration::from_secs(20),
        running.run_until(std::future::pending()),
    )
    .await
    .expect("the manager stops at once");
    assert!(
        matches!(
            stopped,
            Err(kubebuilder_runtime::ManagerError::ControllersStopped)
        ),
        "{stopped:?}"
    );
}
