//! What a controller registered on the [`Manager`](crate::Manager) receives, and
//! [`ControllerContext::run`], which runs kube-runtime `Controller`s with
//! controller-runtime's behaviour: per-object exponential back-off after errors (reset on
//! success), at most `max_concurrent_reconciles` reconciles at once, reconcile and
//! workqueue metrics, readiness once the cache has synced, a reconcile that panics or
//! overruns its timeout retried like one that failed, and a graceful stop that lets
//! reconciles in flight finish. Unlike controller-runtime, a reconcile whose write met a
//! newer version (a conflict) is retried without being reported as an error.
//!
//! Controllers read and watch through the manager's [`Cache`]: [`WatchScope::controller_for`]
//! and the watches of [`CachedController`] build kube-runtime `Controller`s on its shared
//! informers, over the cache's compact objects; each reconcile gets the object decoded.

use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{FutureExt as _, StreamExt as _};
use kube::api::Api;
use kube::core::NamespaceResourceScope;
use kube::runtime::controller::{Action, Config, Controller, Error as ControllerError};
use kube::runtime::reflector::ObjectRef;
use kube::{Client, Resource};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tracing::Instrument as _;

use crate::backoff::{Backoff, RateLimiter};
use crate::cache::{
    Cache, CacheError, CachedKind, Compact, KindCache, KindInfo, ObjectChange, WatchedKind, decode,
    decode_kind, decode_metadata, decode_metadata_of,
};
use crate::healthz::ReadinessHandle;
use crate::manager::Failure;
use crate::metrics::{ControllerMetrics, ReconcileResult, Workqueue};
use crate::predicate::{Change, Filters};

/// controller-runtime's default `MaxConcurrentReconciles`.
pub const DEFAULT_MAX_CONCURRENT_RECONCILES: u16 = 1;

/// Everything one controller gets from the manager each time it is started (at start-up,
/// or each time this replica becomes the leader).
pub struct ControllerContext {
    pub(crate) name: String,
    pub(crate) client: Client,
    pub(crate) cache: Cache,
    pub(crate) namespaces: Arc<[String]>,
    pub(crate) stop: CancellationToken,
    pub(crate) readiness: ReadinessHandle,
    pub(crate) metrics: ControllerMetrics,
    pub(crate) max_concurrent_reconciles: u16,
    pub(crate) reconcile_timeout: Option<Duration>,
    pub(crate) rate_limiter: RateLimiter,
    pub(crate) failure: Failure,
}

/// Where a controller watches: one namespace of `--namespace`, or the whole cluster.
#[derive(Clone)]
pub struct WatchScope {
    client: Client,
    cache: Cache,
    namespace: Option<String>,
    queue: Workqueue,
}

impl WatchScope {
    /// The namespace, `None` for all namespaces.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The API of a namespaced kind within this scope.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        match &self.namespace {
            Some(namespace) => Api::namespaced(self.client.clone(), namespace),
            None => Api::all(self.client.clone()),
        }
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The manager's cache.
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// A controller of `K` (controller-runtime's `For(&K{})`) on the manager's shared
    /// informer of `K` in this scope (the cluster-wide one for a cluster-scoped kind): no
    /// watch of its own.
    pub fn controller_for<K: CachedKind>(&self) -> CachedController<K> {
        self.controller_of(&self.cache.kind::<K>(), Filters::default())
    }

    /// A controller of the kind `kind` caches (a [`CachedKind`] or a kind known at run
    /// time), reconciling the changes `filters` admit.
    pub(crate) fn controller_of<K: WatchedKind>(
        &self,
        kind: &KindCache<K>,
        filters: Filters,
    ) -> CachedController<K> {
        let info = kind.info().clone();
        let queue = self.queue.clone();
        let named = info.clone();
        let triggers = kind
            .subscribe(&self.cache, self.namespace())
            .filter(move |change| std::future::ready(admitted(&filters, change, &named.name)))
            .map(move |change| {
                let object = change.new;
                queue.add(queue_key(object.namespace(), object.name()));
                Arc::new(object.key_only())
            });
        CachedController {
            controller: Controller::for_shared_stream_with(
                triggers,
                kind.store(&self.cache, self.namespace()),
                info.dyntype.clone(),
            ),
            info,
        }
    }
}

