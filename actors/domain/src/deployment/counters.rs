//! A deployment's progress bookkeeping in small types: the forward cursor and its window slots, the tally of
//! finished nodes, the rollback cursor, and the healthy watches. Each is a run of consecutive `Deployment` fields it replaced, in
//! the same order, so snapshots keep their bytes (bincode writes a struct's fields one after another).

use crate::values::ids::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Going forward: how far admission walked the fixed order, and the window slots taken.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForwardCursor {
    /// Next position to consider for the install window (positions before it were admitted or passed over).
    pub install_cursor: u32,
    /// Next position to consider for the download window; never behind `install_cursor` once prefetching.
    pub download_cursor: u32,
    /// Install slots taken: installing, watching and (rolling) failed nodes.
    pub install_used: u32,
    /// Download slots taken: downloading and downloaded nodes.
    pub download_used: u32,
    /// Nodes of the current batch (batch strategy) that have not finished; the next batch waits for 0.
    pub batch_open: u32,
    /// Batches after which the deployment auto-paused (so it pauses once per batch).
    pub autopaused: u32,
}

impl ForwardCursor {
    /// A node enters the install window (and, in a batch, the open batch).
    pub fn take_install(&mut self) {
        self.install_used += 1;
        self.batch_open += 1;
    }

    /// A node leaves the install window: it succeeded or was skipped. Its batch slot closes with it.
    pub fn release_install(&mut self) {
        self.install_used -= 1;
        self.close_batch_slot();
    }

    /// A node of the open batch finished without leaving the install window (it failed and keeps its slot).
    pub fn close_batch_slot(&mut self) {
        self.batch_open = self.batch_open.saturating_sub(1);
    }
}

/// How many nodes ended each way.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Nodes that succeeded.
    pub succeeded: u32,
    /// Nodes that failed for good going forward (out of retries).
    pub failed: u32,
    /// Nodes skipped: inactive, no longer interested, or removed from the consumer.
    pub skipped: u32,
}

impl Tally {
    /// Nodes that count toward completion: the `nodes` of the deployment minus the skipped ones.
    pub fn considered(&self, nodes: u32) -> u32 {
        nodes - self.skipped
    }

    /// Nodes that ended one way or another.
    pub fn ended(&self) -> u32 {
        self.succeeded + self.failed + self.skipped
    }
}

/// Rolling back: how far the walk back over the admitted nodes (newest first) went, and its slots.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RollbackCursor {
    /// Entries of the reversed admission order (`touched`) already re-targeted or passed over.
    pub cursor: u32,
    /// Nodes rolling back now (rollback slots taken).
    pub used: u32,
    /// Rollback batches formed (batch strategy: batches are undone newest first).
    pub batch: u32,
    /// Nodes whose rollback failed; one is enough to end the rollback FAILED.
    pub failed: u32,
    /// Nodes counted back that run the deployment's version again (an install overtaken by the rollback
    /// finished after all), in the walk back's order (the reverse of the forward order, whatever order their
    /// reports came in): each waits for a free rollback slot like any other, so the install window holds
    /// during a rollback too.
    pub again: Vec<u32>,
}

/// Nodes in their healthy watch (installed, healthy, inside `min_healthy_ms`), by the time the watch ends,
/// then position. Encoded as the set it wraps.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Watches(BTreeSet<(Timestamp, u32)>);

impl Watches {
    /// The node at position `p` watches until `until`.
    pub fn start(&mut self, until: Timestamp, p: u32) {
        self.0.insert((until, p));
    }

    /// The watch of `p` ending at `until` is over (the node succeeded, failed or was skipped).
    pub fn stop(&mut self, until: Timestamp, p: u32) {
        self.0.remove(&(until, p));
    }

    /// When the first watch ends.
    pub fn next_end(&self) -> Option<Timestamp> {
        self.0.first().map(|w| w.0)
    }

    /// The position of the first watch that ended by `at`.
    pub fn first_ended(&self, at: Timestamp) -> Option<u32> {
        self.0.first().filter(|w| w.0 <= at).map(|w| w.1)
    }

    /// Forgets the first watch (one whose node is no longer watching).
    pub fn drop_first(&mut self) {
        self.0.pop_first();
    }

    /// Forgets every watch (retention strips a finished deployment).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
#[path = "counters_test.rs"]
mod tests;
