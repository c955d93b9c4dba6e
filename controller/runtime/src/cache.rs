//! The manager's shared cache (controller-runtime's `cache.Cache`): one watch per kind and
//! namespace scope for the whole manager, whatever number of controllers reads or watches
//! that kind, with a cached reader ([`Cache::get`], [`Cache::list`]) and field indexes
//! ([`Cache::index_field`], [`ListOptions::matching_field`]).
//!
//! Each (kind, scope) is an *informer*: a kube-runtime watcher feeding a reflector
//! [`Store`], the kind's field indexes, and the trigger streams of the controllers that
//! watch the kind. The store holds each object as JSON, about half of a typed object's
//! memory: a read decodes the objects it returns, and what a reader gets
//! is its own. The watch decodes only each object's metadata (the rest stays JSON), and
//! every typed decode in the runtime reads text (`serde_json::from_str`), as kube's client
//! does: a kind's `Deserialize` (a pod template's is most of a controller crate's code) is
//! instantiated for one reader, not one per form of JSON. An informer starts on first use (a controller built on it, or a read) and
//! runs until the manager stops. Scopes follow `--namespace`: one informer per
//! namespace given, or one for the whole cluster (always for cluster-scoped kinds).
//!
//! Triggers are sent after the store and the indexes hold the change, so a reconcile
//! started by a child's event reads that child from the cache. A controller that
//! subscribes late (a new leadership term) first gets every cached object.
//!
//! What an informer keeps of each object can be changed before it starts with
//! [`Cache::transform`] (drop what no reader needs). `metadata.managedFields` are dropped
//! from every object unless the manager runs with `--cache-keep-managed-fields`: they
//! are most of a small object's memory (each entry a tree of field names), and a
//! reconciler that applies server-side does not read them.
//!
//! What an informer watches of a kind can be narrowed before it starts with
//! [`Cache::by_object`]: a label selector and a field selector (the apiserver filters the
//! watch, so objects that do not match cost the process nothing) and namespaces of the
//! kind's own instead of `--namespace`'s.
//!
//! A kind's metadata alone is cached as `kube::core::PartialObjectMeta<K>`, a kind of its
//! own here: kube asks the apiserver for metadata only when listing and watching it, so
//! [`Cache::get`]`::<PartialObjectMeta<Secret>>` and a controller that owns or watches
//! `PartialObjectMeta<Secret>` never receive a Secret's data (controller-runtime's
//! `OnlyMetadata` and `WatchesMetadata`).
//!
//! A kind with no Rust type (a CRD known by its group, version and kind at run time) is
//! read as `DynamicObject`s with [`Cache::get_dynamic`] and [`Cache::list_dynamic`]: the
//! first read asks the apiserver's discovery for the kind, so one it does not serve is an
//! error ([`CacheError::NotServed`]), not an empty cache.
//!
//! A synced cache is current only while it is connected: [`Cache::connected`] reports the
//! informers whose last request to the apiserver failed or has waited too long for an
//! answer (the apiserver down, permission to watch revoked), and an apiserver that says it
//! is not ready (its etcd down: watches stay open then, but nothing can be written). The
//! controllers' readiness checks show it on `/readyz` until both are back.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt as _};
use http::{Request, StatusCode};
use http_body_util::BodyExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::Api;
use kube::client::Body;
use kube::core::{
    ApiResource, ClusterResourceScope, DynamicObject, GroupVersionKind, NamespaceResourceScope,
    Selector, SelectorExt as _,
};
use kube::discovery::Scope as DiscoveredScope;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::reflector::{ObjectRef, Store, store::Writer};
use kube::runtime::watcher::{self, Event, watcher};
use kube::{Client, Resource, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

/// The items of `Resource` that a cache's form of an object of kind `K` (`Compact<K>`,
/// `Received<K>`) takes from `K`: all but its metadata. A `PartialObjectMeta` kind stays
/// one, watched through the metadata API.
macro_rules! resource_of_kind {
    () => {
        type DynamicType = K::DynamicType;
        type Scope = K::Scope;

        fn kind(dyntype: &K::DynamicType) -> ::std::borrow::Cow<'_, str> {
            K::kind(dyntype)
        }

        fn group(dyntype: &K::DynamicType) -> ::std::borrow::Cow<'_, str> {
            K::group(dyntype)
        }

        fn version(dyntype: &K::DynamicType) -> ::std::borrow::Cow<'_, str> {
            K::version(dyntype)
        }

        fn api_version(dyntype: &K::DynamicType) -> ::std::borrow::Cow<'_, str> {
            K::api_version(dyntype)
        }

        fn plural(dyntype: &K::DynamicType) -> ::std::borrow::Cow<'_, str> {
            K::plural(dyntype)
        }

        fn metadata_api() -> bool {
            K::metadata_api()
        }

        fn url_path(dyntype: &K::DynamicType, namespace: Option<&str>) -> String {
            K::url_path(dyntype, namespace)
        }
    };
}

mod by_object;
mod compact;
mod received;

pub use self::by_object::{ByObject, ByObjectError};
pub(crate) use self::compact::Compact;
use self::received::Received;

/// How long a read waits for an informer's first list before it fails with
/// [`CacheError::NotSynced`]: long enough for a start-up, short enough to surface a watch
/// that keeps failing (no permission to list the kind, say).
pub const READ_SYNC_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an informer's request may wait for the apiserver's answer before the cache
/// counts as disconnected: a watch is answered at once (its events come later), so only a
/// stuck apiserver (its etcd down) takes this long; short gaps, such as a watch renewed at
/// its timeout, are not reported.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the apiserver may take to answer `/readyz` for [`Cache::connected`].
const READYZ_TIMEOUT: Duration = Duration::from_secs(2);
/// How long an answer of the apiserver's `/readyz` stands: however often the manager's own
/// probes are polled, the apiserver is asked at most this often.
const READYZ_REUSE: Duration = Duration::from_secs(1);

/// The bounds of a kind the cache holds.
pub trait CachedKind:
    Resource<DynamicType = (), Scope: CacheScope>
    + Clone
    + Serialize
    + DeserializeOwned
    + Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> CachedKind for K where
    K: Resource<DynamicType = (), Scope: CacheScope>
        + Clone
        + Serialize
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static
{
}

