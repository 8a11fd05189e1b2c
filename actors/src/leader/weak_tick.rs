//! The leader's tick for maintenance windows that hold weak subscriptions (domain `policy/weak.rs`): the
//! replicated state records when a window that applies to a weak subscription next opens or closes; when
//! the leader's clock reaches it, one `Tick` is proposed, whose apply judges the weak subscriptions again
//! with the leader-stamped time. The shell arms a timer at that time ([`WeakTick::at`], re-read on every
//! state change), so a window's edge takes effect at once; the supervisor's liveness interval checks it
//! too, which retries a `Tick` that was not committed. One at a time.

use std::sync::Arc;

use super::host::{read_with, Host, ProposeError};
use crate::domain::{Command, Response, Timestamp};

/// Proposes the `Tick` a recorded window change asks for.
pub struct WeakTick {
    host: Arc<dyn Host>,
    /// A `Tick` is being committed.
    ticking: bool,
    /// The recorded time the last `Tick` was proposed for: the timer does not propose another for it (an
    /// apply stamped before it, under a skewed clock, leaves it recorded; the liveness check retries).
    proposed_for: Option<Timestamp>,
}

impl WeakTick {
    /// No tick in flight.
    pub fn new(host: Arc<dyn Host>) -> Self {
        Self {
            host,
            ticking: false,
            proposed_for: None,
        }
    }

    /// When the next `Tick` is due (leader's clock, ms): the recorded window change; `None` while one is
    /// being committed or none is recorded.
    pub fn at(&self) -> Option<Timestamp> {
        if self.ticking {
            return None;
        }
        read_with(&self.host, |s| s.weak_tick_at())
    }

    /// The `Tick` to propose now, if a recorded window change has come and none is being committed; with
    /// `again` false (the timer), not a second one for the same recorded time.
    pub fn due(&mut self, again: bool) -> Option<Command> {
        if self.ticking {
            return None;
        }
        let now = self.host.now_ms();
        let at = read_with(&self.host, |s| s.weak_tick_at());
        if at.is_none_or(|t| t > now) || (!again && at == self.proposed_for) {
            return None;
        }
        self.proposed_for = at;
        tracing::debug!(
            now,
            "a window change for weak subscriptions: proposing Tick"
        );
        self.ticking = true;
        Some(Command::Tick)
    }

    /// The `Tick` proposed by [`WeakTick::due`] was committed or not (a failed one is retried at the
    /// next check).
    pub fn ticked(&mut self, result: Result<Response, ProposeError>) {
        self.ticking = false;
        if let Err(e) = result {
            tracing::warn!(error = %e, "Tick for maintenance windows not committed");
        }
    }
}

#[cfg(test)]
#[path = "weak_tick_test.rs"]
mod tests;
