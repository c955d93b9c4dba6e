//! A controller in one expression (controller-runtime's `builder` package): the kind it
//! reconciles, the kinds it owns or watches, which changes start a reconcile, and the
//! [`Reconciler`] that does the work.
//!
//! ```no_run
//! # use k8s_openapi::api::apps::v1::Deployment;
//! # use k8s_openapi::api::core::v1::ConfigMap as Memcached;
//! use kubebuilder_runtime::predicate::GenerationChanged;
//! use kubebuilder_runtime::prelude::*;
//!
//! struct MemcachedReconciler;
//!
//! impl Reconciler<Memcached> for MemcachedReconciler {
//!     type Error = kube::Error;
//!
//!     async fn reconcile(
//!         &self,
//!         memcached: Arc<Memcached>,
//!         ctx: &Context,
//!     ) -> Result<Action, kube::Error> {
//!         // Read the world through `ctx`, make it as `memcached` says, report in its status.
//!         Ok(Action::await_change())
//!     }
//! }
//!
//! fn setup_with_manager(manager: Manager) -> Manager {
//!     manager
//!         .controller_for::<Memcached>()
//!         .owns::<Deployment>()
//!         .with_event_filter(GenerationChanged)
//!         .complete(MemcachedReconciler)
//! }
//! ```

use std::error::Error as StdError;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use kube::api::{DynamicObject, GroupVersionKind};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;

use crate::ControllerContext;
use crate::backoff::RateLimiter;
use crate::cache::{Cache, CacheError, CachedKind, KindCache, WatchedKind};
use crate::context::Context;
use crate::controller::{CachedController, DEFAULT_MAX_CONCURRENT_RECONCILES, WatchScope};
use crate::manager::{Manager, NeedLeaderElection};
use crate::predicate::{Filters, Predicate};

/// What a controller does with each object of kind `K` that changed (controller-runtime's
/// `reconcile.Reconciler`): make the world as the object asks, and say when to look again.
///
/// `reconcile` is given the object as the manager's cache holds it; it is never called
/// for an object that is gone (use a finalizer to act on a deletion, see
/// [`controllerutil`](crate::controllerutil)), nor twice at once for one object. An error
/// retries the object with per-object exponential back-off, as does a panic.
pub trait Reconciler<K>: Send + Sync + 'static {
    /// Why a reconcile failed: any error type (`kube::Error`, a `thiserror` enum,
    /// `anyhow::Error`).
    type Error: Into<Box<dyn StdError + Send + Sync>> + Send + 'static;

    /// Reconciles `object`: `Action::await_change()` when done, `Action::requeue(after)`
    /// to look again after a while whether or not anything changes. `context` holds the
    /// controller's client, cache, Event recorder and applier.
    fn reconcile(
        &self,
        object: Arc<K>,
        context: &Context,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;
}

/// Builds a controller of kind `K` on a [`Manager`]; from [`Manager::controller_for`].
/// Nothing runs until the manager does.
#[must_use = "a controller is registered by `complete`"]
pub struct Builder<K: WatchedKind> {
    manager: Manager,
    name: String,
    kind: KindSource<K>,
    own_filters: Filters,
    event_filters: Filters,
    watches: Vec<AddWatch<K>>,
    max_concurrent_reconciles: u16,
    reconcile_timeout: Option<Duration>,
    rate_limiter: RateLimiter,
    needs: NeedLeaderElection,
}

/// Adds one watch to a controller in one scope, given the controller's event filters.
type AddWatch<K> =
    Arc<dyn Fn(CachedController<K>, &WatchScope, &Filters) -> CachedController<K> + Send + Sync>;

/// The cache of the controller's kind, found when the controller starts: at once for a
/// Rust type, from discovery for a kind known at run time.
type KindSource<K> =
    Arc<dyn Fn(Cache) -> BoxFuture<'static, Result<Arc<KindCache<K>>, CacheError>> + Send + Sync>;

impl<K: CachedKind> Builder<K> {
    pub(crate) fn new(manager: Manager) -> Self {
        let kind: KindSource<K> = Arc::new(|cache| Box::pin(async move { Ok(cache.kind::<K>()) }));
        Self::of_kind(manager, K::kind(&()).to_lowercase(), kind)
    }
}