/// The bounds of a kind the cache watches and a controller reconciles: every
/// [`CachedKind`], and `DynamicObject`, of a kind known at run time
/// ([`Manager::controller_for_dynamic`](crate::Manager::controller_for_dynamic)).
pub trait WatchedKind:
    Resource<DynamicType: Clone + Eq + Hash + Debug + Unpin + Send + Sync + 'static>
    + Clone
    + Serialize
    + DeserializeOwned
    + Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> WatchedKind for K where
    K: Resource<DynamicType: Clone + Eq + Hash + Debug + Unpin + Send + Sync + 'static>
        + Clone
        + Serialize
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static
{
}

/// The scopes of kinds the cache can watch: namespaced kinds (per `--namespace`, or all
/// namespaces) and cluster-scoped ones (always the whole cluster).
pub trait CacheScope: 'static {
    /// Whether objects of this scope live in namespaces.
    const NAMESPACED: bool;

    /// The API of `K` in `namespace` (`None`: everywhere).
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>;
}

impl CacheScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::all(client),
        }
    }
}

impl CacheScope for ClusterResourceScope {
    const NAMESPACED: bool = false;

    fn api<K>(client: Client, _: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client)
    }
}

/// What an index extractor returns for an object: the values it is found under.
type Extractor<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;
/// The store's key of an object of kind `K`.
type StoreKey<K> = ObjectRef<Compact<K>>;
/// Changes each object before it is cached.
type Transform<K> = Arc<dyn Fn(&mut K) + Send + Sync>;
/// The API a kind is watched through in a namespace (`None`: everywhere).
type WatchApi<K> = fn(Client, Option<&str>, &<K as Resource>::DynamicType) -> Api<Received<K>>;

/// Why a read from the cache failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    /// The informer has not finished its first list (within [`READ_SYNC_TIMEOUT`]).
    #[error("{}", .last_error.clone().unwrap_or_else(|| format!("the cache of {kind} has not synced yet")))]
    NotSynced {
        /// The kind read (`CronJob`).
        kind: String,
        /// The error the watch last reported, if any: why it has not synced.
        last_error: Option<String>,
    },
    /// The namespace is outside `--namespace`: nothing of it is cached.
    #[error("namespace {namespace:?} is not cached (the manager watches only {watched:?})")]
    NamespaceNotCached {
        /// The namespace read; empty for a read across all namespaces.
        namespace: String,
        /// The namespaces the manager watches (`--namespace`).
        watched: Vec<String>,
    },
    /// [`ListOptions::matching_field`] names an index nobody registered.
    #[error("no field index {index:?} is registered for {kind}")]
    NoSuchIndex {
        /// The kind listed.
        kind: String,
        /// The index name given to [`ListOptions::matching_field`].
        index: String,
    },
    /// A kind read by its group, version and kind ([`Cache::get_dynamic`]) that the
    /// apiserver does not serve (its CRD not installed, a typo): nothing is watched.
    #[error("the apiserver does not serve {kind}: {error}")]
    NotServed {
        /// `group/version, Kind=kind`.
        kind: String,
        /// What discovery said.
        error: String,
    },
    /// A cached object's JSON does not decode as its kind: the kind's `Serialize` writes
    /// what its `Deserialize` refuses.
    #[error("the cached {kind} {key} does not decode: {error}")]
    Undecodable {
        /// The kind read.
        kind: String,
        /// `namespace/name` of the object.
        key: String,
        /// What the decoder said.
        error: String,
    },
}

/// The object `compact` holds, or why it does not decode.
pub(crate) fn decode<K: CachedKind>(compact: &Compact<K>) -> Result<K, CacheError> {
    decode_kind(compact, &K::kind(&()))
}

/// The object `compact` holds, of the kind named `kind`, or why it does not decode.
pub(crate) fn decode_kind<K: DeserializeOwned>(
    compact: &Compact<K>,
    kind: &str,
) -> Result<K, CacheError> {
    compact
        .decode()
        .map_err(|error| undecodable(compact, kind, &error))
}

/// The metadata of the object `compact` holds, or why it does not decode.
pub(crate) fn decode_metadata<K: CachedKind>(
    compact: &Compact<K>,
) -> Result<ObjectMeta, CacheError> {
    decode_metadata_of(compact, &K::kind(&()))
}

/// [`decode_metadata`] of an object of the kind named `kind`.
pub(crate) fn decode_metadata_of<K>(
    compact: &Compact<K>,
    kind: &str,
) -> Result<ObjectMeta, CacheError> {
    compact
        .decode_metadata()
        .map_err(|error| undecodable(compact, kind, &error))
}

fn undecodable<K>(compact: &Compact<K>, kind: &str, error: &serde_json::Error) -> CacheError {
    CacheError::Undecodable {
        kind: kind.to_owned(),
        key: format!(
            "{}/{}",
            compact.namespace().unwrap_or_default(),
            compact.name()
        ),
        error: error.to_string(),
    }
}

/// The manager's cache. Clones share it.
#[derive(Clone)]
pub struct Cache {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    /// `--namespace`; empty for the whole cluster.
    namespaces: Arc<[String]>,
    managed_fields: ManagedFields,
    /// `TypeId` of `K` → `Arc<KindCache<K>>`.
    kinds: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    /// The kinds read by group, version and kind, once discovery found them served.
    dynamic_kinds: Mutex<HashMap<GroupVersionKind, Arc<KindCache<DynamicObject>>>>,
    /// The connection of every informer started, for [`Cache::connected`].
    links: Mutex<Vec<Arc<Link>>>,
    /// The apiserver's last answer to `/readyz`, and when it came; one question at a time.
    apiserver_ready: tokio::sync::Mutex<Option<(Instant, Result<(), String>)>>,
    stop: CancellationToken,
    /// Stops every informer when the last handle goes.
    _stop_on_drop: DropGuard,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("namespaces", &self.inner.namespaces)
            .finish_non_exhaustive()
    }
}

/// What to read with [`Cache::list`]: controller-runtime's `client.ListOption`s.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    namespace: Option<String>,
    field: Option<(String, String)>,
    labels: Option<Selector>,
}

