//! The manager's Prometheus registry with controller-runtime's metric names, and the
//! `/metrics` endpoint: plain, or authenticated (TokenReview) and authorized
//! (SubjectAccessReview for `get` on the non-resource URL) as controller-runtime's
//! `filters.WithAuthenticationAndAuthorization` does.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Metric, Registry};

use crate::http::{Body, respond, text};

mod process;
mod rest_client;
mod workqueue;

pub(crate) use rest_client::ApiserverRequest;
pub use rest_client::RestClientMetric;
pub(crate) use workqueue::Workqueue;

/// controller-runtime's buckets for `controller_runtime_reconcile_time_seconds`.
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// Prometheus' default buckets, which controller-runtime's webhook latency uses.
const DEFAULT_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The Prometheus text format, what Go's `promhttp` answers a scraper that does not ask
/// for OpenMetrics (and what `promtool check metrics` reads).
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: String,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NameLabels {
    name: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    webhook: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookCodeLabels {
    webhook: String,
    code: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// The metrics registry a manager serves, with controller-runtime's and client-go's
/// names. Clones share it; register your own metrics with [`Metrics::register`].
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Mutex<Registry>>,
    reconcile_total: Family<ResultLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_panics: Family<ControllerLabels, Counter>,
    reconcile_time: HistogramFamily<ControllerLabels>,
    active_workers: Family<ControllerLabels, Gauge>,
    max_concurrent_reconciles: Family<ControllerLabels, Gauge>,
    leader_status: Family<NameLabels, Gauge>,
    webhook_requests: Family<WebhookCodeLabels, Counter>,
    webhook_latency: HistogramFamily<WebhookLabels>,
    webhook_in_flight: Family<WebhookLabels, Gauge>,
    webhook_panics: Counter,
    rest: rest_client::RestClientMetrics,
    workqueues: workqueue::Families,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

fn reconcile_time_histogram() -> Histogram {
    Histogram::new(RECONCILE_TIME_BUCKETS)
}

fn default_histogram() -> Histogram {
    Histogram::new(DEFAULT_BUCKETS)
}

impl Metrics {
    /// A registry holding controller-runtime's controller, workqueue, webhook and
    /// leader-election metrics, client-go's REST client metrics, and the process and
    /// Tokio runtime basics.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        // prometheus-client appends `_total` to counters.
        let metrics = Self {
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_panics: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_time_histogram),
            active_workers: Family::default(),
            max_concurrent_reconciles: Family::default(),
            leader_status: Family::default(),
            webhook_requests: Family::default(),
            webhook_latency: Family::new_with_constructor(default_histogram),
            webhook_in_flight: Family::default(),
            webhook_panics: Counter::default(),
            rest: rest_client::RestClientMetrics::default(),
            workqueues: workqueue::Families::register(&mut registry),
            registry: Arc::default(),
        };
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            metrics.reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            metrics.reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            metrics.reconcile_panics.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            metrics.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            metrics.active_workers.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            metrics.max_concurrent_reconciles.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
            metrics.leader_status.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code.",
            metrics.webhook_requests.clone(),
        );
        registry.register(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            metrics.webhook_latency.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served.",
            metrics.webhook_in_flight.clone(),
        );
        registry.register(
            "controller_runtime_webhook_panics",
            "Total number of webhook panics",
            metrics.webhook_panics.clone(),
        );
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            metrics.rest.requests.clone(),
        );
        registry.register_collector(Box::new(process::Collector));
        registry.register_collector(Box::new(metrics.workqueues.collector()));
        *lock(&metrics.registry) = registry;
        metrics
    }

    /// Adds a metric of your own to the registry (served with the others).
    pub fn register(&self, name: &str, help: &str, metric: impl Metric) {
        lock(&self.registry).register(name, help, metric);
    }

    /// The reconcile and workqueue metrics of one controller.
    pub(crate) fn controller(&self, name: &str) -> ControllerMetrics {
        let labels = ControllerLabels {
            controller: name.to_owned(),
        };
        // Touch the series so a scrape shows the controller before its first reconcile.
        self.active_workers.get_or_create(&labels).set(0);
        for result in ReconcileResult::ALL {
            let _ = self.reconcile_total.get_or_create(&ResultLabels {
                controller: name.to_owned(),
                result: result.label(),
            });
        }
        let _ = self.reconcile_errors.get_or_create(&labels);
        let _ = self.reconcile_panics.get_or_create(&labels);
        ControllerMetrics {
            metrics: self.clone(),
            queue: self.workqueues.queue(name),
            labels,
        }
    }

    /// Sets `leader_election_master_status{name}`.
    pub(crate) fn set_leader(&self, lease_name: &str, leading: bool) {
        self.leader_status
            .get_or_create(&NameLabels {
                name: lease_name.to_owned(),
            })
            .set(i64::from(leading));
    }

    /// Counts a webhook request as in flight until the guard is dropped.
    pub(crate) fn webhook_started(&self, path: &str) -> WebhookInFlight {
        let labels = WebhookLabels {
            webhook: path.to_owned(),
        };
        let gauge = self.webhook_in_flight.get_or_create_owned(&labels);
        gauge.inc();
        WebhookInFlight {
            metrics: self.clone(),
            labels,
            gauge,
            started: std::time::Instant::now(),
        }
    }

    /// Counts a webhook handler's panic.
    pub(crate) fn webhook_panicked(&self) {
        self.webhook_panics.inc();
    }

    /// The registry in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &lock(&self.registry))
            .expect("writing to a String cannot fail");
        out
    }

    /// The registry in the Prometheus text format (0.0.4).
    pub fn encode_prometheus_text(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut out, &lock(&self.registry))
            .expect("writing to a String cannot fail");
        out
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How one reconcile ended, as the `result` label of `controller_runtime_reconcile_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReconcileResult {
    /// Done; nothing scheduled.
    Success,
    /// The reconciler failed (returned an error, panicked or timed out).
    Error,
    /// Done, and asked to run again at once.
    Requeue,
    /// Done, and asked to run again after a delay.
    RequeueAfter,
}

impl ReconcileResult {
    const ALL: [Self; 4] = [
        Self::Success,
        Self::Error,
        Self::Requeue,
        Self::RequeueAfter,
    ];

    fn label(self) -> &'static str {
        match self {
            ReconcileResult::Success => "success",
            ReconcileResult::Error => "error",
            ReconcileResult::Requeue => "requeue",
            ReconcileResult::RequeueAfter => "requeue_after",
        }
    }
}

/// The reconcile and workqueue metrics of one controller.
#[derive(Clone, Debug)]
pub(crate) struct ControllerMetrics {
    metrics: Metrics,
    queue: Workqueue,
    labels: ControllerLabels,
}

impl ControllerMetrics {
    /// Counts a worker as busy until the returned guard is dropped.
    pub(crate) fn worker_started(&self) -> ActiveWorker {
        let gauge = self
            .metrics
            .active_workers
            .get_or_create_owned(&self.labels);
        gauge.inc();
        ActiveWorker(gauge)
    }

    /// Records one finished reconcile.
    pub(crate) fn record(&self, result: ReconcileResult, took: Duration) {
        let labels = ResultLabels {
            controller: self.labels.controller.clone(),
            result: result.label(),
        };
        self.metrics.reconcile_total.get_or_create(&labels).inc();
        if result == ReconcileResult::Error {
            self.metrics
                .reconcile_errors
                .get_or_create(&self.labels)
                .inc();
        }
        self.metrics
            .reconcile_time
            .get_or_create(&self.labels)
            .observe(took.as_secs_f64());
    }

    /// Sets `controller_runtime_max_concurrent_reconciles`.
    pub(crate) fn set_max_concurrent_reconciles(&self, max: u16) {
        self.metrics
            .max_concurrent_reconciles
            .get_or_create(&self.labels)
            .set(i64::from(max));
    }

    /// Counts a reconcile that panicked (it is also recorded as an error).
    pub(crate) fn record_panic(&self) {
        self.metrics
            .reconcile_panics
            .get_or_create(&self.labels)
            .inc();
    }

    /// The controller's workqueue metrics.
    pub(crate) fn queue(&self) -> &Workqueue {
        &self.queue
    }
}

/// A busy worker; decrements `controller_runtime_active_workers` when dropped, also when
/// the reconcile is cancelled.
#[derive(Debug)]
pub(crate) struct ActiveWorker(Gauge);

impl Drop for ActiveWorker {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// A webhook request being served; [`WebhookInFlight::finish`] records its code and
/// latency. Dropped unfinished (the connection went away), it only leaves the in-flight
/// count.
#[derive(Debug)]
pub(crate) struct WebhookInFlight {
    metrics: Metrics,
    labels: WebhookLabels,
    gauge: Gauge,
    started: std::time::Instant,
}

impl WebhookInFlight {
    pub(crate) fn finish(self, code: StatusCode) {
        self.metrics
            .webhook_latency
            .get_or_create(&self.labels)
            .observe(self.started.elapsed().as_secs_f64());
        self.metrics
            .webhook_requests
            .get_or_create(&WebhookCodeLabels {
                webhook: self.labels.webhook.clone(),
                code: code.as_u16().to_string(),
            })
            .inc();
    }
}

impl Drop for WebhookInFlight {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// Serves `/metrics`, checking every request with the apiserver when `auth` is set.
#[derive(Clone)]
pub(crate) struct MetricsEndpoint {
    pub(crate) metrics: Metrics,
    pub(crate) auth: Option<kube::Client>,
}

impl MetricsEndpoint {
    pub(crate) async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        if let Some(client) = &self.auth
            && let Err(refused) = authorize(
                client,
                request.method(),
                request.uri().path(),
                request.headers(),
            )
            .await
        {
            return refused;
        }
        match (request.method(), request.uri().path()) {
            (&Method::GET | &Method::HEAD, "/metrics") => {
                // OpenMetrics when the scraper asks for it (Prometheus does), else the
                // Prometheus text format, as Go's promhttp negotiates.
                if accepts_openmetrics(request.headers()) {
                    respond(StatusCode::OK, OPENMETRICS, self.metrics.encode())
                } else {
                    respond(
                        StatusCode::OK,
                        PROMETHEUS_TEXT,
                        self.metrics.encode_prometheus_text(),
                    )
                }
            }
            (_, "/metrics") => text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n"),
            _ => text(StatusCode::NOT_FOUND, "404 page not found\n"),
        }
    }
}

/// Authenticates the bearer token with a TokenReview and authorizes the user for the
/// request's verb on its path with a SubjectAccessReview.
async fn authorize(
    client: &kube::Client,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
) -> Result<(), Response<Body>> {
    let unauthorized = || text(StatusCode::UNAUTHORIZED, "Unauthorized\n");
    let token = bearer_token(headers).ok_or_else(unauthorized)?;
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: token.to_owned(),
            ..Default::default()
        },
        ..Default::default()
    };
    let reviewed = Api::<TokenReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .map_err(|err| internal_error("TokenReview", &err))?;
    let status = reviewed.status.unwrap_or_default();
    let user = match (status.authenticated, status.user) {
        (Some(true), Some(user)) => user,
        _ => {
            tracing::debug!(error = ?status.error, "metrics scrape with an invalid token");
            return Err(unauthorized());
        }
    };
    let access = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: user.username.clone(),
            uid: user.uid,
            groups: user.groups,
            extra: user.extra,
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some(path.to_owned()),
                verb: Some(verb(method).to_owned()),
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let decided = Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &access)
        .await
        .map_err(|err| internal_error("SubjectAccessReview", &err))?;
    if decided.status.is_some_and(|status| status.allowed) {
        Ok(())
    } else {
        let user = user.username.unwrap_or_default();
        tracing::debug!(%user, %path, "metrics scrape forbidden");
        Err(text(
            StatusCode::FORBIDDEN,
            format!(
                "Forbidden (user={user}, verb={}, resource=, subresource=)\n",
                verb(method)
            ),
        ))
    }
}

/// The Kubernetes verb of a non-resource request, as the apiserver's request info maps it.
fn verb(method: &Method) -> &'static str {
    match *method {
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "get",
    }
}

fn accepts_openmetrics(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|media| media.trim().starts_with("application/openmetrics-text"))
}

fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn internal_error(review: &str, err: &kube::Error) -> Response<Body> {
    tracing::error!(error = %err, "{review} for a metrics scrape failed");
    text(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("{review} failed: {err}\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposes_controller_runtime_names() {
        let metrics = Metrics::new();
        let cronjob = metrics.controller("cronjob");
        let worker = cronjob.worker_started();
        cronjob.record(ReconcileResult::Success, Duration::from_millis(3));
        cronjob.record(ReconcileResult::Error, Duration::from_millis(30));
        cronjob.record(ReconcileResult::RequeueAfter, Duration::from_millis(2));
        metrics.set_leader("lease", true);
        let text = metrics.encode();
        for line in [
            "controller_runtime_reconcile_total{controller=\"cronjob\",result=\"success\"} 1",
            "controller_runtime_reconcile_total{controller=\"cronjob\",result=\"error\"} 1",
            "controller_runtime_reconcile_total{controller=\"cronjob\",result=\"requeue_after\"} 1",
            "controller_runtime_reconcile_errors_total{controller=\"cronjob\"} 1",
            "controller_runtime_reconcile_time_seconds_count{controller=\"cronjob\"} 3",
            "controller_runtime_reconcile_time_seconds_bucket{le=\"0.005\",controller=\"cronjob\"} 2",
            "controller_runtime_active_workers{controller=\"cronjob\"} 1",
            "leader_election_master_status{name=\"lease\"} 1",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        drop(worker);
        assert!(
            metrics
                .encode()
                .contains("controller_runtime_active_workers{controller=\"cronjob\"} 0")
        );
    }

    #[test]
    fn a_controller_shows_every_series_at_zero_before_its_first_reconcile() {
        // As controller-runtime's initMetrics: a scrape before any event still lists the
        // controller, so alerts on rates and dashboards see it from the start.
        let metrics = Metrics::new();
        let _cronjob = metrics.controller("cronjob");
        let text = metrics.encode();
        for line in [
            "controller_runtime_reconcile_total{controller=\"cronjob\",result=\"success\"} 0",
            "controller_runtime_reconcile_total{controller=\"cronjob\",result=\"error\"} 0",
            "controller_runtime_reconcile_total{controller=\"cronjob\",result=\"requeue\"} 0",
            "controller_runtime_reconcile_total{controller=\"cronjob\",result=\"requeue_after\"} 0",
            "controller_runtime_reconcile_errors_total{controller=\"cronjob\"} 0",
            "controller_runtime_reconcile_panics_total{controller=\"cronjob\"} 0",
            "controller_runtime_active_workers{controller=\"cronjob\"} 0",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
    }

    #[test]
    fn reads_bearer_tokens_only() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer_token(&headers), None);
        headers.insert(header::AUTHORIZATION, "Basic dXNlcjpwdw==".parse().unwrap());
        assert_eq!(bearer_token(&headers), None);
        headers.insert(header::AUTHORIZATION, "bearer abc.def".parse().unwrap());
        assert_eq!(bearer_token(&headers), Some("abc.def"));
        headers.insert(header::AUTHORIZATION, "Bearer ".parse().unwrap());
        assert_eq!(bearer_token(&headers), None);
    }
}
