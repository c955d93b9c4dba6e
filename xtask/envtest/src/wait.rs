//! Waiting for what controllers and the apiserver do asynchronously, in tests.

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `check` every 50 ms until it returns `Some`, failing the test after `timeout`
/// with a message naming `what` was awaited.
///
/// # Panics
/// When `timeout` passes first.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
