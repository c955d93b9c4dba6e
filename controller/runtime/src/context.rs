//! What the runtime hands each reconcile beside its object: the controller's client, its
//! cache, an Event recorder and a server-side applier, both named after the controller.
//! Go's reconcilers embed a client and a recorder that `main.go` wires in; here the runtime
//! gives the ones that fit the controller (with `--leader-elect`, a client whose writes
//! stop the moment this replica cannot prove it leads).

use kube::api::Api;
use kube::{Client, Resource, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::apply::{Applier, ApplyError};
use crate::cache::{Cache, CacheScope};
use crate::events::{Recorder, Reporter};

/// The controller's view of the cluster, handed to each reconcile beside its object: the
/// controller's client (fenced on the leader with `--leader-elect`), the manager's cache,
/// and an Event recorder and a server-side applier named `<name>-controller`.
#[derive(Clone)]
pub struct Context {
    client: Client,
    cache: Cache,
    recorder: Recorder,
    applier: Applier,
}

impl Context {
    /// The context of the controller `name`: its Events are reported, and its applies
    /// managed, as `<name>-controller` (kubebuilder's naming).
    pub fn new(name: &str, client: Client, cache: Cache) -> Self {
        let manager = format!("{name}-controller");
        Self {
            recorder: Recorder::new(client.clone(), Reporter::from(manager.as_str())),
            applier: Applier::new(manager),
            client,
            cache,
        }
    }

    /// The controller's client (fenced on the leader with `--leader-elect`).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The manager's cache.
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// The controller's Event recorder.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// The API of kind `K` where `near` is: its namespace for a namespaced `K`, the
    /// cluster for a cluster-scoped one.
    pub fn api<K>(&self, near: &impl Resource) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope: CacheScope>,
    {
        K::Scope::api::<K>(self.client.clone(), near.meta().namespace.as_deref())
    }

    /// Applies `object` (in its own namespace) as the controller's field manager, forced
    /// (controller-runtime's `client.Apply` with `ForceOwnership`).
    ///
    /// # Errors
    /// [`ApplyError`]: no name, or the apiserver's refusal.
    pub async fn apply<K>(&self, object: &K) -> Result<K, ApplyError>
    where
        K: Resource<DynamicType = (), Scope: CacheScope> + Clone + Serialize + DeserializeOwned,
        K: std::fmt::Debug,
    {
        self.applier.apply(&self.api::<K>(object), object).await
    }

    /// Applies `status` as the status of `object`, as the controller's field manager.
    ///
    /// # Errors
    /// As [`Context::apply`].
    pub async fn apply_status<K>(
        &self,
        object: &K,
        status: &impl Serialize,
    ) -> Result<K, ApplyError>
    where
        K: Resource<DynamicType = (), Scope: CacheScope> + Clone + DeserializeOwned,
        K: std::fmt::Debug,
    {
        let name = object.name_any();
        self.applier
            .apply_status(&self.api::<K>(object), &name, status)
            .await
    }

    /// Records a `Normal` Event about `object` (Go's `recorder.Event(obj, "Normal", ...)`).
    pub async fn normal<K>(&self, object: &K, reason: &str, note: impl Into<String>)
    where
        K: Resource<DynamicType = ()>,
    {
        self.recorder.normal(object, reason, note).await;
    }

    /// Records a `Warning` Event about `object`.
    pub async fn warning<K>(&self, object: &K, reason: &str, note: impl Into<String>)
    where
        K: Resource<DynamicType = ()>,
    {
        self.recorder.warning(object, reason, note).await;
    }
}