/// Whether every predicate of `filters` lets `change` through (a change to an object of
/// the kind named `kind`). An object whose metadata does not decode is let through: a
/// missed reconcile is worse than an extra one.
fn admitted<K>(filters: &Filters, change: &ObjectChange<K>, kind: &str) -> bool {
    filters.is_empty() || judged(filters, change, kind).unwrap_or(true)
}

/// What `filters` say of `change`; `None` when a version's metadata does not decode.
fn judged<K>(filters: &Filters, change: &ObjectChange<K>, kind: &str) -> Option<bool> {
    let metadata = |object: &Compact<K>| {
        decode_metadata_of(object, kind)
            .inspect_err(|error| tracing::error!(%error, "a change not filtered"))
            .ok()
    };
    let new = metadata(&change.new)?;
    let old = match &change.old {
        Some(old) => Some(metadata(old)?),
        None => None,
    };
    let change = match (&old, change.deleted) {
        (_, true) => Change::Delete(&new),
        (Some(old), false) => Change::Update { old, new: &new },
        (None, false) => Change::Create(&new),
    };
    Some(filters.admit(&change))
}

/// A controller of `K` on the manager's shared informers, built by
/// [`WatchScope::controller_for`] (controller-runtime's builder after `For(&K{})`) and run by
/// [`ControllerContext::run`].
pub struct CachedController<K: WatchedKind> {
    controller: Controller<Compact<K>>,
    info: Arc<KindInfo<K>>,
}

impl<K: WatchedKind> CachedController<K> {
    /// Reconciles the owners of kind `K` of every `Child` that changes
    /// (controller-runtime's `Owns(&Child{})`). Only the child's metadata is decoded.
    #[must_use]
    pub fn owns_cached<Child: CachedKind>(self, scope: &WatchScope) -> Self {
        self.owns_filtered::<Child>(scope, Filters::default())
    }

    /// [`CachedController::owns_cached`] for the changes `filters` admit.
    pub(crate) fn owns_filtered<Child: CachedKind>(
        self,
        scope: &WatchScope,
        filters: Filters,
    ) -> Self {
        let owner_kind = self.info.dyntype.clone();
        self.watches_decoded(scope, filters, move |child: &Compact<Child>| {
            let metadata = decode_metadata(child)?;
            let namespace = metadata.namespace.as_deref();
            Ok(metadata
                .owner_references
                .iter()
                .flatten()
                .filter(|owner| owner.controller == Some(true))
                .filter_map(|owner| {
                    ObjectRef::<K>::from_owner_ref(namespace, owner, owner_kind.clone())
                })
                .collect())
        })
    }

    /// Reconciles the objects `mapper` names for every `Other` that changes
    /// (controller-runtime's `Watches(&Other{}, handler.EnqueueRequestsFromMapFunc(..))`).
    #[must_use]
    pub fn watches_cached<Other, I>(
        self,
        scope: &WatchScope,
        mapper: impl Fn(Arc<Other>) -> I + Send + Sync + 'static,
    ) -> Self
    where
        Other: CachedKind,
        I: IntoIterator<Item = ObjectRef<K>> + 'static,
    {
        self.watches_filtered(scope, Filters::default(), mapper)
    }

    /// [`CachedController::watches_cached`] for the changes `filters` admit.
    pub(crate) fn watches_filtered<Other, I>(
        self,
        scope: &WatchScope,
        filters: Filters,
        mapper: impl Fn(Arc<Other>) -> I + Send + Sync + 'static,
    ) -> Self
    where
        Other: CachedKind,
        I: IntoIterator<Item = ObjectRef<K>> + 'static,
    {
        self.watches_decoded(scope, filters, move |other: &Compact<Other>| {
            Ok(mapper(Arc::new(decode(other)?)).into_iter().collect())
        })
    }

