//! What a controller registered on the [`Manager`](crate::Manager) receives, and
//! [`ControllerContext::run`], which runs kube-runtime `Controller`s with
//! controller-runtime's behaviour: per-object exponential back-off after errors (reset on
//! success), reconcile metrics, readiness once the cache has synced, and a graceful stop
//! that lets reconciles in flight finish. Unlike controller-runtime, a reconcile whose
//! write met a newer version (a conflict) is retried without being reported as an error.

use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kube::api::Api;
use kube::core::NamespaceResourceScope;
use kube::runtime::controller::{Action, Controller, Error as ControllerError};
use kube::runtime::reflector::ObjectRef;
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::backoff::Backoff;
use crate::metrics::{ControllerMetrics, ReconcileResult};
use crate::probes::ReadinessHandle;

/// Everything one controller gets from the manager each time it is started (at start-up,
/// or each time this replica becomes the leader).
pub struct ControllerContext {
    pub(crate) name: String,
    pub(crate) client: Client,
    pub(crate) namespaces: Arc<[String]>,
    pub(crate) stop: CancellationToken,
    pub(crate) readiness: ReadinessHandle,
    pub(crate) metrics: ControllerMetrics,
}

/// Where a controller watches: one namespace of `--namespace`, or the whole cluster.
#[derive(Clone)]
pub struct Scope {
    client: Client,
    namespace: Option<String>,
}

impl Scope {
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

    /// One scope per namespace given with `--namespace`, or one cluster-wide scope.
    pub fn scopes(&self) -> Vec<Scope> {
        if self.namespaces.is_empty() {
            return vec![Scope {
                client: self.client.clone(),
                namespace: None,
            }];
        }
        self.namespaces
            .iter()
            .map(|namespace| Scope {
                client: self.client.clone(),
                namespace: Some(namespace.clone()),
            })
            .collect()
    }

    /// Resolves when the controller must stop taking work (shutdown, or leadership lost).
    pub fn stopped(&self) -> WaitForCancellationFutureOwned {
        self.stop.clone().cancelled_owned()
    }

    /// Reports the controller ready (its caches have synced). [`ControllerContext::run`]
    /// does this itself; a controller started by other means must call it.
    pub fn set_ready(&self) {
        self.readiness.set_ready();
    }

    /// The controller's reconcile metrics.
    pub fn metrics(&self) -> &ControllerMetrics {
        &self.metrics
    }

    /// Runs one `Controller` per scope (built by `build`) with `reconcile` until the
    /// manager stops it, then waits for the reconciles in flight.
    ///
    /// Errors requeue the object after a per-object exponential back-off (5 ms doubling
    /// to 1000 s, forgotten after a success), as do conflicting writes, which are not
    /// counted as errors (see [`instrument`]); every reconcile is counted and timed in the
    /// `controller_runtime_*` metrics; the controller reports ready once the main store
    /// of every scope has synced.
    pub async fn run<K, Ctx, R, Fut, E>(
        self,
        build: impl Fn(&Scope) -> Controller<K>,
        reconcile: R,
        context: Arc<Ctx>,
    ) where
        K: Clone + Resource + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Clone + Debug + Default + Eq + Hash + Unpin + Send + Sync,
        Ctx: Send + Sync + 'static,
        R: Fn(Arc<K>, Arc<Ctx>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let backoff = Arc::new(Backoff::<ObjectRef<K>>::default());
        let mut stores = Vec::new();
        let mut runs = Vec::new();
        for scope in self.scopes() {
            let controller = build(&scope).graceful_shutdown_on(self.stopped());
            stores.push(controller.store());
            let reconcile = instrument(reconcile.clone(), self.metrics.clone(), backoff.clone());
            let error_policy = {
                let backoff = backoff.clone();
                move |object: Arc<K>, _: &E, _: Arc<Ctx>| {
                    Action::requeue(backoff.next_delay(ObjectRef::from_obj(object.as_ref())))
                }
            };
            let name = self.name.clone();
            runs.push(
                controller
                    .run(reconcile, error_policy, context.clone())
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
                synced &= store.wait_until_ready().await.is_ok();
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

/// Wraps a reconciler with the metrics, the back-off reset on success, and the retry of
/// reconciles that wrote from a stale cache.
///
/// A write refused with a conflict is not reported as an error: the reconciler worked from
/// a cached object older than the latest version, typically right after its own write,
/// when a watch event starts the next reconcile before the cache has that write. The
/// newer version's watch event triggers a reconcile from fresh data; the requeue, after
/// the object's back-off so that a conflict on every try still slows down, is a safety
/// net. (controller-runtime logs these races as `Reconciler error`, every few runs of a
/// busy controller.)
fn instrument<K, Ctx, R, Fut, E>(
    reconcile: R,
    metrics: ControllerMetrics,
    backoff: Arc<Backoff<ObjectRef<K>>>,
) -> impl FnMut(Arc<K>, Arc<Ctx>) -> futures::future::BoxFuture<'static, Result<Action, E>>
where
    K: Resource + 'static,
    K::DynamicType: Clone + Default + Eq + Hash + Send + Sync,
    R: Fn(Arc<K>, Arc<Ctx>) -> Fut,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: std::error::Error + Send + 'static,
{
    move |object, context| {
        let key = ObjectRef::from_obj(object.as_ref());
        let running = reconcile(object, context);
        let metrics = metrics.clone();
        let backoff = backoff.clone();
        Box::pin(async move {
            let _worker = metrics.worker_started();
            let started = Instant::now();
            let (outcome, result) = match running.await {
                Ok(action) => {
                    backoff.forget(&key);
                    let result = classify(&action);
                    (Ok(action), result)
                }
                Err(error) if is_conflict(&error) => {
                    tracing::debug!(
                        %error,
                        "the object changed while it was reconciled; retrying from the newer version"
                    );
                    let retry = Action::requeue(backoff.next_delay(key));
                    (Ok(retry), ReconcileResult::RequeueAfter)
                }
                Err(error) => (Err(error), ReconcileResult::Error),
            };
            metrics.record(result, started.elapsed());
            outcome
        })
    }
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

    #[tokio::test]
    async fn a_conflicting_write_is_retried_with_back_off_and_other_errors_fail() {
        let metrics = Metrics::new();
        let backoff = Arc::new(Backoff::default());
        let mut config_map = ConfigMap::default();
        config_map.metadata.name = Some("settings".into());
        let object = Arc::new(config_map);
        let key = ObjectRef::from_obj(object.as_ref());
        let mut reconcile = instrument(
            |_: Arc<ConfigMap>, answer: Arc<(&'static str, u16)>| async move {
                Err::<Action, _>(refused(answer.0, answer.1))
            },
            metrics.controller("test"),
            backoff.clone(),
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
