//! Per-object exponential back-off after reconcile errors, as controller-runtime's
//! default rate limiter (`ItemExponentialFailureRateLimiter(5ms, 1000s)`): the n-th
//! consecutive failure of one object waits `5 ms × 2^(n-1)`, capped at 1000 s, and a
//! success forgets the object's failures.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// controller-runtime's base delay.
pub const DEFAULT_BASE_DELAY: Duration = Duration::from_millis(5);
/// controller-runtime's maximum delay.
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(1000);

/// Failure counts per key and the delay they give.
#[derive(Debug)]
pub struct Backoff<Key> {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<Key, u32>>,
}

impl<Key: Hash + Eq> Default for Backoff<Key> {
    fn default() -> Self {
        Self::new(DEFAULT_BASE_DELAY, DEFAULT_MAX_DELAY)
    }
}

impl<Key: Hash + Eq> Backoff<Key> {
    /// A back-off starting at `base` and doubling up to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Records a failure of `key` and returns how long to wait before retrying it.
    pub fn next_delay(&self, key: Key) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let count = failures.entry(key).or_insert(0);
        let exponent = *count;
        *count = count.saturating_add(1);
        // 2^exponent overflows long after the cap is reached; saturate instead.
        let factor = 1u32.checked_shl(exponent).unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.max)
    }

    /// Forgets the failures of `key` (after a successful reconcile).
    pub fn forget(&self, key: &Key) {
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }

    /// How many consecutive failures `key` has had.
    pub fn failures(&self, key: &Key) -> u32 {
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_five_milliseconds_to_the_cap() {
        let backoff = Backoff::default();
        let delays: Vec<_> = (0..30).map(|_| backoff.next_delay("a")).collect();
        assert_eq!(delays[0], Duration::from_millis(5));
        assert_eq!(delays[1], Duration::from_millis(10));
        assert_eq!(delays[2], Duration::from_millis(20));
        assert_eq!(delays[10], Duration::from_millis(5 * 1024));
        // 5 ms × 2^17 = 655.36 s is the last step below the cap; 2^18 would be 1310.72 s.
        assert_eq!(delays[17], Duration::from_millis(655_360));
        assert_eq!(delays[18], Duration::from_secs(1000));
        assert_eq!(delays[29], Duration::from_secs(1000));
        assert_eq!(backoff.failures(&"a"), 30);
    }

    #[test]
    fn never_overflows_after_many_failures() {
        let backoff = Backoff::default();
        for _ in 0..100 {
            assert!(backoff.next_delay(1) <= DEFAULT_MAX_DELAY);
        }
        assert_eq!(backoff.next_delay(1), DEFAULT_MAX_DELAY);
    }

    #[test]
    fn objects_back_off_independently_and_success_resets() {
        let backoff = Backoff::default();
        backoff.next_delay("a");
        backoff.next_delay("a");
        assert_eq!(backoff.next_delay("b"), Duration::from_millis(5));
        assert_eq!(backoff.next_delay("a"), Duration::from_millis(20));
        backoff.forget(&"a");
        assert_eq!(backoff.failures(&"a"), 0);
        assert_eq!(backoff.next_delay("a"), Duration::from_millis(5));
        assert_eq!(backoff.failures(&"b"), 1);
    }
}