    /// Reconciles the objects `map` reads from each changed `Other` (as the cache holds
    /// it) that `filters` admit.
    fn watches_decoded<Other: CachedKind>(
        self,
        scope: &WatchScope,
        filters: Filters,
        map: impl Fn(&Compact<Other>) -> Result<Vec<ObjectRef<K>>, CacheError> + Send + Sync + 'static,
    ) -> Self {
        let queue = scope.queue.clone();
        let mapper = move |other: Arc<Compact<Other>>| {
            let targets = map(&other).unwrap_or_else(|error| {
                tracing::error!(%error, "a change not mapped to the objects it concerns");
                Vec::new()
            });
            targets
                .into_iter()
                .map(|target| {
                    queue.add(queue_key(target.namespace.as_deref(), &target.name));
                    let mut key = ObjectRef::<Compact<K>>::new_with(&target.name, target.dyntype);
                    key.namespace = target.namespace;
                    key
                })
                .collect::<Vec<_>>()
        };
        let changes = scope
            .cache
            .kind::<Other>()
            .subscribe(&scope.cache, scope.namespace())
            .filter(move |change| std::future::ready(admitted(&filters, change, &Other::kind(&()))))
            .map(|change| change.new);
        Self {
            controller: self.controller.watches_shared_stream(changes, mapper),
            info: self.info,
        }
    }
}

/// The workqueue's name for an object.
fn queue_key(namespace: Option<&str>, name: &str) -> String {
    format!("{}/{name}", namespace.unwrap_or_default())
}

impl ControllerContext {
    /// The controller's name (the `controller` label of its metrics).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The manager's client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The manager's cache.
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// How many objects are reconciled at once (controller-runtime's
    /// `MaxConcurrentReconciles`, default 1); one object is never reconciled twice at once.
    /// Set here, not with kube-runtime's `Config::concurrency`: [`ControllerContext::run`]
    /// applies it.
    #[must_use]
    pub fn max_concurrent_reconciles(mut self, max: u16) -> Self {
        self.max_concurrent_reconciles = max.max(1);
        self
    }

