//! When a replica builds a snapshot: after `snapshot_every` entries while the state is small, and
//! less often as it grows, so that the serialization a snapshot costs is spread over at least one
//! applied entry per [`SNAPSHOT_BYTES_PER_ENTRY`] bytes of snapshot.
//!
//! A snapshot serializes the whole state. With a fixed interval its cost per write grows with the
//! state: every 10,000 entries at 1M objects (a 35–110 MB snapshot) is 3.5–11 KB serialized per
//! write on each of the three servers at once. Scaling the interval by the last snapshot's size
//! keeps that cost per write constant, and [`RaftConfig::snapshot_max_every`] bounds the log a
//! restart replays (1M entries replay in about a second, docs/BENCHMARKS.md).
//!
//! [`RaftConfig::snapshot_max_every`]: super::RaftConfig::snapshot_max_every

use std::path::PathBuf;
use std::time::Duration;

use openraft::async_runtime::WatchReceiver;
use openraft::type_config::alias::LogIdOf;

use crate::sm_store::SmStore;
use crate::state_machine::StateMachine;
use crate::types::Raft;

/// Snapshot bytes each applied entry pays for: a snapshot of `S` bytes is due `S / 64` entries
/// after the last one (when that is more than `snapshot_every`).
pub const SNAPSHOT_BYTES_PER_ENTRY: u64 = 64;

/// The least time between two checks of whether a snapshot is due.
const CHECK_GAP: Duration = Duration::from_millis(5);

/// Entries between two snapshots, given the size of the last one: `snapshot_bytes /`
/// [`SNAPSHOT_BYTES_PER_ENTRY`], at least `every` and at most `max_every` (never below `every`).
pub fn entries_between(every: u64, max_every: u64, snapshot_bytes: u64) -> u64 {
    (snapshot_bytes / SNAPSHOT_BYTES_PER_ENTRY).clamp(every, max_every.max(every))
}

/// Whether a snapshot is due, remembering the last index one was asked for so that a build in
/// flight is not asked for again (as openraft's own `LogsSinceLast` does).
#[derive(Debug, Default)]
pub struct Due {
    asked_at: u64,
}

impl Due {
    /// Whether a snapshot can be due with any interval of at least `every` entries: a cheap test
    /// before [`Due::check`] needs the interval.
    pub fn may_be_due(&self, applied: u64, snapshot: u64, every: u64) -> bool {
        applied >= self.asked_at.max(snapshot).saturating_add(every)
    }

    /// True (and remembered) when `applied` is at least `between` entries past both the last
    /// snapshot and the last request for one.
    pub fn check(&mut self, applied: u64, snapshot: u64, between: u64) -> bool {
        let base = self.asked_at.max(snapshot);
        if applied >= base.saturating_add(between) {
            self.asked_at = applied;
            return true;
        }
        false
    }
}

/// Asks openraft for a snapshot whenever one is due (openraft's own policy is `Never`), until raft
/// stops. The size of the last snapshot is the size of `snapshot_file` (the current one).
pub(super) fn spawn(
    raft: Raft<SmStore<impl StateMachine>>,
    every: u64,
    max_every: u64,
    snapshot_file: PathBuf,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut due = Due::default();
        let mut metrics = raft.metrics();
        loop {
            // Checked when something was applied (as openraft checks its own policy), at most
            // every CHECK_GAP: metrics change with every applied batch.
            if metrics.changed().await.is_err() {
                return;
            }
            let (applied, snapshot) = {
                let m = metrics.borrow_watched();
                if m.running_state.is_err() {
                    return;
                }
                let index =
                    |l: &Option<LogIdOf<crate::TypeConfig>>| l.as_ref().map_or(0, |l| l.index);
                (index(&m.last_applied), index(&m.snapshot))
            };
            // The file's size matters only once the smallest interval has passed.
            if due.may_be_due(applied, snapshot, every) {
                let bytes = std::fs::metadata(&snapshot_file).map_or(0, |m| m.len());
                if due.check(applied, snapshot, entries_between(every, max_every, bytes)) {
                    tracing::debug!(applied, snapshot, bytes, "a snapshot is due");
                    if raft.trigger().snapshot().await.is_err() {
                        return;
                    }
                }
            }
            tokio::time::sleep(CHECK_GAP).await;
        }
    })
}

#[cfg(test)]
#[path = "snapshot_due_test.rs"]
mod tests;
