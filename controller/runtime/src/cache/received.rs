//! An object as a watch delivers it, before the cache keeps it as a [`Compact`]: its
//! metadata decoded, its other fields as JSON.
//!
//! The informers watch `Received<K>`, not `K`, so that no kind's `Deserialize` is
//! instantiated for the watch: kube decodes a watch event's object through serde's buffered
//! `Content` (the event's `type` may come after it), which would make a controller crate
//! compile a second decoder of every kind it watches (a pod template's is most of a
//! controller crate's code) beside the one that reads the cache ([`Compact::decode`]).
//! `serde_json::Value` and `ObjectMeta` are decoded by the runtime's own code, once for all
//! kinds.

use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::Compact;

/// One object of kind `K` as the apiserver sent it.
#[derive(Clone, Debug)]
pub(crate) struct Received<K> {
    metadata: ObjectMeta,
    /// Its fields but `metadata`.
    fields: Map<String, Value>,
    kind: PhantomData<fn() -> K>,
}

impl<K> Received<K> {
    /// The object as JSON text: what the cache keeps.
    pub(crate) fn to_json(&self) -> Result<String, serde_json::Error> {
        join(&self.metadata, &self.fields)
    }

    /// The object as a `K`, read from its text as the cache reads it.
    pub(crate) fn decode(&self) -> Result<K, serde_json::Error>
    where
        K: DeserializeOwned,
    {
        serde_json::from_str(&self.to_json()?)
    }

    /// Edits the object as a `K` (a cache's transform).
    pub(crate) fn edit(&mut self, edit: impl FnOnce(&mut K)) -> Result<(), serde_json::Error>
    where
        K: Serialize + DeserializeOwned,
    {
        let mut object = self.decode()?;
        edit(&mut object);
        // Through text, as the cache encodes: no other `Serialize` instantiation of `K`.
        let text = serde_json::to_string(&object)?;
        (self.metadata, self.fields) = split(serde_json::from_str(&text)?)?;
        Ok(())
    }

    /// The cache's form of the object.
    pub(crate) fn compact(&self) -> Result<Compact<K>, serde_json::Error> {
        Ok(Compact::from_json(
            self.metadata.name.as_deref().unwrap_or_default(),
            self.metadata.namespace.as_deref(),
            self.to_json()?,
        ))
    }
}

/// An object's metadata and its other fields.
fn split(object: Value) -> Result<(ObjectMeta, Map<String, Value>), serde_json::Error> {
    let Value::Object(mut fields) = object else {
        return Err(serde_json::Error::custom("an object is not a JSON object"));
    };
    let metadata = match fields.remove("metadata") {
        Some(metadata) => serde_json::from_value(metadata)?,
        None => ObjectMeta::default(),
    };
    Ok((metadata, fields))
}

/// The text of an object of `metadata` and `fields`.
fn join(metadata: &ObjectMeta, fields: &Map<String, Value>) -> Result<String, serde_json::Error> {
    #[derive(Serialize)]
    struct Joined<'a> {
        metadata: &'a ObjectMeta,
        #[serde(flatten)]
        fields: &'a Map<String, Value>,
    }
    serde_json::to_string(&Joined { metadata, fields })
}

impl<'de, K> Deserialize<'de> for Received<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (metadata, fields) =
            split(Value::deserialize(deserializer)?).map_err(D::Error::custom)?;
        Ok(Self {
            metadata,
            fields,
            kind: PhantomData,
        })
    }
}

impl<K: Resource> Resource for Received<K> {
    resource_of_kind!();

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::{Job, JobSpec};
    use kube::ResourceExt as _;

    use super::*;

    fn job() -> Job {
        Job {
            metadata: ObjectMeta {
                name: Some("nightly-1".into()),
                namespace: Some("batch".into()),
                labels: Some([("app".to_owned(), "nightly".to_owned())].into()),
                ..ObjectMeta::default()
            },
            spec: Some(JobSpec {
                parallelism: Some(2),
                ..JobSpec::default()
            }),
            ..Job::default()
        }
    }

    fn received(object: &Job) -> Received<Job> {
        serde_json::from_str(&serde_json::to_string(object).unwrap()).unwrap()
    }

    #[test]
    fn a_received_object_decodes_and_compacts_to_the_object_sent() {
        let job = job();
        let received = received(&job);
        assert_eq!(received.name_any(), "nightly-1");
        assert_eq!(received.labels()["app"], "nightly");
        assert_eq!(received.decode().unwrap(), job);
        let compact = received.compact().unwrap();
        assert_eq!(
            (compact.namespace(), compact.name()),
            (Some("batch"), "nightly-1")
        );
        assert_eq!(compact.decode().unwrap(), job);
    }

    #[test]
    fn an_edit_is_made_on_the_kind_and_kept() {
        let mut received = received(&job());
        received
            .edit(|job| job.spec.as_mut().unwrap().parallelism = Some(5))
            .unwrap();
        received.meta_mut().labels = None;
        let job = received.decode().unwrap();
        assert_eq!(job.spec.unwrap().parallelism, Some(5));
        assert_eq!(job.metadata.labels, None);
    }

    #[test]
    fn what_is_not_an_object_is_refused() {
        let error = serde_json::from_str::<Received<Job>>("[1]").unwrap_err();
        assert!(error.to_string().contains("not a JSON object"), "{error}");
    }
}