impl ListOptions {
    /// Only objects in `namespace` (`client.InNamespace`).
    #[must_use]
    pub fn in_namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.to_owned());
        self
    }

    /// Only objects the index `index` finds under `value` (`client.MatchingFields`).
    #[must_use]
    pub fn matching_field(mut self, index: &str, value: &str) -> Self {
        self.field = Some((index.to_owned(), value.to_owned()));
        self
    }

    /// Only objects whose labels match `selector` (`client.MatchingLabelsSelector`).
    #[must_use]
    pub fn matching_labels(mut self, selector: Selector) -> Self {
        self.labels = Some(selector);
        self
    }
}

/// Whether cached objects keep `metadata.managedFields`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ManagedFields {
    Dropped,
    Kept,
}

impl ManagedFields {
    pub(crate) fn kept_if(keep: bool) -> Self {
        if keep { Self::Kept } else { Self::Dropped }
    }
}

impl Cache {
    /// A cache reading through `client`, scoped to `namespaces` (all when empty).
    pub(crate) fn new(
        client: Client,
        namespaces: Arc<[String]>,
        managed_fields: ManagedFields,
    ) -> Self {
        let stop = CancellationToken::new();
        Self {
            inner: Arc::new(Inner {
                client,
                namespaces,
                managed_fields,
                kinds: Mutex::new(HashMap::new()),
                dynamic_kinds: Mutex::new(HashMap::new()),
                links: Mutex::new(Vec::new()),
                apiserver_ready: tokio::sync::Mutex::new(None),
                _stop_on_drop: stop.clone().drop_guard(),
                stop,
            }),
        }
    }

    /// Stops every informer (at manager shutdown).
    pub(crate) fn stop(&self) {
        self.inner.stop.cancel();
    }

    /// Whether the cache is connected: every informer started had its last request to the
    /// apiserver answered with success (or waiting for less than [`ANSWER_TIMEOUT`]), and
    /// the apiserver's `/readyz` passes (asked at most once a second). The error names each
    /// informer that is not connected, and why the apiserver is not ready.
    pub async fn connected(&self) -> Result<(), String> {
        let now = Instant::now();
        let mut failures: Vec<String> = lock(&self.inner.links)
            .iter()
            .filter_map(|link| link.check(now).err())
            .collect();
        if let Err(why) = self.apiserver_ready().await {
            failures.push(why);
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("; "))
        }
    }

    /// The apiserver's verdict on itself, reused for [`READYZ_REUSE`].
    async fn apiserver_ready(&self) -> Result<(), String> {
        let mut last = self.inner.apiserver_ready.lock().await;
        if let Some((at, verdict)) = &*last
            && at.elapsed() < READYZ_REUSE
        {
            return verdict.clone();
        }
        let verdict = tokio::time::timeout(READYZ_TIMEOUT, apiserver_readyz(&self.inner.client))
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "the apiserver did not answer /readyz within {} s",
                    READYZ_TIMEOUT.as_secs()
                ))
            });
        *last = Some((Instant::now(), verdict.clone()));
        verdict
    }

    /// A new informer's link, registered for [`Cache::connected`].
    fn link<K: WatchedKind>(&self, kind: &str, namespace: Option<&str>) -> Arc<Link> {
        // `PartialObjectMeta<K>` is named as `K` is: say which of the two watches it is.
        let watch = if K::metadata_api() {
            "the metadata watch"
        } else {
            "the watch"
        };
        let what = match namespace {
            Some(namespace) => format!("{watch} of {kind} in {namespace:?}"),
            None => format!("{watch} of {kind}"),
        };
        let link = Arc::new(Link::new(what));
        lock(&self.inner.links).push(link.clone());
        link
    }

    /// Indexes `K` by the values `extract` returns for each object, under `index`
    /// (controller-runtime's `IndexField`; the tutorial's index is
    /// `.metadata.controller`). Look objects up with [`ListOptions::matching_field`].
    ///
    /// # Panics
    /// When `K` already has an index of that name, or its informer has started: both are
    /// programming errors (register indexes while setting up the manager).
    pub fn index_field<K, F>(&self, index: &str, extract: F)
    where
        K: CachedKind,
        F: Fn(&K) -> Vec<String> + Send + Sync + 'static,
    {
        let kind = self.kind::<K>();
        let mut settings = kind.settings_before_start(index);
        let previous = settings.indexes.insert(index.to_owned(), Arc::new(extract));
        assert!(
            previous.is_none(),
            "the field index {index:?} of {} is registered twice",
            K::kind(&())
        );
    }

    /// Changes every object of `K` before it is cached (e.g. drops what no reader needs),
    /// after its `managedFields` have been dropped; the reader, the indexes and the
    /// controllers all see the transformed object.
    ///
    /// # Panics
    /// When `K` already has a transform or its informer has started.
    pub fn transform<K, F>(&self, transform: F)
    where
        K: CachedKind,
        F: Fn(&mut K) + Send + Sync + 'static,
    {
        let kind = self.kind::<K>();
        let mut settings = kind.settings_before_start("transform");
        assert!(
            settings.transform.is_none(),
            "{} has a cache transform already",
            K::kind(&())
        );
        settings.transform = Some(Arc::new(transform));
    }

    /// Watches `K` as `options` say (controller-runtime's `cache.Options.ByObject`): only
    /// the objects its label and field selectors match, in its namespaces rather than
    /// `--namespace`'s. Reads of `K` ([`Cache::get`], [`Cache::list`]) and the controllers
    /// that reconcile, own or watch `K` see only those objects.
    ///
    /// A controller scoped to a namespace (`--namespace`) that `K` is not watched in
    /// sees no object of `K` there (and a warning says so in the log when it starts). A
    /// controller across all namespaces (no `--namespace`) owns or watches `K` in each
    /// of its namespaces; it cannot reconcile `K` itself when `K` is watched in several
    /// (no one store holds them all): that controller panics as it starts, saying so, and
    /// the manager stops with
    /// [`ManagerError::ControllersStopped`](crate::ManagerError::ControllersStopped).
    ///
    /// # Errors
    /// [`ByObjectError::ClusterScoped`] when `options` names namespaces and `K` is
    /// cluster-scoped.
    ///
    /// # Panics
    /// When `K` has options already, or its informer has started.
    pub fn by_object<K: CachedKind>(&self, options: ByObject) -> Result<(), ByObjectError> {
        self.kind::<K>().set_options(options)
    }

    /// [`Cache::by_object`] for a kind known only at run time (see
    /// [`Cache::get_dynamic`]), asking discovery for the kind now: while the manager is
    /// set up, a kind the apiserver does not serve stops it from starting.
    ///
    /// # Errors
    /// [`ByObjectError::Kind`] with [`CacheError::NotServed`] when the apiserver does not
    /// serve the kind, and [`ByObjectError::ClusterScoped`] as for [`Cache::by_object`].
    ///
    /// # Panics
    /// As [`Cache::by_object`].
    pub async fn by_object_dynamic(
        &self,
        kind: &GroupVersionKind,
        options: ByObject,
    ) -> Result<(), ByObjectError> {
        self.dynamic_kind(kind).await?.set_options(options)
    }

    /// The cached object `namespace/name` (`None` for a cluster-scoped kind), once the
    /// informer has synced; `Ok(None)` when it does not exist.
    pub async fn get<K: CachedKind>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<K>>, CacheError> {
        self.kind::<K>().get(self, namespace, name).await
    }

    /// The cached objects `options` select, sorted by namespace and name, once the
    /// informers involved have synced. Without a namespace, every cached namespace.
    pub async fn list<K: CachedKind>(
        &self,
        options: &ListOptions,
    ) -> Result<Vec<Arc<K>>, CacheError> {
        self.kind::<K>().list(self, options).await
    }

    /// [`Cache::get`] of a kind known only at run time by its group, version and kind
    /// (`GroupVersionKind::gvk("example.com", "v1", "Widget")`: a CRD with no Rust type;
    /// controller-runtime's reads of `unstructured.Unstructured`). The first read of a kind
    /// asks the apiserver's discovery for it; its informers follow `--namespace`.
    ///
    /// # Errors
    /// [`CacheError::NotServed`] when the apiserver does not serve the kind, and the
    /// errors of [`Cache::get`].
    pub async fn get_dynamic(
        &self,
        kind: &GroupVersionKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<DynamicObject>>, CacheError> {
        self.dynamic_kind(kind)
            .await?
            .get(self, namespace, name)
            .await
    }

    /// [`Cache::list`] of a kind known only at run time; see [`Cache::get_dynamic`].
    ///
    /// # Errors
    /// [`CacheError::NotServed`] when the apiserver does not serve the kind, and the
    /// errors of [`Cache::list`].
    pub async fn list_dynamic(
        &self,
        kind: &GroupVersionKind,
        options: &ListOptions,
    ) -> Result<Vec<Arc<DynamicObject>>, CacheError> {
        self.dynamic_kind(kind).await?.list(self, options).await
    }

    /// The cache of the kind `K`.
    pub(crate) fn kind<K: CachedKind>(&self) -> Arc<KindCache<K>> {
        let mut kinds = lock(&self.inner.kinds);
        let entry = kinds
            .entry(TypeId::of::<K>())
            .or_insert_with(|| Arc::new(KindCache::new(KindInfo::<K>::typed())));
        entry
            .clone()
            .downcast()
            .expect("the cache entry of a TypeId holds that type")
    }

    /// The kind `kind`, asking discovery whether the apiserver serves it the first time.
    pub(crate) async fn dynamic_kind(
        &self,
        kind: &GroupVersionKind,
    ) -> Result<Arc<KindCache<DynamicObject>>, CacheError> {
        if let Some(known) = lock(&self.inner.dynamic_kinds).get(kind) {
            return Ok(known.clone());
        }
        let (resource, capabilities) = kube::discovery::pinned_kind(&self.inner.client, kind)
            .await
            .map_err(|error| CacheError::NotServed {
                kind: format!("{}/{}, Kind={}", kind.group, kind.version, kind.kind),
                error: error.to_string(),
            })?;
        let namespaced = capabilities.scope == DiscoveredScope::Namespaced;
        // Two first reads at once both ask; the first answer stays.
        let mut kinds = lock(&self.inner.dynamic_kinds);
        let entry = kinds
            .entry(kind.clone())
            .or_insert_with(|| Arc::new(KindCache::new(KindInfo::dynamic(resource, namespaced))));
        Ok(entry.clone())
    }
}

