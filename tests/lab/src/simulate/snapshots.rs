//! A simulated server asks for its own snapshots as convoy's replica does (`convoy_raft::node::
//! snapshot_due`, openraft's own policy being `Never`): whenever the applied index is far enough past
//! the last snapshot, the interval scaled by the last snapshot's size. Without it a restarted server
//! replayed its whole log since the last snapshot fault, thousands of entries, at every restart.

use std::time::Duration;

use openraft::async_runtime::WatchReceiver as _;

use convoy_raft::node::snapshot_due::{entries_between, Due};

use super::executor;
use super::log_store::lock;
use super::net::SimRaft;
use super::sm_store::SharedSnapshot;

/// The least time between two checks (convoy's `CHECK_GAP`).
const CHECK_GAP: Duration = Duration::from_millis(5);

/// Spawns, owned by server `id` (so a crash stops it), the task asking `raft` for a snapshot when
/// one is due: `every` to `max_every` entries after the last, by the size of `snapshot`.
pub fn spawn(id: u64, raft: SimRaft, snapshot: SharedSnapshot, every: u64, max_every: u64) {
    executor::spawn_owned(id, async move {
        let mut due = Due::default();
        let mut metrics = raft.metrics();
        loop {
            if metrics.changed().await.is_err() {
                return;
            }
            let (applied, last) = {
                let m = metrics.borrow_watched();
                if m.running_state.is_err() {
                    return;
                }
                let index = |l: Option<u64>| l.unwrap_or(0);
                (
                    index(m.last_applied.as_ref().map(|l| l.index)),
                    index(m.snapshot.as_ref().map(|l| l.index)),
                )
            };
            if due.may_be_due(applied, last, every) {
                let bytes = lock(&snapshot).as_ref().map_or(0, |(_, b)| b.len() as u64);
                if due.check(applied, last, entries_between(every, max_every, bytes))
                    && raft.trigger().snapshot().await.is_err()
                {
                    return;
                }
            }
            executor::sleep(CHECK_GAP).await;
        }
    });
}
