//! Start jitter for weak subscriptions (issue 35 §6): a weak subscription's `start_jitter_ms` spreads its
//! nodes' moves to a newly selected version, as a deployment's start jitter spreads its first admissions, so
//! a publish does not send a whole fleet to one artifact server at once.
//!
//! Design. When the selection of a jittered weak subscription changes (or the jitter is set), the apply
//! records a [`Spread`]: the version, since when (the leader-stamped time of that apply) and the time the
//! spread was last judged at. Node `n` may move forward to that version once `since + offset(n) <= judged`,
//! where the offset is a hash of the consumer, the resource, the version and the node in `[0, jitter)`
//! (FNV-1a; no random number and no server's own clock, so every server answers a node alike). The spread
//! records the next node's time (`next`); the leader ticks then (`leader/weak_tick.rs`) and that apply moves
//! `judged` forward. A move back to an older version (a hold, a retraction) is never jittered.

use crate::deployment::jitter::fnv1a;
use crate::values::ids::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One weak subscription's spread over its nodes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Spread {
    /// The version being spread.
    pub version: u64,
    /// Since when (ms, leader-stamped): the apply that selected it.
    pub since: Timestamp,
    /// The time it was last judged at: every node whose time is at or before it is released.
    pub judged: Timestamp,
    /// The next node's time after `judged`, if any node is still held: the leader ticks then.
    pub next: Option<Timestamp>,
    /// How many nodes the consumer had when `next` was computed: a node added or removed computes it again.
    pub nodes: u32,
}

impl Spread {
    /// Whether a node with `offset` may move to the spread's version.
    pub fn releases(&self, offset: u64) -> bool {
        self.since.saturating_add(offset) <= self.judged
    }
}

/// The spreads of the jittered weak subscriptions, by (consumer, resource).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeakJitter {
    /// Each jittered weak subscription's spread.
    pub spreads: BTreeMap<(String, String), Spread>,
}

impl WeakJitter {
    /// The spread of `consumer`'s weak subscription to `resource`, if it is jittered.
    pub fn spread(&self, consumer: &str, resource: &str) -> Option<&Spread> {
        if self.spreads.is_empty() {
            return None;
        }
        self.spreads
            .get(&(consumer.to_string(), resource.to_string()))
    }

    /// The earliest next node's time of every spread: when the leader ticks.
    pub fn next_at(&self) -> Option<Timestamp> {
        self.spreads.values().filter_map(|s| s.next).min()
    }

    /// Whether a spread's next node's time has come at `now`.
    pub fn due(&self, now: Timestamp) -> bool {
        self.next_at().is_some_and(|t| t <= now)
    }
}

/// Node `node`'s offset in the spread of `version` of `resource` on `consumer` under `jitter_ms` (0: none):
/// in `[0, jitter_ms)`.
pub fn offset(consumer: &str, resource: &str, version: u64, node: &str, jitter_ms: u64) -> u64 {
    if jitter_ms == 0 {
        return 0;
    }
    let key = consumer
        .bytes()
        .chain([0])
        .chain(resource.bytes())
        .chain([0])
        .chain(version.to_be_bytes())
        .chain([0])
        .chain(node.bytes());
    fnv1a(key) % jitter_ms
}

#[cfg(test)]
#[path = "weak_jitter_test.rs"]
mod tests;