/// Whether `K` lives in namespaces.
fn is_namespaced<K: CachedKind>() -> bool {
    <K::Scope as CacheScope>::NAMESPACED
}

/// The namespaces `informers` watch; empty when one watches them all.
fn watched_namespaces<K: WatchedKind>(informers: &[Arc<Informer<K>>]) -> Vec<String> {
    informers
        .iter()
        .map(|informer| informer.namespace.clone())
        .collect::<Option<_>>()
        .unwrap_or_default()
}

/// What the informers of a kind know of it besides its Rust type: all of it for a
/// [`CachedKind`], given at run time for a `DynamicObject`.
pub(crate) struct KindInfo<K: Resource> {
    pub(crate) dyntype: K::DynamicType,
    /// The kind's name, for messages (`CronJob`).
    pub(crate) name: String,
    namespaced: bool,
    api: WatchApi<K>,
}

impl<K: CachedKind> KindInfo<K> {
    pub(crate) fn typed() -> Self {
        Self {
            dyntype: (),
            name: K::kind(&()).into_owned(),
            namespaced: is_namespaced::<K>(),
            api: |client, namespace, ()| K::Scope::api::<Received<K>>(client, namespace),
        }
    }
}

impl KindInfo<DynamicObject> {
    fn dynamic(resource: ApiResource, namespaced: bool) -> Self {
        Self {
            name: resource.kind.clone(),
            dyntype: resource,
            namespaced,
            api: |client, namespace, resource| match namespace {
                Some(namespace) => Api::namespaced_with(client, namespace, resource),
                None => Api::all_with(client, resource),
            },
        }
    }
}

/// One kind: its settings until its informers start, then its informers.
pub(crate) struct KindCache<K: WatchedKind> {
    info: Arc<KindInfo<K>>,
    settings: Mutex<KindSettings<K>>,
    informers: OnceLock<Vec<Arc<Informer<K>>>>,
}

struct KindSettings<K> {
    indexes: BTreeMap<String, Extractor<K>>,
    transform: Option<Transform<K>>,
    by_object: Option<ByObject>,
}

