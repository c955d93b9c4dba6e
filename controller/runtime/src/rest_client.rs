//! The manager's client to the apiserver: the client it is given, with client-go's REST
//! client metrics (`rest_client_requests_total`, and those a program enables:
//! [`RestClientMetric`](crate::metrics::RestClientMetric)) and, with `--kube-api-qps`,
//! client-side rate limiting as client-go's token bucket.
//! Every controller, cache and runnable of the manager talks through it.
//!
//! For fault tests, and only in a build with the `faults` feature,
//! `KUBEBUILDER_CRASH_AFTER="<METHOD> <path suffix>"` (e.g. `POST /jobs`) makes the process
//! SIGKILL itself the moment the apiserver accepts such a request: a crash between two
//! writes, at a chosen point, without a line of test code in the reconciler. A production
//! manager has no such hook (`cargo xtask docker-build` checks).

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use http::{Request, Response};
use hyper::body::Body as _;
use kube::Client;
use kube::client::Body;

use crate::metrics::{ApiserverRequest, Metrics};

/// `client` measured into `metrics`, its requests labelled with the apiserver's `host`,
/// and limited to `qps` requests per second with bursts of `burst` when `qps` > 0.
pub(crate) fn instrument(
    client: Client,
    host: &str,
    qps: f32,
    burst: u32,
    metrics: Metrics,
) -> Client {
    let instrumented = Arc::new(Instrumented {
        host: host.into(),
        limiter: (qps > 0.0).then(|| Arc::new(TokenBucket::new(f64::from(qps), burst))),
        metrics,
        #[cfg(feature = "faults")]
        crash_after: CrashAfter::from_env(),
    });
    wrap(client, move |client, request| {
        let instrumented = instrumented.clone();
        async move { instrumented.send(&client, request).await }
    })
}

/// `client` with each request handed to `send(client, request)`: how this crate layers
/// behaviour (metrics, fencing, watch health) over the client it is given.
pub(crate) fn wrap<F, Fut>(client: Client, send: F) -> Client
where
    F: Fn(Client, Request<Body>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<Response<Body>, kube::Error>> + Send + 'static,
{
    let default_namespace = client.default_namespace().to_owned();
    Client::new(Wrapped { client, send }, default_namespace)
}

#[derive(Clone)]
struct Wrapped<F> {
    client: Client,
    send: F,
}

impl<F, Fut> tower::Service<Request<Body>> for Wrapped<F>
where
    F: Fn(Client, Request<Body>) -> Fut,
    Fut: Future<Output = Result<Response<Body>, kube::Error>> + Send + 'static,
{
    type Response = Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, kube::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), kube::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        Box::pin((self.send)(self.client.clone(), request))
    }
}

struct Instrumented {
    host: Arc<str>,
    limiter: Option<Arc<TokenBucket>>,
    metrics: Metrics,
    #[cfg(feature = "faults")]
    crash_after: Option<CrashAfter>,
}

impl Instrumented {
    async fn send(
        &self,
        client: &Client,
        request: Request<Body>,
    ) -> Result<Response<Body>, kube::Error> {
        let method = request.method().to_string();
        if let Some(limiter) = &self.limiter {
            let waited = limiter.acquire().await;
            self.metrics.rate_limited(&method, &self.host, waited);
        }
        let request_size = request.body().size_hint().exact();
        #[cfg(feature = "faults")]
        let crash = self
            .crash_after
            .as_ref()
            .is_some_and(|crash| crash.matches(&method, request.uri().path()));
        let started = Instant::now();
        let result = client.send(request).await;
        let took = started.elapsed();
        let (code, response_size) = match &result {
            Ok(response) => (
                response.status().as_u16().to_string(),
                response.body().size_hint().exact(),
            ),
            // client-go's label for a request that got no response.
            Err(_) => ("<error>".to_owned(), None),
        };
        self.metrics.apiserver_request(&ApiserverRequest {
            method: &method,
            host: &self.host,
            code: &code,
            took,
            request_size,
            response_size,
        });
        #[cfg(feature = "faults")]
        if crash
            && result
                .as_ref()
                .is_ok_and(|response| response.status().is_success())
        {
            CrashAfter::crash(&method);
        }
        result
    }
}

/// The request after whose success the process kills itself (`KUBEBUILDER_CRASH_AFTER`).
#[cfg(feature = "faults")]
#[derive(Debug, PartialEq)]
struct CrashAfter {
    method: String,
    path_suffix: String,
}

#[cfg(feature = "faults")]
impl CrashAfter {
    const ENV: &str = "KUBEBUILDER_CRASH_AFTER";

    fn from_env() -> Option<Self> {
        Self::parse(&std::env::var(Self::ENV).ok()?)
    }

    fn parse(value: &str) -> Option<Self> {
        let (method, path_suffix) = value.trim().split_once(' ')?;
        Some(Self {
            method: method.to_ascii_uppercase(),
            path_suffix: path_suffix.trim().to_owned(),
        })
    }

    fn matches(&self, method: &str, path: &str) -> bool {
        method == self.method && path.ends_with(&self.path_suffix)
    }

    fn crash(method: &str) -> ! {
        tracing::error!(%method, "{} matched: SIGKILL", Self::ENV);
        // SAFETY: raise only sends a signal to this process; SIGKILL cannot be handled.
        unsafe { libc::raise(libc::SIGKILL) };
        unreachable!("SIGKILL ends the process")
    }
}

/// client-go's `flowcontrol.NewTokenBucketRateLimiter`: `qps` tokens a second, at most
/// `burst` saved up; a request without a token waits its turn.
struct TokenBucket {
    qps: f64,
    burst: f64,
    /// Tokens available (negative: promised to waiting requests), as of the instant.
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    fn new(qps: f64, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            qps,
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    /// How long the caller must wait for its token (taken now).
    fn reserve(&self, now: Instant) -> Duration {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (tokens, last) = *state;
        let refilled =
            (tokens + now.saturating_duration_since(last).as_secs_f64() * self.qps).min(self.burst);
        let left = refilled - 1.0;
        *state = (left, now);
        if left >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-left / self.qps)
        }
    }

    /// Waits for a token; how long it waited.
    async fn acquire(&self) -> Duration {
        let wait = self.reserve(Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "faults")]
    #[test]
    fn a_crash_point_names_a_method_and_a_path_suffix() {
        let crash = CrashAfter::parse("post /jobs").unwrap();
        assert!(crash.matches("POST", "/apis/batch/v1/namespaces/ns/jobs"));
        assert!(!crash.matches("PUT", "/apis/batch/v1/namespaces/ns/jobs"));
        assert!(!crash.matches("POST", "/apis/batch/v1/namespaces/ns/jobs/j/status"));
        assert_eq!(CrashAfter::parse("POST"), None);
    }

    #[test]
    fn bursts_then_spaces_requests_at_the_rate() {
        let bucket = TokenBucket::new(10.0, 3);
        let start = Instant::now();
        let waits: Vec<_> = (0..5).map(|_| bucket.reserve(start)).collect();
        assert_eq!(waits[..3], [Duration::ZERO; 3], "the burst goes at once");
        assert_eq!(waits[3], Duration::from_millis(100));
        assert_eq!(waits[4], Duration::from_millis(200));
        // A second later the bucket has refilled (up to the burst only).
        let later = start + Duration::from_secs(10);
        assert_eq!(bucket.reserve(later), Duration::ZERO);
        assert_eq!(bucket.reserve(later), Duration::ZERO);
        assert_eq!(bucket.reserve(later), Duration::ZERO);
        assert!(bucket.reserve(later) > Duration::ZERO);
    }
}