impl Builder<DynamicObject> {
    pub(crate) fn dynamic(manager: Manager, kind: &GroupVersionKind) -> Self {
        let gvk = kind.clone();
        let source: KindSource<DynamicObject> = Arc::new(move |cache| {
            let gvk = gvk.clone();
            Box::pin(async move { cache.dynamic_kind(&gvk).await })
        });
        Self::of_kind(manager, kind.kind.to_lowercase(), source)
    }
}

impl<K: WatchedKind> Builder<K> {
    fn of_kind(manager: Manager, name: String, kind: KindSource<K>) -> Self {
        Self {
            manager,
            name,
            kind,
            own_filters: Filters::default(),
            event_filters: Filters::default(),
            watches: Vec::new(),
            max_concurrent_reconciles: DEFAULT_MAX_CONCURRENT_RECONCILES,
            reconcile_timeout: None,
            rate_limiter: RateLimiter::default(),
            needs: NeedLeaderElection::Yes,
        }
    }

    /// The controller's name, the `controller` label of its metrics and the name of its
    /// readiness check: the kind in lower case unless named (controller-runtime's `Named`).
    pub fn named(mut self, name: &str) -> Self {
        name.clone_into(&mut self.name);
        self
    }

    /// Reconciles a change to a `K` only when `predicate` lets it through
    /// (controller-runtime's `For(&K{}, builder.WithPredicates(predicate))`).
    pub fn for_predicate(mut self, predicate: impl Predicate) -> Self {
        self.own_filters = self.own_filters.with(Arc::new(predicate));
        self
    }

    /// Reconciles the controlling owner, of kind `K`, of every `Child` that changes
    /// (controller-runtime's `Owns(&Child{})`): the objects the reconciler creates with a
    /// controller reference.
    pub fn owns<Child: CachedKind>(self) -> Self {
        self.owns_with::<Child>(Filters::default())
    }

    /// [`Builder::owns`] for the changes to `Child` that `predicate` lets through
    /// (controller-runtime's `Owns(&Child{}, builder.WithPredicates(predicate))`).
    pub fn owns_filtered<Child: CachedKind>(self, predicate: impl Predicate) -> Self {
        self.owns_with::<Child>(Filters::default().with(Arc::new(predicate)))
    }

    fn owns_with<Child: CachedKind>(mut self, filters: Filters) -> Self {
        self.watches
            .push(Arc::new(move |controller, scope, events| {
                controller.owns_filtered::<Child>(scope, filters.clone().extend(events))
            }));
        self
    }

    /// Reconciles the objects `map` names for every `Other` that changes
    /// (controller-runtime's `Watches(&Other{}, handler.EnqueueRequestsFromMapFunc(map))`).
    pub fn watches<Other, I>(self, map: impl Fn(Arc<Other>) -> I + Send + Sync + 'static) -> Self
    where
        Other: CachedKind,
        I: IntoIterator<Item = ObjectRef<K>> + 'static,
    {
        self.watches_with(Filters::default(), map)
    }

    /// [`Builder::watches`] for the changes to `Other` that `predicate` lets through.
    pub fn watches_filtered<Other, I>(
        self,
        map: impl Fn(Arc<Other>) -> I + Send + Sync + 'static,
        predicate: impl Predicate,
    ) -> Self
    where
        Other: CachedKind,
        I: IntoIterator<Item = ObjectRef<K>> + 'static,
    {
        self.watches_with(Filters::default().with(Arc::new(predicate)), map)
    }

    fn watches_with<Other, I>(
        mut self,
        filters: Filters,
        map: impl Fn(Arc<Other>) -> I + Send + Sync + 'static,
    ) -> Self
    where
        Other: CachedKind,
        I: IntoIterator<Item = ObjectRef<K>> + 'static,
    {
        let map = Arc::new(map);
        self.watches
            .push(Arc::new(move |controller, scope, events| {
                let map = map.clone();
                let filters = filters.clone().extend(events);
                controller.watches_filtered(scope, filters, move |other| map(other))
            }));
        self
    }

    /// Applies `predicate` to every watch of the controller, its own kind's and the
    /// owned and watched kinds' (controller-runtime's `WithEventFilter`).
    pub fn with_event_filter(mut self, predicate: impl Predicate) -> Self {
        self.event_filters = self.event_filters.with(Arc::new(predicate));
        self
    }

    /// How many objects are reconciled at once (controller-runtime's
    /// `MaxConcurrentReconciles`, default 1); one object is never reconciled twice at once.
    pub fn max_concurrent_reconciles(mut self, max: u16) -> Self {
        self.max_concurrent_reconciles = max;
        self
    }

    /// Cancels a reconcile that runs longer than `timeout` and retries it with back-off
    /// as a failure (controller-runtime's `ReconciliationTimeout`). No timeout by default.
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.reconcile_timeout = Some(timeout);
        self
    }