impl<K> KindSettings<K> {
    /// The namespaces to watch the kind in, one informer each; `None` for the whole
    /// cluster.
    fn scopes(&self, namespaced: bool, manager_namespaces: &[String]) -> Vec<Option<String>> {
        let own_namespaces = self
            .by_object
            .as_ref()
            .and_then(|options| options.namespaces.as_deref());
        let namespaces = own_namespaces.unwrap_or(manager_namespaces);
        if namespaces.is_empty() || !namespaced {
            vec![None]
        } else {
            namespaces.iter().cloned().map(Some).collect()
        }
    }

    /// The watch's selectors.
    fn watcher_config(&self) -> watcher::Config {
        let mut config = watcher::Config::default();
        if let Some(options) = &self.by_object {
            config.label_selector.clone_from(&options.labels);
            config.field_selector.clone_from(&options.fields);
        }
        config
    }
}

impl<K: WatchedKind> KindCache<K> {
    fn new(info: KindInfo<K>) -> Self {
        Self {
            info: Arc::new(info),
            settings: Mutex::new(KindSettings {
                indexes: BTreeMap::new(),
                transform: None,
                by_object: None,
            }),
            informers: OnceLock::new(),
        }
    }

    /// Watches the kind as `options` say (see [`Cache::by_object`]).
    fn set_options(&self, options: ByObject) -> Result<(), ByObjectError> {
        if options.namespaces.is_some() && !self.info.namespaced {
            return Err(ByObjectError::ClusterScoped {
                kind: self.info.name.clone(),
            });
        }
        let mut settings = self.settings_before_start("the watch options");
        assert!(
            settings.by_object.is_none(),
            "{} has watch options already",
            self.info.name
        );
        settings.by_object = Some(options);
        Ok(())
    }

    fn settings_before_start(&self, what: &str) -> MutexGuard<'_, KindSettings<K>> {
        assert!(
            self.informers.get().is_none(),
            "{what} of {}: the cache of that kind has started; configure it before the manager starts",
            self.info.name
        );
        lock(&self.settings)
    }

    /// What the cache knows of the kind.
    pub(crate) fn info(&self) -> &Arc<KindInfo<K>> {
        &self.info
    }

    /// The store of the kind in one scope (what a controller built on the cache reads):
    /// empty when the kind is not watched there.
    ///
    /// # Panics
    /// When the scope is every namespace and the kind is watched in several namespaces
    /// (see [`Cache::by_object`]): no one store holds them all.
    pub(crate) fn store(&self, cache: &Cache, namespace: Option<&str>) -> Store<Compact<K>> {
        match self.informers_in_scope(cache, namespace).as_slice() {
            [informer] => informer.store.clone(),
            [] => Writer::<Compact<K>>::new(self.info.dyntype.clone()).as_reader(),
            several => panic!(
                "a controller across all namespaces cannot reconcile {}: the cache watches it in {} namespaces ({:?}), each in a store of its own; run the manager with --namespace",
                self.info.name,
                several.len(),
                watched_namespaces(several)
            ),
        }
    }

    /// Every change to the kind in one scope, after the cache holds it; first every cached
    /// object when the informers have synced already. Nothing, ever, when the kind is not
    /// watched in the scope.
    pub(crate) fn subscribe(
        &self,
        cache: &Cache,
        namespace: Option<&str>,
    ) -> impl Stream<Item = ObjectChange<K>> + Send + 'static + use<K> {
        let mut streams: Vec<_> = self
            .informers_in_scope(cache, namespace)
            .iter()
            .map(|informer| informer.subscribe().boxed())
            .collect();
        if streams.is_empty() {
            // A controller whose triggers end stops: with no informer, none ever come.
            streams.push(futures::stream::pending().boxed());
        }
        futures::stream::select_all(streams)
    }

    /// The informers, one per scope, started on first use.
    fn informers(&self, cache: &Cache) -> &[Arc<Informer<K>>] {
        self.informers.get_or_init(|| {
            let settings = lock(&self.settings);
            settings
                .scopes(self.info.namespaced, &cache.inner.namespaces)
                .into_iter()
                .map(|namespace| Informer::start(cache, self.info.clone(), namespace, &settings))
                .collect()
        })
    }

    /// The cached object `namespace/name`, once its informer has synced.
    async fn get(
        &self,
        cache: &Cache,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<K>>, CacheError> {
        let informer = self.informer_for(cache, namespace)?;
        informer.wait_synced().await?;
        let mut key = ObjectRef::<Compact<K>>::new_with(name, self.info.dyntype.clone());
        key.namespace = namespace
            .filter(|_| self.info.namespaced)
            .map(str::to_owned);
        informer
            .store
            .get(&key)
            .map(|compact| decode_kind(&compact, &self.info.name).map(Arc::new))
            .transpose()
    }

    /// The cached objects `options` select, sorted by namespace and name.
    async fn list(&self, cache: &Cache, options: &ListOptions) -> Result<Vec<Arc<K>>, CacheError> {
        let informers = match &options.namespace {
            Some(namespace) => vec![self.informer_for(cache, Some(namespace))?],
            None => self.informers(cache).to_vec(),
        };
        let mut found = Vec::new();
        for informer in informers {
            informer.wait_synced().await?;
            found.extend(informer.select(options)?);
        }
        found.sort_by_key(|object| (object.namespace(), object.name_any()));
        Ok(found)
    }

    /// The informers holding the objects of a controller's scope: the one of its
    /// namespace, or every one for a scope across all namespaces; none (with a warning)
    /// when the kind is watched only in other namespaces (see [`Cache::by_object`]).
    fn informers_in_scope(&self, cache: &Cache, namespace: Option<&str>) -> Vec<Arc<Informer<K>>> {
        let informers = self.informers(cache).to_vec();
        let Some(namespace) = namespace.filter(|_| self.info.namespaced) else {
            return informers;
        };
        let in_scope: Vec<_> = informers
            .iter()
            .filter(|informer| informer.covers(namespace))
            .cloned()
            .collect();
        if in_scope.is_empty() {
            tracing::warn!(
                kind = %self.info.name,
                namespace,
                watched = ?watched_namespaces(&informers),
                "a controller in this namespace sees no object of this kind: the cache watches it only in other namespaces"
            );
        }
        in_scope
    }

    /// The informer holding objects of `namespace`, starting the kind's informers.
    fn informer_for(
        &self,
        cache: &Cache,
        namespace: Option<&str>,
    ) -> Result<Arc<Informer<K>>, CacheError> {
        let informers = self.informers(cache);
        if !self.info.namespaced {
            return Ok(informers[0].clone());
        }
        informers
            .iter()
            .find(|informer| {
                informer.namespace.is_none() || informer.namespace.as_deref() == namespace
            })
            .cloned()
            .ok_or_else(|| CacheError::NamespaceNotCached {
                namespace: namespace.unwrap_or_default().to_owned(),
                watched: watched_namespaces(informers),
            })
    }
}

