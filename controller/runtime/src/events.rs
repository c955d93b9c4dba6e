//! Events about objects (controller-runtime's `mgr.GetEventRecorderFor(name)`): written
//! as events.k8s.io/v1 Events the way kube-runtime's `events::Recorder` writes them, a new
//! Event or, when the same event repeats within six minutes, a patch of its `series`.
//!
//! Unlike kube-runtime's recorder, the series are kept in a cache bounded in size, as
//! client-go's event correlator bounds its own (4096 entries): kube-runtime keeps every
//! Event of the last six minutes and scans them all on each publish, so an operator that
//! records one Event per CronJob run holds six minutes of Events per CronJob and spends
//! CPU per Event in proportion. And an object's `resourceVersion` is not part of an
//! event's identity (it is in kube-runtime's), so an event repeated while its object
//! changes still forms a series instead of a new Event each time.
//!
//! [`Recorder::normal`] and [`Recorder::warning`] record an Event about any object in one
//! call, as Go's `recorder.Event(obj, corev1.EventTypeNormal, reason, message)`;
//! [`Recorder::publish`] takes the whole [`Event`] (action, related object).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt as _};

pub use kube::runtime::events::{Event, EventType, Reporter};

/// How many series the cache keeps: client-go's `maxLruCacheEntries`.
pub const SERIES_CACHE_CAPACITY: usize = 4096;
/// How long an event may wait to repeat and still join its series (as kube-runtime and
/// client-go's events API).
const SERIES_TTL: SignedDuration = SignedDuration::from_mins(6);

/// Records Events about objects as one reporting controller. Clones share the cache.
#[derive(Clone)]
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    series: Arc<Mutex<SeriesCache>>,
}

impl Recorder {
    /// A recorder for `reporter`, keeping up to [`SERIES_CACHE_CAPACITY`] series.
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Self::with_capacity(client, reporter, SERIES_CACHE_CAPACITY)
    }

    /// A recorder keeping up to `capacity` series (at least one); the least recently
    /// published is forgotten first, and repeats after that start a new Event.
    pub fn with_capacity(client: Client, reporter: Reporter, capacity: usize) -> Self {
        Self {
            client,
            reporter,
            series: Arc::new(Mutex::new(SeriesCache {
                capacity: capacity.max(1),
                entries: HashMap::new(),
            })),
        }
    }

    /// Publishes `event` about the object `regarding`: creates an Event in its namespace
    /// (`default` for a cluster-scoped object), or patches the series of the same event
    /// published within six minutes.
    ///
    /// # Errors
    /// The apiserver's, when it refuses the Event (RBAC: `create` and `patch` on
    /// `events.events.k8s.io`, which [`kubebuilder::rbac::RUNTIME_RULES`] declares and
    /// `cargo xtask manifests` grants the manager).
    pub async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let key = SeriesKey::of(event, regarding);
        let repeated = lock(&self.series).repeat_of(&key, now);
        let namespace = regarding.namespace.as_deref().unwrap_or("default");
        let events: Api<K8sEvent> = Api::namespaced(self.client.clone(), namespace);
        let series = match repeated {
            Some(earlier) => {
                let count = earlier.count + 1;
                let patch = serde_json::json!({"series": EventSeries {
                    count,
                    last_observed_time: MicroTime(now),
                }});
                events
                    .patch(
                        &earlier.event,
                        &PatchParams::default(),
                        &Patch::Merge(&patch),
                    )
                    .await?;
                Series { count, ..earlier }
            }
            None => {
                let created = events
                    .create(
                        &PostParams::default(),
                        &self.new_event(event, regarding, now),
                    )
                    .await?;
                Series {
                    event: created.name_any(),
                    count: 1,
                    last_published: now,
                }
            }
        };
        lock(&self.series).record(
            key,
            Series {
                last_published: now,
                ..series
            },
        );
        Ok(())
    }

    /// Records a `Normal` Event about `object`: Go's `recorder.Event(object, "Normal",
    /// reason, note)`. The Event's `action` (which events.k8s.io/v1 requires and Go's
    /// recorder has no argument for) is the reason. Like Go's recorder this does not fail:
    /// Events are informational, and one the apiserver refuses is logged and dropped.
    pub async fn normal<K>(&self, object: &K, reason: &str, note: impl Into<String>)
    where
        K: Resource,
        K::DynamicType: Default,
    {
        self.record(object, EventType::Normal, reason, note.into())
            .await;
    }

    /// Records a `Warning` Event about `object`, as [`Recorder::normal`] records a
    /// `Normal` one.
    pub async fn warning<K>(&self, object: &K, reason: &str, note: impl Into<String>)
    where
        K: Resource,
        K::DynamicType: Default,
    {
        self.record(object, EventType::Warning, reason, note.into())
            .await;
    }

    async fn record<K>(&self, object: &K, type_: EventType, reason: &str, note: String)
    where
        K: Resource,
        K::DynamicType: Default,
    {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action: reason.to_owned(),
            secondary: None,
        };
        let regarding = object.object_ref(&K::DynamicType::default());
        if let Err(error) = self.publish(&event, &regarding).await {
            tracing::warn!(
                %error,
                reason,
                object = regarding.name.as_deref().unwrap_or_default(),
                "unable to record an Event"
            );
        }
    }

    /// How many series the cache holds now.
    pub fn cached_series(&self) -> usize {
        lock(&self.series).entries.len()
    }

    fn new_event(&self, event: &Event, regarding: &ObjectReference, now: Timestamp) -> K8sEvent {
        let controller = &self.reporter.controller;
        K8sEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            related: event.secondary.clone(),
            note: event.note.clone(),
            metadata: ObjectMeta {
                namespace: regarding.namespace.clone(),
                // As kube-runtime and client-go name them: unique per object and moment.
                name: Some(format!(
                    "{}.{:x}",
                    regarding.name.as_ref().unwrap_or(controller),
                    now.as_nanosecond()
                )),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| controller.clone()),
            ),
            type_: Some(
                match event.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            ..K8sEvent::default()
        }
    }
}

