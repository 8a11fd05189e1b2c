//! convoy-time: the one clock seam and the one duration parser, below every other convoy crate.
//!
//! Code that needs the time asks a [`Clock`] ([`SystemClock`] in production, `ManualClock` in tests
//! with the `testing` feature), so that a later deterministic simulation can drive it. Durations typed
//! by people (flags, `CONVOY_*` variables, config keys) are read by [`parse_duration`] and
//! [`parse_millis`]; docs/CLI.md states the rule for a bare number.

mod clock;
mod duration;
#[cfg(any(test, feature = "testing"))]
mod manual;

pub use clock::{system, Clock, SharedClock, SystemClock};
pub use duration::{parse_duration, parse_millis, DurationError};
#[cfg(any(test, feature = "testing"))]
pub use manual::ManualClock;
