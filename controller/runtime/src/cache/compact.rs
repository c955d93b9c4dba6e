//! How the cache holds an object: its JSON, decoded on each read.
//!
//! A typed Kubernetes object is mostly room for fields it does not have: k8s-openapi's
//! `Job` is 2.6 KiB before any of its strings are allocated, with no spec at all, and a
//! `Container` inside a pod template 2.1 KiB more. The same objects as JSON take what
//! they say (a tutorial CronJob about 1 KiB), so a cache of thousands of objects holds
//! JSON, as Go's informers hold `FieldsV1` as raw bytes, and readers get a freshly
//! decoded object that lives as long as they need it.

use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};

/// One cached object of kind `K`: its name and namespace (the store's key, and all that
/// kube-runtime's controller reads of it), and the whole object as JSON.
pub(crate) struct Compact<K> {
    name: Box<str>,
    namespace: Option<Box<str>>,
    /// The key as the `ObjectMeta` that `Resource::meta` lends, built the first time it is
    /// asked for and not cloned. An `ObjectMeta` is 360 bytes of fields, nearly all empty
    /// here; the cache and the controllers read the key through [`Compact::object_ref`], so
    /// the objects in a store never build one (a third of a cached Job's bytes).
    metadata: OnceLock<Box<ObjectMeta>>,
    /// Shared with the clone the reflector's store keeps of each object it is given. Text,
    /// not bytes: read with `serde_json::from_str`, as kube's client reads what the
    /// apiserver sends, so that both use one instantiation of a kind's `Deserialize`.
    json: Arc<str>,
    kind: PhantomData<fn() -> K>,
}

impl<K: Resource + Serialize> Compact<K> {
    /// `object` as the cache holds it.
    pub(crate) fn encode(object: &K) -> Result<Self, serde_json::Error> {
        let meta = object.meta();
        Ok(Self::from_json(
            meta.name.as_deref().unwrap_or_default(),
            meta.namespace.as_deref(),
            serde_json::to_string(object)?,
        ))
    }
}

impl<K> Compact<K> {
    /// The object named `name` in `namespace` whose text is `json`.
    pub(crate) fn from_json(name: &str, namespace: Option<&str>, json: String) -> Self {
        Self {
            name: name.into(),
            namespace: namespace.map(Into::into),
            metadata: OnceLock::new(),
            json: json.into(),
            kind: PhantomData,
        }
    }
}

impl<K: DeserializeOwned> Compact<K> {
    /// The object again.
    pub(crate) fn decode(&self) -> Result<K, serde_json::Error> {
        serde_json::from_str(&self.json)
    }
}

impl<K> Compact<K> {
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The store's key of the object of a kind known at run time (`dyntype`).
    pub(crate) fn object_ref_with(
        &self,
        dyntype: <Self as Resource>::DynamicType,
    ) -> ObjectRef<Self>
    where
        Self: Resource,
    {
        let mut key = ObjectRef::new_with(&self.name, dyntype);
        key.namespace = self.namespace.as_deref().map(str::to_owned);
        key
    }

    /// The same key with no JSON: what a controller is told changed (it looks the object
    /// up in the store), so that its trigger, not the stored object, builds the
    /// `ObjectMeta` kube-runtime reads the key from.
    pub(crate) fn key_only(&self) -> Self {
        Self {
            name: self.name.clone(),
            namespace: self.namespace.clone(),
            metadata: OnceLock::new(),
            json: Arc::default(),
            kind: PhantomData,
        }
    }

    fn key_metadata(&self) -> Box<ObjectMeta> {
        Box::new(ObjectMeta {
            name: Some(self.name.to_string()),
            namespace: self.namespace.as_deref().map(str::to_owned),
            ..ObjectMeta::default()
        })
    }