/// What an informer changes in each object before caching it.
struct Trim<K> {
    /// The kind's name, for messages.
    kind: String,
    managed_fields: ManagedFields,
    transform: Option<Transform<K>>,
}

impl<K: WatchedKind> Trim<K> {
    fn apply(&self, object: &mut Received<K>) {
        if self.managed_fields == ManagedFields::Dropped {
            object.meta_mut().managed_fields = None;
        }
        if let Some(transform) = &self.transform
            && let Err(error) = object.edit(|object| transform(object))
        {
            // Kept as received: a read of it reports that it does not decode.
            tracing::error!(kind = %self.kind, namespace = ?object.namespace(), name = %object.name_any(), %error, "not transformed: the object does not decode");
        }
    }
}

/// One watch of one kind in one scope, and what it feeds.
struct Informer<K: WatchedKind> {
    info: Arc<KindInfo<K>>,
    namespace: Option<String>,
    store: Store<Compact<K>>,
    extractors: Arc<BTreeMap<String, Extractor<K>>>,
    state: Mutex<InformerState<K>>,
    /// Opened once the first list is in the store and the indexes, under `state`'s lock:
    /// what reads wait for, and what `subscribe` asks. Not the store's own
    /// `wait_until_ready`: of several tasks waiting on one store, it wakes only the last to
    /// poll (kube-runtime keeps a single waker), so concurrent reconciles reading a kind
    /// before its first list would sleep out [`READ_SYNC_TIMEOUT`].
    synced: SyncGate,
}

struct InformerState<K: WatchedKind> {
    /// Index name → value → the objects found under it. A `Vec`, not a set: a value
    /// names few objects (a CronJob's Jobs), and a set of one takes four slots.
    indexes: HashMap<String, HashMap<String, Vec<StoreKey<K>>>>,
    subscribers: Vec<mpsc::UnboundedSender<ObjectChange<K>>>,
    /// The watch's latest error, cleared by a complete list.
    last_error: Option<String>,
}

impl<K: WatchedKind> Informer<K> {
    /// Starts the watch of the kind `info` describes in `namespace` (`None`: everywhere),
    /// as its `settings` say.
    fn start(
        cache: &Cache,
        info: Arc<KindInfo<K>>,
        namespace: Option<String>,
        settings: &KindSettings<K>,
    ) -> Arc<Self> {
        let writer = Writer::new(info.dyntype.clone());
        let store = writer.as_reader();
        let link = cache.link::<K>(&info.name, namespace.as_deref());
        let trim = Trim {
            kind: info.name.clone(),
            managed_fields: cache.inner.managed_fields,
            transform: settings.transform.clone(),
        };
        let client = link.observe(cache.inner.client.clone());
        let api = (info.api)(client, namespace.as_deref(), &info.dyntype);
        let informer = Arc::new(Self {
            info,
            namespace,
            store,
            extractors: Arc::new(settings.indexes.clone()),
            state: Mutex::new(InformerState {
                indexes: HashMap::new(),
                subscribers: Vec::new(),
                last_error: None,
            }),
            synced: SyncGate::default(),
        });
        // An expired watch (410 Gone) is the protocol asking for a relist, which the watcher
        // starts at once: not a failure to back off from. Left in, the relist would wait out
        // the back-off an outage has grown (up to 30 s) after the apiserver is back.
        let events = watcher(api, settings.watcher_config())
            .filter(|event| std::future::ready(!is_expired(event)))
            .default_backoff()
            .modify(move |object| trim.apply(object));
        let stop = cache.inner.stop.clone();
        tokio::spawn(informer.clone().pump(events, writer, link, stop));
        informer
    }

    /// Whether this informer holds the objects of `namespace`.
    fn covers(&self, namespace: &str) -> bool {
        self.namespace.as_deref().is_none_or(|own| own == namespace)
    }

    /// Applies the watch's events until `stop`.
    async fn pump(
        self: Arc<Self>,
        events: impl Stream<Item = Result<Event<Received<K>>, watcher::Error>> + Send,
        mut writer: Writer<Compact<K>>,
        link: Arc<Link>,
        stop: CancellationToken,
    ) {
        let mut events = std::pin::pin!(events);
        loop {
            let event = tokio::select! {
                () = stop.cancelled() => return,
                event = events.next() => event,
            };
            match event {
                Some(Ok(event)) => {
                    // An event is proof that the watch works, whatever failed before.
                    link.delivered();
                    self.apply(&mut writer, event);
                }
                Some(Err(error)) => {
                    tracing::warn!(kind = %self.info.name, namespace = ?self.namespace, %error, "watch failed; retrying");
                    // Also an error inside an answered watch (its stream ended badly).
                    link.failed(error.to_string());
                    lock(&self.state).last_error = Some(error.to_string());
                }
                None => return,
            }
        }
    }