    /// Cancels a reconcile that runs longer than `timeout` and retries it with back-off
    /// as a failure (controller-runtime's `ReconciliationTimeout`). No timeout by default.
    #[must_use]
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.reconcile_timeout = Some(timeout);
        self
    }

    /// How failed reconciles are retried (controller-runtime's `RateLimiter` option):
    /// controller-runtime's default unless set.
    #[must_use]
    pub fn rate_limiter(mut self, limiter: RateLimiter) -> Self {
        self.rate_limiter = limiter;
        self
    }

    /// One scope per namespace given with `--namespace`, or one cluster-wide scope.
    pub fn scopes(&self) -> Vec<WatchScope> {
        let scope = |namespace: Option<&String>| WatchScope {
            client: self.client.clone(),
            cache: self.cache.clone(),
            namespace: namespace.cloned(),
            queue: self.metrics.queue().clone(),
        };
        if self.namespaces.is_empty() {
            return vec![scope(None)];
        }
        self.namespaces.iter().map(Some).map(scope).collect()
    }

    /// Resolves when the controller must stop taking work (shutdown, or leadership lost).
    pub fn stopped(&self) -> WaitForCancellationFutureOwned {
        self.stop.clone().cancelled_owned()
    }

    /// Reports the controller ready (its caches have synced); it stays ready while the
    /// manager's cache is connected ([`Cache::connected`]). [`ControllerContext::run`]
    /// does this itself; a controller started by other means must call it.
    pub fn set_ready(&self) {
        self.readiness.set_ready(&self.cache);
    }

    /// Stops the manager because this controller cannot start (`error` says why): a
    /// manager must not run on without one of its controllers.
    pub(crate) fn fail(&self, error: &(dyn std::error::Error + Send + Sync)) {
        let error = format!("the controller {:?} cannot start: {error}", self.name);
        self.failure.fail(&error.into());
    }

    /// Runs one `Controller` per scope (built by `build`, usually from
    /// [`WatchScope::controller_for`]) with `reconcile` until the manager stops it, then waits
    /// for the reconciles in flight.
    ///
    /// Errors requeue the object after a per-object exponential back-off (5 ms doubling
    /// to 1000 s, forgotten after a success), as do panics, timeouts and conflicting
    /// writes (the last not counted as errors: the reconcile read a cached object older
    /// than a write, usually its own); every reconcile is counted and timed in the
    /// `controller_runtime_*` and `workqueue_*` metrics; the controller reports ready once
    /// the main store of every scope has synced.
    pub async fn run<K, Ctx, R, Fut, E>(
        self,
        build: impl Fn(&WatchScope) -> CachedController<K>,
        reconcile: R,
        context: Arc<Ctx>,
    ) where
        K: WatchedKind,
        Ctx: Send + Sync + 'static,
        R: Fn(Arc<K>, Arc<Ctx>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        self.metrics
            .set_max_concurrent_reconciles(self.max_concurrent_reconciles);
        let guard = Supervision {
            controller: self.name.clone(),
            metrics: self.metrics.clone(),
            backoff: Arc::new(Backoff::new(self.rate_limiter)),
            timeout: self.reconcile_timeout,
        };
        let mut stores = Vec::new();
        let mut runs = Vec::new();
        for scope in self.scopes() {
            let CachedController { controller, info } = build(&scope);
            let controller = controller
                .with_config(Config::default().concurrency(self.max_concurrent_reconciles))
                .graceful_shutdown_on(self.stopped());
            stores.push(controller.store());
            let error_policy = {
                let guard = guard.clone();
                let dyntype = info.dyntype.clone();
                move |object: Arc<Compact<K>>, _: &ReconcileFailure<E>, _: Arc<Ctx>| {
                    let delay = guard
                        .backoff
                        .next_delay(object.object_ref_with(dyntype.clone()));
                    guard
                        .metrics
                        .queue()
                        .retry(queue_key(object.namespace(), object.name()), delay);
                    Action::requeue(delay)
                }
            };
            let name = self.name.clone();
            runs.push(
                controller
                    .run(
                        instrument(reconcile.clone(), guard.clone(), info),
                        error_policy,
                        context.clone(),
                    )
                    .for_each(move |result| {
                        log_outcome(&name, result);
                        futures::future::ready(())
                    }),
            );
        }
        // Runs beside the controllers and never finishes: they decide when this returns.
        let report_ready = async {
            let mut synced = true;
            for store in stores {
                // An error means the controller ended before syncing: nothing to report.
                synced &= store_ready(&store).await;
            }
            if synced {
                tracing::info!(controller = %self.name, "caches synced; controller ready");
                self.set_ready();
            }
            std::future::pending::<()>().await;
        };
        tokio::select! {
            _ = futures::future::join_all(runs) => {}
            () = report_ready => {}
        }
        tracing::info!(controller = %self.name, "controller stopped");
    }
}

/// Whether `store` became ready (false: its writer is gone). kube-runtime's
/// `wait_until_ready` wakes only the last of several tasks waiting on one store, and the
/// cache shares each informer's store with every controller built on it: asked again each
/// second, a lost wake-up costs a second instead of the controller's readiness.
async fn store_ready<K>(store: &kube::runtime::reflector::Store<K>) -> bool
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    loop {
        if let Ok(ready) =
            tokio::time::timeout(Duration::from_secs(1), store.wait_until_ready()).await
        {
            return ready.is_ok();
        }
    }
}