    /// How failed reconciles are retried (controller-runtime's `RateLimiter` option):
    /// by default 5 ms doubling to 1000 s per object, and at most 10 retries a second
    /// overall after a burst of 100, as controller-runtime's default.
    pub fn rate_limiter(mut self, limiter: RateLimiter) -> Self {
        self.rate_limiter = limiter;
        self
    }

    /// Whether the controller runs on the leader only (the default, as controller-runtime's)
    /// or, with [`NeedLeaderElection::No`], on every replica, writing whether or not it
    /// leads (controller-runtime's `NeedLeaderElection` option): for a controller whose
    /// work is per replica or safe to do twice.
    pub fn need_leader_election(mut self, needs: NeedLeaderElection) -> Self {
        self.needs = needs;
        self
    }

    /// Registers the controller, reconciling with `reconciler`, and gives the manager back
    /// (controller-runtime's `Complete`). It runs in each namespace of `--namespace` (or
    /// the whole cluster), on the leader only when leader election is on (unless
    /// [`Builder::need_leader_election`] says otherwise).
    ///
    /// # Panics
    /// When a controller of the same name is registered already.
    pub fn complete<R: Reconciler<K>>(self, reconciler: R) -> Manager {
        let Self {
            manager,
            name,
            kind,
            own_filters,
            event_filters,
            watches,
            max_concurrent_reconciles,
            reconcile_timeout,
            rate_limiter,
            needs,
        } = self;
        let reconciler = Arc::new(reconciler);
        let build = Arc::new(move |scope: &WatchScope, kind: &KindCache<K>| {
            let own = own_filters.clone().extend(&event_filters);
            let controller = scope.controller_of(kind, own);
            watches.iter().fold(controller, |controller, add| {
                add(controller, scope, &event_filters)
            })
        });
        let start = move |context: ControllerContext| {
            let mut context = context
                .max_concurrent_reconciles(max_concurrent_reconciles)
                .rate_limiter(rate_limiter);
            if let Some(timeout) = reconcile_timeout {
                context = context.reconcile_timeout(timeout);
            }
            let (build, kind, reconciler) = (build.clone(), kind.clone(), reconciler.clone());
            async move {
                let kind = match kind(context.cache().clone()).await {
                    Ok(kind) => kind,
                    // A kind the apiserver does not serve: the manager stops, saying so.
                    Err(error) => return context.fail(&error),
                };
                // The reconciler's view for this start: the client given to this controller.
                let bound = Arc::new(Bound {
                    context: Context::new(
                        context.name(),
                        context.client().clone(),
                        context.cache().clone(),
                    ),
                    reconciler,
                });
                context
                    .run(move |scope| build(scope, &kind), reconcile::<K, R>, bound)
                    .await;
            }
        };
        manager.controller_needing(&name, needs, start)
    }
}

/// One reconcile by `reconciler`, as [`ControllerContext::run`](crate::ControllerContext::run)
/// calls it.
async fn reconcile<K: WatchedKind, R: Reconciler<K>>(
    object: Arc<K>,
    bound: Arc<Bound<R>>,
) -> Result<Action, ReconcilerError> {
    bound
        .reconciler
        .reconcile(object, &bound.context)
        .await
        .map_err(|error| ReconcilerError(error.into()))
}

/// A reconciler and the context it reconciles in, for one start of its controller.
struct Bound<R> {
    reconciler: Arc<R>,
    context: Context,
}

/// A [`Reconciler`]'s error, whatever its type, as the controller reports and retries it.
#[derive(Debug)]
struct ReconcilerError(Box<dyn StdError + Send + Sync>);

impl std::fmt::Display for ReconcilerError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(formatter)
    }
}

/// The reconciler's error is this one's source, so that a conflict it wraps is found.
impl StdError for ReconcilerError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(self.0.as_ref())
    }
}
