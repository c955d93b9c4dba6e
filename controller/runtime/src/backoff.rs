//! How a controller spaces the retries of failed reconciles, as controller-runtime's
//! default rate limiter: per object, exponential back-off (the n-th consecutive failure
//! of one object waits `base × 2^(n-1)`, capped at `max`, and a success forgets the
//! object's failures); overall, a token bucket, so that many objects failing at once are
//! retried at a bounded rate. A retry waits the longer of the two.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// controller-runtime's base delay.
const DEFAULT_BASE_DELAY: Duration = Duration::from_millis(5);
/// controller-runtime's maximum delay.
const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(1000);
/// controller-runtime's overall bucket: 10 retries a second, in bursts of up to 100.
const DEFAULT_BUCKET: Bucket = Bucket {
    per_second: 10.0,
    burst: 100,
};

/// How a controller spaces the retries of failed reconciles (controller-runtime's
/// `workqueue.TypedRateLimiter`); the default is controller-runtime's
/// `DefaultTypedControllerRateLimiter`: 5 ms doubling to 1000 s per object, and at most
/// 10 retries a second overall after a burst of 100.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimiter {
    base: Duration,
    max: Duration,
    bucket: Option<Bucket>,
}

/// A token bucket's rate and size.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bucket {
    per_second: f64,
    burst: u32,
}

impl Default for RateLimiter {
    fn default() -> Self {
        Self {
            base: DEFAULT_BASE_DELAY,
            max: DEFAULT_MAX_DELAY,
            bucket: Some(DEFAULT_BUCKET),
        }
    }
}

impl RateLimiter {
    /// Per-object exponential back-off from `base` doubling up to `max`, and no overall
    /// limit (controller-runtime's `ItemExponentialFailureRateLimiter`).
    pub fn per_item(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max: max.max(base),
            bucket: None,
        }
    }

    /// Also at most `per_second` retries a second overall, after a burst of `burst`
    /// (controller-runtime's `BucketRateLimiter`, combined by `MaxOfRateLimiter`).
    ///
    /// # Panics
    /// When `per_second` is not a positive number.
    #[must_use]
    pub fn with_bucket(self, per_second: f64, burst: u32) -> Self {
        assert!(
            per_second > 0.0 && per_second.is_finite(),
            "a bucket refills at a positive rate, not {per_second}"
        );
        Self {
            bucket: Some(Bucket {
                per_second,
                burst: burst.max(1),
            }),
            ..self
        }
    }
}

/// The retry delays of one controller's objects: failure counts per key and the bucket.
#[derive(Debug)]
pub(crate) struct Backoff<Key> {
    limiter: RateLimiter,
    failures: Mutex<HashMap<Key, u32>>,
    bucket: Mutex<BucketState>,
}

/// The tokens of a bucket at a moment; negative when retries are reserved ahead.
#[derive(Debug)]
struct BucketState {
    tokens: f64,
    at: Instant,
}

impl<Key: Hash + Eq> Default for Backoff<Key> {
    fn default() -> Self {
        Self::new(RateLimiter::default())
    }
}

impl<Key: Hash + Eq> Backoff<Key> {
    pub(crate) fn new(limiter: RateLimiter) -> Self {
        let tokens = limiter.bucket.map_or(0.0, |bucket| f64::from(bucket.burst));
        Self {
            limiter,
            failures: Mutex::new(HashMap::new()),
            bucket: Mutex::new(BucketState {
                tokens,
                at: Instant::now(),
            }),
        }
    }

    /// Records a failure of `key` and returns how long to wait before retrying it.
    pub(crate) fn next_delay(&self, key: Key) -> Duration {
        self.next_delay_at(key, Instant::now())
    }

    fn next_delay_at(&self, key: Key, now: Instant) -> Duration {
        let mut failures = lock(&self.failures);
        let count = failures.entry(key).or_insert(0);
        let exponent = *count;
        *count = count.saturating_add(1);
        // 2^exponent overflows long after the cap is reached; saturate instead.
        let factor = 1u32.checked_shl(exponent).unwrap_or(u32::MAX);
        let per_item = self
            .limiter
            .base
            .saturating_mul(factor)
            .min(self.limiter.max);
        per_item.max(self.reserve_token(now))
    }

    /// Takes a token from the bucket: how long until it is there (zero with none).
    fn reserve_token(&self, now: Instant) -> Duration {
        let Some(bucket) = self.limiter.bucket else {
            return Duration::ZERO;
        };
        let mut state = lock(&self.bucket);
        let refilled = now.saturating_duration_since(state.at).as_secs_f64() * bucket.per_second;
        state.tokens = (state.tokens + refilled).min(f64::from(bucket.burst)) - 1.0;
        state.at = now;
        if state.tokens >= 0.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(-state.tokens / bucket.per_second)
    }

    /// Forgets the failures of `key` (after a successful reconcile).
    pub(crate) fn forget(&self, key: &Key) {
        lock(&self.failures).remove(key);
    }

    /// How many consecutive failures `key` has had.
    #[cfg(test)]
    pub(crate) fn failures(&self, key: &Key) -> u32 {
        lock(&self.failures).get(key).copied().unwrap_or(0)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_five_milliseconds_to_the_cap() {
        let backoff = Backoff::new(RateLimiter::per_item(DEFAULT_BASE_DELAY, DEFAULT_MAX_DELAY));
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
    fn the_bucket_lets_a_burst_through_then_spaces_retries_at_its_rate() {
        let backoff = Backoff::new(
            RateLimiter::per_item(Duration::from_millis(1), Duration::from_millis(1))
                .with_bucket(10.0, 3),
        );
        let start = Instant::now();
        let burst: Vec<_> = (0..3)
            .map(|key| backoff.next_delay_at(key, start))
            .collect();
        assert_eq!(
            burst,
            [Duration::from_millis(1); 3],
            "the burst waits its own back-off"
        );
        let spaced: Vec<_> = (3..5)
            .map(|key| backoff.next_delay_at(key, start))
            .collect();
        assert_eq!(
            spaced,
            [Duration::from_millis(100), Duration::from_millis(200)]
        );
        // A second later the bucket holds its burst again (the debt of two paid first).
        let later = start + Duration::from_secs(1);
        assert_eq!(backoff.next_delay_at(5, later), Duration::from_millis(1));
        let default = RateLimiter::default();
        assert_eq!(
            default,
            RateLimiter::per_item(DEFAULT_BASE_DELAY, DEFAULT_MAX_DELAY).with_bucket(10.0, 100)
        );
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