/// Why a reconcile failed, as the controller's error policy sees it.
#[derive(Debug, thiserror::Error)]
enum ReconcileFailure<E> {
    #[error(transparent)]
    Reconciler(E),
    #[error("panic: {0} [recovered]")]
    Panicked(String),
    #[error("the reconcile did not finish within {0:?}")]
    TimedOut(Duration),
    #[error(transparent)]
    Undecodable(CacheError),
}

/// One reconcile of a controller, as kube-runtime runs it.
type Reconciling<E> = futures::future::BoxFuture<'static, Result<Action, ReconcileFailure<E>>>;

/// What watches over every reconcile of one controller: its metrics, its back-off and its
/// timeout.
struct Supervision<K: Resource> {
    controller: String,
    metrics: ControllerMetrics,
    backoff: Arc<Backoff<ObjectRef<K>>>,
    timeout: Option<Duration>,
}

impl<K: Resource> Clone for Supervision<K> {
    fn clone(&self) -> Self {
        Self {
            controller: self.controller.clone(),
            metrics: self.metrics.clone(),
            backoff: self.backoff.clone(),
            timeout: self.timeout,
        }
    }
}

/// Wraps a reconciler with the metrics, the back-off reset on success, the timeout, the
/// recovery from panics, and the retry of reconciles that wrote from a stale cache.
///
/// A write refused with a conflict is not reported as an error: the reconciler worked from
/// a cached object older than the latest version, typically right after its own write,
/// when a watch event starts the next reconcile before the cache has that write. The
/// newer version's watch event triggers a reconcile from fresh data; the requeue, after
/// the object's back-off so that a conflict on every try still slows down, is a safety
/// net. (controller-runtime logs these races as `Reconciler error`, every few runs of a
/// busy controller.)
///
/// A panic is caught where the reconcile runs (kube-runtime polls every reconcile inside
/// the controller's own stream, so an uncaught panic would end every controller of the
/// manager): it is logged with the object's key, counted in
/// `controller_runtime_reconcile_panics_total`, and retried like an error.
fn instrument<K, Ctx, R, Fut, E>(
    reconcile: R,
    guard: Supervision<Compact<K>>,
    kind: Arc<KindInfo<K>>,
) -> impl FnMut(Arc<Compact<K>>, Arc<Ctx>) -> Reconciling<E>
where
    K: WatchedKind,
    R: Fn(Arc<K>, Arc<Ctx>) -> Fut,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: std::error::Error + Send + 'static,
{
    move |compact: Arc<Compact<K>>, context| {
        let key = compact.object_ref_with(kind.dyntype.clone());
        let queue_key = queue_key(compact.namespace(), compact.name());
        // What a reconciler logs is about this object (controller-runtime's
        // `log.FromContext(ctx)` carries the same).
        let span = tracing::info_span!(
            "reconcile",
            controller = %guard.controller,
            namespace = compact.namespace(),
            name = compact.name(),
        );
        let running = match decode_kind(&compact, &kind.name) {
            // A reconciler that is not an `async fn` may panic before returning its future.
            Ok(object) => span.in_scope(|| {
                std::panic::catch_unwind(AssertUnwindSafe(|| reconcile(Arc::new(object), context)))
                    .map_err(|panic| ReconcileFailure::Panicked(panic_message(panic.as_ref())))
            }),
            Err(error) => Err(ReconcileFailure::Undecodable(error)),
        };
        let guard = guard.clone();
        let reconciled = async move {
            let queue = guard.metrics.queue();
            queue.started(&queue_key);
            let _worker = guard.metrics.worker_started();
            let started = Instant::now();
            let finished = match running {
                Ok(running) => guard.run_bounded(running).await,
                Err(failure) => Err(failure),
            };
            queue.finished(&queue_key);
            let (outcome, result) = match finished {
                Ok(action) => {
                    guard.backoff.forget(&key);
                    let result = classify(&action);
                    match result {
                        ReconcileResult::Requeue => queue.add(queue_key),
                        ReconcileResult::RequeueAfter => queue.requeued(queue_key),
                        _ => {}
                    }
                    (Ok(action), result)
                }
                Err(ReconcileFailure::Reconciler(error)) if is_conflict(&error) => {
                    tracing::debug!(
                        %error,
                        "the object changed while it was reconciled; retrying from the newer version"
                    );
                    let delay = guard.backoff.next_delay(key);
                    queue.retry(queue_key, delay);
                    (Ok(Action::requeue(delay)), ReconcileResult::RequeueAfter)
                }
                Err(failure) => {
                    if let ReconcileFailure::Panicked(message) = &failure {
                        tracing::error!(controller = %guard.controller, object = %key, panic = %message, "Observed a panic in reconciler");
                        guard.metrics.record_panic();
                    }
                    (Err(failure), ReconcileResult::Error)
                }
            };
            guard.metrics.record(result, started.elapsed());
            outcome
        };
        Box::pin(reconciled.instrument(span))
    }
}