    /// The store first, then the indexes, then the triggers.
    fn apply(&self, writer: &mut Writer<Compact<K>>, event: Event<Received<K>>) {
        match event {
            Event::Apply(object) => {
                let Some(compact) = self.encode(&object) else {
                    return;
                };
                let key = compact.object_ref_with(self.info.dyntype.clone());
                let before = self.store.get(&key);
                let old = self.indexed_version(before.as_deref());
                let new = self.indexed_version(Some(&compact));
                writer.apply_watcher_event(&Event::Apply(compact));
                let mut state = lock(&self.state);
                state.reindex(&self.extractors, &key, old.as_ref(), new.as_ref());
                if let Some(stored) = self.store.get(&key) {
                    state.dispatch(&ObjectChange::updated(before, stored));
                }
            }
            Event::Delete(object) => {
                let Some(compact) = self.encode(&object) else {
                    return;
                };
                let key = compact.object_ref_with(self.info.dyntype.clone());
                let old = self.indexed_version(self.store.get(&key).as_deref());
                writer.apply_watcher_event(&Event::Delete(compact.clone()));
                let mut state = lock(&self.state);
                state.reindex(&self.extractors, &key, old.as_ref(), None);
                state.dispatch(&ObjectChange::deleted(Arc::new(compact)));
            }
            Event::InitApply(object) => {
                if let Some(compact) = self.encode(&object) {
                    writer.apply_watcher_event(&Event::InitApply(compact));
                }
            }
            Event::InitDone => {
                // What a relist replaces: the versions its changes are told against.
                let mut before: HashMap<StoreKey<K>, Arc<Compact<K>>> = self
                    .store
                    .state()
                    .into_iter()
                    .map(|object| (object.object_ref_with(self.info.dyntype.clone()), object))
                    .collect();
                writer.apply_watcher_event(&Event::InitDone);
                let objects = self.store.state();
                let mut state = lock(&self.state);
                state.last_error = None;
                state.indexes.clear();
                if !self.extractors.is_empty() {
                    for compact in &objects {
                        let key = compact.object_ref_with(self.info.dyntype.clone());
                        let object = self.decode_logged(compact);
                        state.reindex(&self.extractors, &key, None, object.as_ref());
                    }
                }
                for object in objects {
                    let old = before.remove(&object.object_ref_with(self.info.dyntype.clone()));
                    state.dispatch(&ObjectChange::updated(old, object));
                }
                self.synced.open();
            }
            Event::Init => writer.apply_watcher_event(&Event::Init),
        }
    }

    /// The cached version of an object, decoded for the index values it is found under:
    /// only when the kind has indexes.
    fn indexed_version(&self, cached: Option<&Compact<K>>) -> Option<K> {
        if self.extractors.is_empty() {
            return None;
        }
        self.decode_logged(cached?)
    }

    fn subscribe(&self) -> impl Stream<Item = ObjectChange<K>> + Send + 'static + use<K> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut state = lock(&self.state);
        // Under the lock the pump dispatches with: nothing is missed, at worst repeated.
        if self.synced.is_open() {
            for object in self.store.state() {
                let _ = sender.send(ObjectChange::updated(None, object));
            }
        }
        state.subscribers.push(sender);
        futures::stream::unfold(receiver, |mut receiver| async move {
            let object = receiver.recv().await?;
            Some((object, receiver))
        })
    }

    async fn wait_synced(&self) -> Result<(), CacheError> {
        if self.synced.wait(READ_SYNC_TIMEOUT).await {
            return Ok(());
        }
        Err(CacheError::NotSynced {
            kind: self.info.name.clone(),
            last_error: lock(&self.state).last_error.clone(),
        })
    }

    /// The objects of this scope that `options` select.
    fn select(&self, options: &ListOptions) -> Result<Vec<Arc<K>>, CacheError> {
        let candidates = match &options.field {
            None => self.store.state(),
            Some((index, value)) => {
                let state = lock(&self.state);
                if !self.extractors.contains_key(index) {
                    return Err(CacheError::NoSuchIndex {
                        kind: self.info.name.clone(),
                        index: index.clone(),
                    });
                }
                state
                    .indexes
                    .get(index)
                    .and_then(|values| values.get(value))
                    .into_iter()
                    .flatten()
                    .filter_map(|key| self.store.get(key))
                    .collect()
            }
        };
        let mut selected = Vec::new();
        let in_namespace = |compact: &Arc<Compact<K>>| {
            options
                .namespace
                .as_ref()
                .is_none_or(|namespace| compact.namespace() == Some(namespace.as_str()))
        };
        for compact in candidates.into_iter().filter(in_namespace) {
            let object = decode_kind(&compact, &self.info.name)?;
            let labelled = options
                .labels
                .as_ref()
                .is_none_or(|selector| selector.matches(object.labels()));
            if labelled {
                selected.push(Arc::new(object));
            }
        }
        Ok(selected)
    }

    /// `object` as the store holds it; `None`, after an error in the log, for an object
    /// whose metadata does not encode (not cached: a reader that needs it would find it
    /// missing).
    fn encode(&self, object: &Received<K>) -> Option<Compact<K>> {
        object
            .compact()
            .inspect_err(|error| {
                tracing::error!(kind = %self.info.name, namespace = ?object.namespace(), name = %object.name_any(), %error, "not cached: the object does not encode as JSON");
            })
            .ok()
    }

    /// The object `compact` holds; `None`, after an error in the log, when it does not
    /// decode.
    fn decode_logged(&self, compact: &Compact<K>) -> Option<K> {
        decode_kind(compact, &self.info.name)
            .inspect_err(|error| tracing::error!(%error, "skipped a cached object"))
            .ok()
    }
}

impl<K: WatchedKind> InformerState<K> {
    /// Moves `key` from the index values of `old` to those of `new`.
    fn reindex(
        &mut self,
        extractors: &BTreeMap<String, Extractor<K>>,
        key: &StoreKey<K>,
        old: Option<&K>,
        new: Option<&K>,
    ) {
        for (index, extract) in extractors {
            let values = self.indexes.entry(index.clone()).or_default();
            for value in old.map(|old| extract(old)).unwrap_or_default() {
                if let Some(keys) = values.get_mut(&value) {
                    keys.retain(|found| found != key);
                    if keys.is_empty() {
                        values.remove(&value);
                    }
                }
            }
            for value in new.map(|new| extract(new)).unwrap_or_default() {
                // Room for one: `push` on an empty Vec would make room for four.
                let keys = values.entry(value).or_insert_with(|| Vec::with_capacity(1));
                if !keys.contains(key) {
                    keys.push(key.clone());
                }
            }
        }
    }

    /// Sends `change` to every subscriber still listening.
    fn dispatch(&mut self, change: &ObjectChange<K>) {
        self.subscribers
            .retain(|subscriber| subscriber.send(change.clone()).is_ok());
    }
}

