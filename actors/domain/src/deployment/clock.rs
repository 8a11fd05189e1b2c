//! The active clock as data: milliseconds banked while a deployment moved, and since when it moves (DEPLOYMENTS.md
//! §6 "One clock"). When it runs and what counts in it is `active.rs`.

use crate::values::ids::Timestamp;
use serde::{Deserialize, Serialize};

/// Milliseconds of active time banked, and since when it runs (`None`: stopped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ActiveClock {
    banked: u64,
    since: Option<Timestamp>,
}

impl ActiveClock {
    /// A clock at zero, running from `at` when `running`.
    pub fn new(at: Timestamp, running: bool) -> Self {
        ActiveClock {
            banked: 0,
            since: running.then_some(at),
        }
    }

    /// Active ms at wall time `at`.
    pub fn at(&self, at: Timestamp) -> u64 {
        self.banked
            .saturating_add(self.since.map_or(0, |s| at.saturating_sub(s)))
    }

    /// Stops it at `at`, banking what ran.
    pub fn stop(&mut self, at: Timestamp) {
        if self.since.is_some() {
            self.banked = self.at(at);
            self.since = None;
        }
    }

    /// Lets it run from `at`.
    pub fn start(&mut self, at: Timestamp) {
        if self.since.is_none() {
            self.since = Some(at);
        }
    }

    /// The wall time at which it reaches `active` ms, while it runs (`None` when stopped: nothing is due).
    pub fn wall(&self, active: u64) -> Option<Timestamp> {
        self.since
            .map(|s| s.saturating_add(active.saturating_sub(self.banked)))
    }
}

#[cfg(test)]
#[path = "active_test.rs"]
mod tests;