impl<K: Resource> Supervision<K> {
    /// Runs a reconcile to its end, its panic or its timeout.
    async fn run_bounded<E>(
        &self,
        running: impl Future<Output = Result<Action, E>>,
    ) -> Result<Action, ReconcileFailure<E>> {
        let caught = AssertUnwindSafe(running).catch_unwind();
        let finished = match self.timeout {
            Some(timeout) => tokio::time::timeout(timeout, caught)
                .await
                .map_err(|_| ReconcileFailure::TimedOut(timeout))?,
            None => caught.await,
        };
        match finished {
            Ok(result) => result.map_err(ReconcileFailure::Reconciler),
            Err(panic) => Err(ReconcileFailure::Panicked(panic_message(panic.as_ref()))),
        }
    }
}

/// The text a panic was raised with (for reconciles and webhook handlers).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Whether `error`, or an error it wraps, is the apiserver refusing a write with a
/// conflict: the object was written from a version older than the latest.
pub fn is_conflict(error: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(error), |error| error.source()).any(|error| {
        matches!(
            error.downcast_ref::<kube::Error>(),
            Some(kube::Error::Api(status)) if status.is_conflict()
        )
    })
}

/// controller-runtime's `result` label for a successful reconcile's action.
fn classify(action: &Action) -> ReconcileResult {
    if *action == Action::await_change() {
        ReconcileResult::Success
    } else if *action == Action::requeue(Duration::ZERO) {
        ReconcileResult::Requeue
    } else {
        ReconcileResult::RequeueAfter
    }
}

