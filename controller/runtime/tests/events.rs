//! The runtime's event recorder against the real apiserver: a repeated event patches its
//! series, also after its object changed; beyond the cache's capacity the least recently
//! published series is forgotten and its next repeat is a new Event. `normal` and
//! `warning` record an Event about an object in one call.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference};
use k8s_openapi::api::events::v1::Event as K8sEvent;
use kube::api::{Api, ListParams, PostParams};
use kube::{Resource as _, ResourceExt as _};
use kubebuilder_envtest::shared;
use kubebuilder_runtime::events::{Event, EventType, Recorder, Reporter};
use serde_json::json;

fn created() -> Event {
    Event {
        type_: EventType::Normal,
        reason: "SuccessfulCreate".into(),
        note: Some("Created job".into()),
        action: "Create".into(),
        secondary: None,
    }
}

/// Every Event about `name`, by name: their series counts (`None`: no series).
async fn events_about(events: &Api<K8sEvent>, name: &str) -> BTreeMap<String, Option<i32>> {
    events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|event| event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .map(|event| (event.name_any(), event.series.map(|series| series.count)))
        .collect()
}

async fn config_map(client: &kube::Client, namespace: &str, name: &str) -> ObjectReference {
    let config_map: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &config_map)
        .await
        .unwrap()
        .object_ref(&())
}

#[tokio::test]
async fn a_repeated_event_patches_its_series_even_after_its_object_changed() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-events").await.unwrap();
    let events: Api<K8sEvent> = Api::namespaced(client.clone(), &namespace);
    let recorder = Recorder::new(client.clone(), Reporter::from("test-controller"));
    let regarding = config_map(&client, &namespace, "watched").await;

    recorder.publish(&created(), &regarding).await.unwrap();
    let changed = ObjectReference {
        resource_version: Some("changed".into()),
        ..regarding.clone()
    };
    recorder.publish(&created(), &changed).await.unwrap();
    recorder.publish(&created(), &changed).await.unwrap();

    let found = events_about(&events, "watched").await;
    assert_eq!(found.values().collect::<Vec<_>>(), [&Some(3)], "{found:?}");
    assert_eq!(recorder.cached_series(), 1);
}

#[tokio::test]
async fn beyond_capacity_the_oldest_series_starts_again_as_a_new_event() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-events-bounded").await.unwrap();
    let events: Api<K8sEvent> = Api::namespaced(client.clone(), &namespace);
    let recorder = Recorder::with_capacity(client.clone(), Reporter::from("test-controller"), 2);
    let mut objects = Vec::new();
    for name in ["first", "second", "third"] {
        let regarding = config_map(&client, &namespace, name).await;
        recorder.publish(&created(), &regarding).await.unwrap();
        objects.push(regarding);
    }
    assert_eq!(recorder.cached_series(), 2);

    // "first" was forgotten: a new Event; "third" is still cached: its series.
    recorder.publish(&created(), &objects[0]).await.unwrap();
    recorder.publish(&created(), &objects[2]).await.unwrap();
    let first = events_about(&events, "first").await;
    assert_eq!(
        first.values().collect::<Vec<_>>(),
        [&None, &None],
        "{first:?}"
    );
    let third = events_about(&events, "third").await;
    assert_eq!(third.values().collect::<Vec<_>>(), [&Some(2)], "{third:?}");
    assert_eq!(recorder.cached_series(), 2);
}

#[tokio::test]
async fn normal_and_warning_record_an_event_about_the_object_in_one_call() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-events-one-call").await.unwrap();
    let events: Api<K8sEvent> = Api::namespaced(client.clone(), &namespace);
    let recorder = Recorder::new(client.clone(), Reporter::from("test-controller"));
    let config_map: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "subject"}})).unwrap();
    let subject = Api::<ConfigMap>::namespaced(client.clone(), &namespace)
        .create(&PostParams::default(), &config_map)
        .await
        .unwrap();

    recorder
        .normal(&subject, "Created", "Created the subject")
        .await;
    recorder
        .warning(&subject, "Deleting", "Deleting the subject")
        .await;

    let mut recorded: Vec<_> = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|event| {
            let regarding = event.regarding.unwrap_or_default();
            (
                event.type_.unwrap_or_default(),
                event.reason.unwrap_or_default(),
                event.action.unwrap_or_default(),
                event.note.unwrap_or_default(),
                regarding.kind.unwrap_or_default(),
                regarding.uid == subject.metadata.uid,
            )
        })
        .collect();
    recorded.sort();
    let expected = |type_: &str, reason: &str, note: &str| {
        let owned = |text: &str| text.to_owned();
        (
            owned(type_),
            owned(reason),
            owned(reason),
            owned(note),
            owned("ConfigMap"),
            true,
        )
    };
    assert_eq!(
        recorded,
        [
            expected("Normal", "Created", "Created the subject"),
            expected("Warning", "Deleting", "Deleting the subject"),
        ]
    );
}
