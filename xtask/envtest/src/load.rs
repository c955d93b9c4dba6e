//! Load for the webhook server: a fixed number of AdmissionReview requests at a fixed
//! concurrency, each worker on its own keep-alive connection (as the apiserver keeps
//! connections to a webhook open). Prints nothing; the caller reports the figures.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::StatusCode;

use crate::http_client::{ClientError, HttpClient};

/// What one run measured.
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// Requests sent, each answered: an error on any connection fails the whole run.
    pub requests: usize,
    /// Connections sending requests at the same time.
    pub concurrency: usize,
    /// Responses other than 200.
    pub failures: usize,
    /// Wall-clock time from the first request to the last response (connecting excluded).
    pub elapsed: Duration,
    /// Requests per second over the whole run.
    pub throughput: f64,
    /// Median request latency (nearest rank).
    pub p50: Duration,
    /// 99th-percentile request latency (nearest rank).
    pub p99: Duration,
}

/// Sends `requests` POSTs of `review` to `path` through `client`, `concurrency` at a
/// time, and measures each request's latency.
///
/// # Panics
/// When `concurrency` is zero.
pub async fn admission_load(
    client: &HttpClient,
    path: &str,
    review: Bytes,
    requests: usize,
    concurrency: usize,
) -> Result<BenchReport, ClientError> {
    assert!(concurrency > 0, "concurrency must be at least 1");
    let next = Arc::new(AtomicUsize::new(0));
    let mut connections = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        connections.push(client.connect().await?);
    }
    let started = Instant::now();
    let workers: Vec<_> = connections
        .into_iter()
        .map(|mut connection| {
            let next = next.clone();
            let review = review.clone();
            let path = path.to_owned();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut failures = 0;
                while next.fetch_add(1, Ordering::Relaxed) < requests {
                    let request = connection.json_post(&path, review.clone())?;
                    let sent = Instant::now();
                    let reply = connection.send(request).await?;
                    latencies.push(sent.elapsed());
                    if reply.status != StatusCode::OK {
                        failures += 1;
                    }
                }
                Ok::<_, ClientError>((latencies, failures))
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(requests);
    let mut failures = 0;
    for worker in workers {
        let (worker_latencies, worker_failures) =
            worker.await.expect("a benchmark worker panicked")?;
        latencies.extend(worker_latencies);
        failures += worker_failures;
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    Ok(BenchReport {
        requests: latencies.len(),
        concurrency,
        failures,
        elapsed,
        throughput: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: percentile(&latencies, 50),
        p99: percentile(&latencies, 99),
    })
}

/// The nearest-rank percentile of sorted samples (zero when there are none).
pub fn percentile(sorted: &[Duration], percent: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (sorted.len() * percent).div_ceil(100).max(1);
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&samples, 50), Duration::from_millis(50));
        assert_eq!(percentile(&samples, 99), Duration::from_millis(99));
        assert_eq!(percentile(&samples[..1], 99), Duration::from_millis(1));
        assert_eq!(percentile(&[], 50), Duration::ZERO);
        let samples: Vec<Duration> = (1..=200).map(Duration::from_millis).collect();
        assert_eq!(percentile(&samples, 50), Duration::from_millis(100));
        assert_eq!(percentile(&samples, 99), Duration::from_millis(198));
    }
}