fn log_outcome<K, E>(
    controller: &str,
    result: Result<(ObjectRef<K>, Action), ControllerError<E, kube::runtime::watcher::Error>>,
) where
    K: Resource,
    K::DynamicType: Debug,
    E: std::error::Error,
{
    match result {
        Ok((object, _)) => tracing::debug!(%controller, %object, "reconciled"),
        Err(ControllerError::ReconcilerFailed(err, object)) => {
            tracing::error!(%controller, %object, error = %err, "Reconciler error");
        }
        Err(ControllerError::ObjectNotFound(object)) => {
            tracing::debug!(%controller, %object, "object gone before its reconcile");
        }
        Err(err) => tracing::warn!(%controller, error = %err, "controller error"),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::core::Status;

    use super::*;
    use crate::metrics::Metrics;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot write: {0}")]
    struct WriteFailed(#[source] kube::Error);

    /// The apiserver's answer `code` with its `reason`, wrapped as a reconciler would.
    fn refused(reason: &str, code: u16) -> WriteFailed {
        WriteFailed(kube::Error::Api(
            Status::failure("refused", reason).with_code(code).boxed(),
        ))
    }

    fn guard(metrics: &Metrics, timeout: Option<Duration>) -> Supervision<Compact<ConfigMap>> {
        Supervision {
            controller: "test".into(),
            metrics: metrics.controller("test"),
            backoff: Arc::new(Backoff::default()),
            timeout,
        }
    }

    fn settings() -> Arc<Compact<ConfigMap>> {
        let mut config_map = ConfigMap::default();
        config_map.metadata.name = Some("settings".into());
        Arc::new(Compact::encode(&config_map).unwrap())
    }

    #[tokio::test]
    async fn a_conflicting_write_is_retried_with_back_off_and_other_errors_fail() {
        let metrics = Metrics::new();
        let guard = guard(&metrics, None);
        let backoff = guard.backoff.clone();
        let object = settings();
        let key = ObjectRef::from_obj(object.as_ref());
        let mut reconcile = instrument(
            |_: Arc<ConfigMap>, answer: Arc<(&'static str, u16)>| async move {
                Err::<Action, _>(refused(answer.0, answer.1))
            },
            guard,
            Arc::new(KindInfo::typed()),
        );

        for expected in [Duration::from_millis(5), Duration::from_millis(10)] {
            let outcome = reconcile(object.clone(), Arc::new(("Conflict", 409))).await;
            assert_eq!(outcome.unwrap(), Action::requeue(expected));
        }
        assert!(
            reconcile(object.clone(), Arc::new(("InternalError", 500)))
                .await
                .is_err()
        );
        assert_eq!(
            backoff.failures(&key),
            2,
            "each conflict counts (the error policy, not run here, counts errors)"
        );
        let text = metrics.encode();
        for line in [
            "controller_runtime_reconcile_total{controller=\"test\",result=\"requeue_after\"} 2",
            "controller_runtime_reconcile_total{controller=\"test\",result=\"error\"} 1",
            "workqueue_retries_total{name=\"test\"} 2",
        ] {
            assert!(text.contains(line), "{line} missing from:\n{text}");
        }
    }

    #[tokio::test]
    async fn panics_and_timeouts_are_failures_and_panics_are_counted() {
        let metrics = Metrics::new();
        let mut reconcile = instrument(
            |object: Arc<ConfigMap>, sleep: Arc<Duration>| async move {
                tokio::time::sleep(*sleep).await;
                if object.metadata.name.is_some() {
                    panic!("no settings today");
                }
                Ok::<_, std::io::Error>(Action::await_change())
            },
            guard(&metrics, Some(Duration::from_millis(50))),
            Arc::new(KindInfo::typed()),
        );
        let panicked = reconcile(settings(), Arc::new(Duration::ZERO)).await;
        assert_eq!(
            panicked.unwrap_err().to_string(),
            "panic: no settings today [recovered]"
        );
        let timed_out = reconcile(settings(), Arc::new(Duration::from_secs(60))).await;
        assert!(
            matches!(timed_out, Err(ReconcileFailure::TimedOut(_))),
            "{timed_out:?}"
        );
        let text = metrics.encode();
        for line in [
            "controller_runtime_reconcile_panics_total{controller=\"test\"} 1",
            "controller_runtime_reconcile_errors_total{controller=\"test\"} 2",
            "controller_runtime_active_workers{controller=\"test\"} 0",
        ] {
            assert!(text.contains(line), "{line} missing from:\n{text}");
        }
    }

    #[test]
    fn conflicts_are_found_through_wrapping_errors() {
        assert!(is_conflict(&refused("Conflict", 409)));
        assert!(!is_conflict(&refused("Invalid", 422)));
        assert!(!is_conflict(&std::io::Error::other(
            "not from the apiserver"
        )));
    }

    #[test]
    fn classifies_actions_as_controller_runtime_results() {
        assert_eq!(classify(&Action::await_change()), ReconcileResult::Success);
        assert_eq!(
            classify(&Action::requeue(Duration::ZERO)),
            ReconcileResult::Requeue
        );
        assert_eq!(
            classify(&Action::requeue(Duration::from_secs(60))),
            ReconcileResult::RequeueAfter
        );
    }
}
