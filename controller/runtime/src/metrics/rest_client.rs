//! client-go's REST client metrics, as controller-runtime v0.25 exposes them: the request
//! count always, the others when a program asks for them ([`Metrics::enable_rest_client`]).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;

use super::{HistogramFamily, Metrics, lock};

/// client-go's buckets for its REST client durations (they start at 5 ms).
const DURATION_BUCKETS: [f64; 12] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
];

/// client-go's buckets for request and response sizes: 64 bytes to 16 MiB.
const SIZE_BUCKETS: [f64; 11] = [
    64.0,
    256.0,
    512.0,
    1024.0,
    4096.0,
    16384.0,
    65536.0,
    262_144.0,
    1_048_576.0,
    4_194_304.0,
    16_777_216.0,
];

/// A REST client metric that is off until enabled, as in controller-runtime v0.25
/// (`metrics.RegisterRESTClientMetrics`). `rest_client_requests_total` is always on. Of
/// client-go's other two, the DNS resolution latency is not offered (the client resolves
/// inside its connector, unseen), nor the retries (the manager's client does not retry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RestClientMetric {
    /// `rest_client_request_duration_seconds{verb, host}`: each request's latency.
    RequestLatency,
    /// `rest_client_request_size_bytes{verb, host}`: each request body's size.
    RequestSize,
    /// `rest_client_response_size_bytes{verb, host}`: each response body's size, when the
    /// apiserver sends it with its length (not a watch, nor a list streamed in chunks).
    ResponseSize,
    /// `rest_client_rate_limiter_duration_seconds{verb, host}`: how long each request
    /// waited for `--kube-api-qps`'s limiter (observed only with a limit).
    RateLimiterLatency,
}

impl RestClientMetric {
    fn name(self) -> &'static str {
        match self {
            Self::RequestLatency => "rest_client_request_duration_seconds",
            Self::RequestSize => "rest_client_request_size_bytes",
            Self::ResponseSize => "rest_client_response_size_bytes",
            Self::RateLimiterLatency => "rest_client_rate_limiter_duration_seconds",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Self::RequestLatency => "Request latency in seconds, by verb and host.",
            Self::RequestSize => "Request size in bytes, by verb and host.",
            Self::ResponseSize => "Response size in bytes, by verb and host.",
            Self::RateLimiterLatency => {
                "Client-side rate limiter latency in seconds, by verb and host."
            }
        }
    }

    fn buckets(self) -> fn() -> Histogram {
        match self {
            Self::RequestSize | Self::ResponseSize => || Histogram::new(SIZE_BUCKETS),
            Self::RequestLatency | Self::RateLimiterLatency => || Histogram::new(DURATION_BUCKETS),
        }
    }

    /// How many there are: the slots of [`RestClientMetrics`], one per variant.
    const COUNT: usize = 4;

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct RequestLabels {
    code: String,
    method: String,
    host: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerbLabels {
    verb: String,
    host: String,
}

/// The REST client metrics of a registry: the count, and each optional histogram once
/// enabled.
#[derive(Clone, Default)]
pub(super) struct RestClientMetrics {
    pub(super) requests: Family<RequestLabels, Counter>,
    enabled: Arc<[OnceLock<HistogramFamily<VerbLabels>>; RestClientMetric::COUNT]>,
}

/// One request to the apiserver, as the manager's client saw it.
pub(crate) struct ApiserverRequest<'a> {
    pub method: &'a str,
    pub host: &'a str,
    /// The response's status code, or client-go's `<error>` for none.
    pub code: &'a str,
    pub took: Duration,
    pub request_size: Option<u64>,
    pub response_size: Option<u64>,
}

impl Metrics {
    /// Turns on client-go REST client metrics beyond `rest_client_requests_total` (which
    /// is always on), as controller-runtime v0.25's `metrics.RegisterRESTClientMetrics`;
    /// enabling one twice keeps the first.
    pub fn enable_rest_client(&self, metrics: &[RestClientMetric]) {
        for metric in metrics {
            let slot = &self.rest.enabled[metric.index()];
            let family = HistogramFamily::new_with_constructor(metric.buckets());
            if slot.set(family.clone()).is_ok() {
                lock(&self.registry).register(metric.name(), metric.help(), family);
            }
        }
    }

    /// Records one request to the apiserver.
    pub(crate) fn apiserver_request(&self, request: &ApiserverRequest<'_>) {
        self.rest
            .requests
            .get_or_create(&RequestLabels {
                code: request.code.to_owned(),
                method: request.method.to_owned(),
                host: request.host.to_owned(),
            })
            .inc();
        let observe = |metric, value| {
            self.rest
                .observe(metric, request.method, request.host, value)
        };
        observe(RestClientMetric::RequestLatency, request.took.as_secs_f64());
        if let Some(size) = request.request_size {
            observe(RestClientMetric::RequestSize, size as f64);
        }
        if let Some(size) = request.response_size {
            observe(RestClientMetric::ResponseSize, size as f64);
        }
    }

    /// Records how long a request waited for the client-side rate limiter.
    pub(crate) fn rate_limited(&self, method: &str, host: &str, waited: Duration) {
        let metric = RestClientMetric::RateLimiterLatency;
        self.rest
            .observe(metric, method, host, waited.as_secs_f64());
    }
}

impl RestClientMetrics {
    /// Observes `value` in `metric`'s histogram, if it is enabled.
    fn observe(&self, metric: RestClientMetric, verb: &str, host: &str, value: f64) {
        if let Some(family) = self.enabled[metric.index()].get() {
            let labels = VerbLabels {
                verb: verb.to_owned(),
                host: host.to_owned(),
            };
            family.get_or_create(&labels).observe(value);
        }
    }
}
