//! Time as reconcilers see it: the system clock in production, a settable clock in
//! tests, so schedule logic can be exercised at any instant without waiting.

use std::sync::{Arc, Mutex, PoisonError};

use jiff::{SignedDuration, Timestamp};

/// The source of "now" for reconcilers.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The real time of the machine.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that stands still until the test sets or advances it. Clones share the time.
#[derive(Clone, Debug)]
pub struct TestClock {
    now: Arc<Mutex<Timestamp>>,
}

impl TestClock {
    /// A clock showing `now`.
    pub fn new(now: Timestamp) -> Self {
        Self {
            now: Arc::new(Mutex::new(now)),
        }
    }

    /// Moves the clock to `now` (backwards too: clock skew is a case worth testing).
    pub fn set(&self, now: Timestamp) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = now;
    }

    /// Moves the clock forward by `by`.
    ///
    /// # Panics
    /// When the result is outside jiff's timestamp range.
    pub fn advance(&self, by: SignedDuration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now = now
            .checked_add(by)
            .expect("test clock advanced out of range");
    }
}

impl Clock for TestClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_clock_is_shared_between_clones_and_moves_only_when_told() {
        let start: Timestamp = "2026-01-05T09:00:00Z".parse().unwrap();
        let clock = TestClock::new(start);
        let seen_by_reconciler: Arc<dyn Clock> = Arc::new(clock.clone());
        assert_eq!(seen_by_reconciler.now(), start);
        clock.advance(SignedDuration::from_secs(90));
        assert_eq!(seen_by_reconciler.now().to_string(), "2026-01-05T09:01:30Z");
        clock.set(start);
        assert_eq!(seen_by_reconciler.now(), start);
    }

    #[test]
    fn system_clock_follows_real_time() {
        let before = Timestamp::now();
        let now = SystemClock.now();
        assert!(now >= before);
    }
}
