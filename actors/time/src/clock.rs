//! The clock seam: wall time (milliseconds since the Unix epoch, the unit of every event time convoy
//! stores) and monotonic time (for timeouts and elapsed times), behind one trait.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Where convoy reads the time.
pub trait Clock: Debug + Send + Sync {
    /// Milliseconds since the Unix epoch; 0 for a clock set before 1970.
    fn wall_ms(&self) -> u64;
    /// A monotonic instant, for elapsed times and deadlines (never goes back).
    fn now(&self) -> Instant;
}

/// A clock shared by the tasks of one process.
pub type SharedClock = Arc<dyn Clock>;

/// The operating system's clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn wall_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// The system clock as a [`SharedClock`].
pub fn system() -> SharedClock {
    Arc::new(SystemClock)
}

#[cfg(test)]
#[path = "clock_test.rs"]
mod tests;
