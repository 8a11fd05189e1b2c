//! A clock for tests: it stands still until the test moves it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::Clock;

/// A clock that moves only when told; clones share the same time.
#[derive(Clone, Debug)]
pub struct ManualClock {
    inner: Arc<Mutex<Reading>>,
}

#[derive(Debug)]
struct Reading {
    wall_ms: u64,
    now: Instant,
}

impl ManualClock {
    /// A clock showing `wall_ms` (milliseconds since the epoch); its monotonic time starts at the real
    /// instant of the call.
    pub fn new(wall_ms: u64) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Reading {
                wall_ms,
                now: Instant::now(),
            })),
        }
    }

    /// Moves both times forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        r.wall_ms = r
            .wall_ms
            .saturating_add(u64::try_from(by.as_millis()).unwrap_or(u64::MAX));
        r.now += by;
    }

    /// Sets the wall time alone (a wall clock may jump, backwards too; the monotonic time does not).
    pub fn set_wall_ms(&self, wall_ms: u64) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).wall_ms = wall_ms;
    }
}

impl Clock for ManualClock {
    fn wall_ms(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).wall_ms
    }

    fn now(&self) -> Instant {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).now
    }
}

#[cfg(test)]
#[path = "manual_test.rs"]
mod tests;