/// What makes two events the same: everything but the note and the time, with the
/// objects named without their `resourceVersion`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SeriesKey {
    warning: bool,
    reason: String,
    action: String,
    regarding: ObjectName,
    related: Option<ObjectName>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ObjectName {
    api_version: Option<String>,
    kind: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    uid: Option<String>,
    field_path: Option<String>,
}

impl ObjectName {
    fn of(reference: &ObjectReference) -> Self {
        Self {
            api_version: reference.api_version.clone(),
            kind: reference.kind.clone(),
            namespace: reference.namespace.clone(),
            name: reference.name.clone(),
            uid: reference.uid.clone(),
            field_path: reference.field_path.clone(),
        }
    }
}

impl SeriesKey {
    fn of(event: &Event, regarding: &ObjectReference) -> Self {
        Self {
            warning: event.type_ == EventType::Warning,
            reason: event.reason.clone(),
            action: event.action.clone(),
            regarding: ObjectName::of(regarding),
            related: event.secondary.as_ref().map(ObjectName::of),
        }
    }
}

/// The Event of each series, the least recently published dropped beyond capacity.
struct SeriesCache {
    capacity: usize,
    entries: HashMap<SeriesKey, Series>,
}

/// What a repeat needs of its series: the Event to patch and how often it was seen. Not
/// the Event itself, which is ten times larger.
#[derive(Clone, Debug)]
struct Series {
    event: String,
    count: i32,
    last_published: Timestamp,
}

impl SeriesCache {
    /// The series `key` repeats, if it was published within the TTL.
    fn repeat_of(&mut self, key: &SeriesKey, now: Timestamp) -> Option<Series> {
        match self.entries.get(key) {
            Some(series) if series.last_published + SERIES_TTL > now => Some(series.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    fn record(&mut self, key: SeriesKey, series: Series) {
        self.entries.insert(key, series);
        if self.entries.len() > self.capacity {
            // A scan of at most `capacity + 1` entries, only when full.
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, series)| series.last_published)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                self.entries.remove(&oldest);
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(name: &str, resource_version: &str) -> ObjectReference {
        ObjectReference {
            kind: Some("CronJob".into()),
            namespace: Some("ns".into()),
            name: Some(name.into()),
            resource_version: Some(resource_version.into()),
            ..ObjectReference::default()
        }
    }

    fn event() -> Event {
        Event {
            type_: EventType::Normal,
            reason: "SuccessfulCreate".into(),
            note: Some("Created job".into()),
            action: "Create".into(),
            secondary: None,
        }
    }

    fn series(at: Timestamp) -> Series {
        Series {
            event: "a.1".into(),
            count: 1,
            last_published: at,
        }
    }

    #[test]
    fn an_event_repeats_while_its_object_changes_within_the_ttl() {
        let mut cache = SeriesCache {
            capacity: 10,
            entries: HashMap::new(),
        };
        let now = Timestamp::now();
        let first = SeriesKey::of(&event(), &reference("a", "1"));
        cache.record(first, series(now));
        let later = SeriesKey::of(&event(), &reference("a", "2"));
        assert!(
            cache
                .repeat_of(&later, now + SignedDuration::from_mins(5))
                .is_some()
        );
        assert!(
            cache
                .repeat_of(&later, now + SignedDuration::from_mins(7))
                .is_none()
        );
        assert!(cache.entries.is_empty(), "an expired series is dropped");
    }

    #[test]
    fn the_least_recently_published_series_goes_first_beyond_capacity() {
        let mut cache = SeriesCache {
            capacity: 2,
            entries: HashMap::new(),
        };
        let now = Timestamp::now();
        for (offset, name) in ["a", "b", "c"].into_iter().enumerate() {
            let at = now + SignedDuration::from_secs(i64::try_from(offset).unwrap());
            cache.record(SeriesKey::of(&event(), &reference(name, "1")), series(at));
        }
        assert_eq!(cache.entries.len(), 2);
        let key = |name| SeriesKey::of(&event(), &reference(name, "1"));
        assert!(cache.repeat_of(&key("a"), now).is_none());
        assert!(cache.repeat_of(&key("b"), now).is_some());
        assert!(cache.repeat_of(&key("c"), now).is_some());
    }
}