    /// The object's whole metadata, read from its JSON without building the rest: what a
    /// change is mapped by when only its owners matter.
    pub(crate) fn decode_metadata(&self) -> Result<ObjectMeta, serde_json::Error> {
        /// An object whose fields other than `metadata` are skipped.
        #[derive(Deserialize)]
        struct MetadataOnly {
            #[serde(default)]
            metadata: ObjectMeta,
        }
        serde_json::from_str::<MetadataOnly>(&self.json).map(|object| object.metadata)
    }
}

/// A clone does not copy a built `ObjectMeta`: the reflector stores clones of the objects
/// it was given, after reading their keys.
impl<K> Clone for Compact<K> {
    fn clone(&self) -> Self {
        Self {
            name: self.name.clone(),
            namespace: self.namespace.clone(),
            metadata: OnceLock::new(),
            json: self.json.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> Debug for Compact<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compact")
            .field("type", &std::any::type_name::<K>())
            .field("namespace", &self.namespace)
            .field("name", &self.name)
            .field("json_bytes", &self.json.len())
            .finish()
    }
}

/// Read from the wire as a `K`: kube-runtime's controller asks its objects to be
/// deserializable, though the cache builds them with [`Compact::encode`].
impl<'de, K: Resource + Serialize + DeserializeOwned> Deserialize<'de> for Compact<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = K::deserialize(deserializer)?;
        Self::encode(&object).map_err(D::Error::custom)
    }
}

impl<K: Resource> Resource for Compact<K> {
    resource_of_kind!();

    fn meta(&self) -> &ObjectMeta {
        self.metadata.get_or_init(|| self.key_metadata())
    }

    /// Edits what [`meta`](Resource::meta) lends, not the key: nothing edits a cached
    /// object.
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.metadata.get_or_init(|| self.key_metadata());
        self.metadata.get_mut().expect("initialized above")
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::{Job, JobStatus};
    use kube::ResourceExt as _;

    use super::*;

    #[test]
    fn a_compact_object_decodes_to_the_object_and_keeps_only_its_key_as_metadata() {
        let job = Job {
            metadata: ObjectMeta {
                name: Some("nightly-1".into()),
                namespace: Some("batch".into()),
                labels: Some([("app".to_owned(), "nightly".to_owned())].into()),
                ..ObjectMeta::default()
            },
            status: Some(JobStatus {
                succeeded: Some(1),
                ..JobStatus::default()
            }),
            ..Job::default()
        };
        let compact = Compact::encode(&job).unwrap();
        assert_eq!(compact.decode().unwrap(), job);
        assert_eq!(compact.name_any(), "nightly-1");
        assert_eq!(compact.namespace(), Some("batch"));
        assert!(compact.labels().is_empty(), "labels are read from the JSON");
        assert_eq!(compact.decode_metadata().unwrap(), job.metadata);
        assert!(
            compact.json.len() < 200,
            "{} bytes of JSON",
            compact.json.len()
        );
    }

    #[test]
    fn the_key_is_read_without_building_an_object_meta_and_a_clone_does_not_copy_one() {
        let job = Job {
            metadata: ObjectMeta {
                name: Some("nightly-1".into()),
                namespace: Some("batch".into()),
                ..ObjectMeta::default()
            },
            ..Job::default()
        };
        let compact = Compact::encode(&job).unwrap();
        assert_eq!(
            (compact.namespace(), compact.name()),
            (Some("batch"), "nightly-1")
        );
        assert_eq!(
            compact.object_ref_with(()),
            ObjectRef::from_obj(&compact.clone())
        );
        assert!(compact.metadata.get().is_none(), "the key alone was read");

        assert_eq!(compact.meta().name.as_deref(), Some("nightly-1"));
        assert!(compact.metadata.get().is_some());
        assert!(compact.clone().metadata.get().is_none());

        let key = compact.key_only();
        assert_eq!(key.object_ref_with(()), compact.object_ref_with(()));
        assert!(key.json.is_empty());
        // The key, the JSON's pointer and the unbuilt metadata: no inline ObjectMeta.
        assert!(
            size_of::<Compact<Job>>() <= 64,
            "{} bytes",
            size_of::<Compact<Job>>()
        );
    }
}