/// One change to a cached object, as the controllers watching its kind are told: the
/// object as the cache holds it now (as it was last, when deleted) and the version the
/// cache held before it (none for a new object, nor for the objects a controller is given
/// when it starts), for the predicates that compare the two.
pub(crate) struct ObjectChange<K> {
    pub(crate) old: Option<Arc<Compact<K>>>,
    pub(crate) new: Arc<Compact<K>>,
    pub(crate) deleted: bool,
}

impl<K> ObjectChange<K> {
    fn updated(old: Option<Arc<Compact<K>>>, new: Arc<Compact<K>>) -> Self {
        Self {
            old,
            new,
            deleted: false,
        }
    }

    fn deleted(last: Arc<Compact<K>>) -> Self {
        Self {
            old: None,
            new: last,
            deleted: true,
        }
    }
}

impl<K> Clone for ObjectChange<K> {
    fn clone(&self) -> Self {
        Self {
            old: self.old.clone(),
            new: self.new.clone(),
            deleted: self.deleted,
        }
    }
}

/// Opened once, waited for by any number of tasks (each woken when it opens).
#[derive(Debug)]
struct SyncGate(tokio::sync::watch::Sender<bool>);

impl Default for SyncGate {
    fn default() -> Self {
        Self(tokio::sync::watch::Sender::new(false))
    }
}

impl SyncGate {
    fn open(&self) {
        self.0.send_replace(true);
    }

    fn is_open(&self) -> bool {
        *self.0.borrow()
    }

    /// Whether the gate opened within `timeout`.
    async fn wait(&self, timeout: Duration) -> bool {
        let mut opened = self.0.subscribe();
        let wait = opened.wait_for(|open| *open);
        matches!(tokio::time::timeout(timeout, wait).await, Ok(Ok(_)))
    }
}

/// Whether the watch of `event` has expired: its resource version is too old (410 Gone).
fn is_expired<K>(event: &Result<Event<K>, watcher::Error>) -> bool {
    matches!(event, Err(watcher::Error::WatchError(status)) if status.code == 410)
}

/// The apiserver's `/readyz`: ready, or why not (its failing checks, such as etcd's). A
/// refusal (401, 403: a cluster that does not let every user read `/readyz`) proves that
/// the apiserver answers, which is all that can be known then.
async fn apiserver_readyz(client: &Client) -> Result<(), String> {
    let request = Request::get("/readyz")
        .body(Body::from(Vec::new()))
        .map_err(|error| error.to_string())?;
    let response = client
        .send(request)
        .await
        .map_err(|error| format!("the apiserver is unreachable: {error}"))?;
    let status = response.status();
    if status.is_success() || [StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN].contains(&status) {
        return Ok(());
    }
    let body = response
        .into_body()
        .collect()
        .await
        .map(|body| body.to_bytes());
    let failing: Vec<String> = body
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
        .lines()
        .filter(|line| line.starts_with("[-]"))
        .map(str::to_owned)
        .collect();
    Err(format!(
        "the apiserver is not ready ({status}){}",
        if failing.is_empty() {
            String::new()
        } else {
            format!(": {}", failing.join(", "))
        }
    ))
}

/// What the apiserver last did with one informer's requests (its lists and watches, one
/// at a time): whether the informer is connected.
struct Link {
    /// The informer, for messages.
    what: String,
    state: Mutex<LinkState>,
}

#[derive(Default)]
struct LinkState {
    /// When the request waiting for its answer was sent.
    waiting_since: Option<Instant>,
    /// Why the latest answered request failed, if it did.
    failure: Option<String>,
}

impl Link {
    fn new(what: String) -> Self {
        Self {
            what,
            state: Mutex::new(LinkState::default()),
        }
    }

    /// `client`, reporting each request's fate here.
    fn observe(self: &Arc<Self>, client: Client) -> Client {
        let link = self.clone();
        crate::rest_client::wrap(client, move |client, request| {
            let link = link.clone();
            async move {
                link.sent(Instant::now());
                let result = client.send(request).await;
                link.answered(match &result {
                    Ok(response) if response.status().is_success() => None,
                    Ok(response) => Some(format!("the apiserver answered {}", response.status())),
                    Err(error) => Some(error.to_string()),
                });
                result
            }
        })
    }

    fn sent(&self, at: Instant) {
        lock(&self.state).waiting_since.get_or_insert(at);
    }

    /// A request answered: success clears any failure, anything else is one.
    fn answered(&self, failure: Option<String>) {
        let mut state = lock(&self.state);
        state.waiting_since = None;
        state.failure = failure;
    }

    fn failed(&self, why: String) {
        lock(&self.state).failure = Some(why);
    }

    fn delivered(&self) {
        lock(&self.state).failure = None;
    }

    fn check(&self, now: Instant) -> Result<(), String> {
        let state = lock(&self.state);
        if let Some(failure) = &state.failure {
            return Err(format!("{} is failing: {failure}", self.what));
        }
        match state.waiting_since {
            Some(since) if now.saturating_duration_since(since) > ANSWER_TIMEOUT => Err(format!(
                "{} has waited {} s for the apiserver",
                self.what,
                now.saturating_duration_since(since).as_secs()
            )),
            _ => Ok(()),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a paused clock, time moves only when every task waits on a timer: waiters
    /// woken by `open` finish with the clock where it was; waiters left asleep would
    /// finish only at their timeout.
    #[tokio::test(start_paused = true)]
    async fn every_waiter_is_released_when_the_gate_opens_not_at_its_timeout() {
        let gate = Arc::new(SyncGate::default());
        let waiters: Vec<_> = (0..8)
            .map(|_| {
                let gate = gate.clone();
                tokio::spawn(async move { gate.wait(READ_SYNC_TIMEOUT).await })
            })
            .collect();
        // Every waiter is parked on the gate before it opens.
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
        let opened = tokio::time::Instant::now();
        gate.open();
        for waiter in waiters {
            assert!(waiter.await.unwrap(), "released");
        }
        assert_eq!(
            opened.elapsed(),
            Duration::ZERO,
            "no waiter slept to its timeout"
        );
        assert!(
            gate.wait(Duration::ZERO).await,
            "an open gate lets later readers through"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_gate_that_never_opens_times_out() {
        assert!(!SyncGate::default().wait(READ_SYNC_TIMEOUT).await);
    }
}
