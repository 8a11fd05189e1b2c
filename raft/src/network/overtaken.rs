//! A follower whose own log already holds the entry a snapshot ends at takes the snapshot as the
//! heartbeat it stands for, instead of installing it, so openraft's log IO cursor never goes back
//! (issue 39 §7).
//!
//! The course (seeds 7200050, 2027621, 1094, 1919, 1943 of the simulator; convoy's real stores can
//! meet it too): a follower took leader L's entries up to `last` (submitted to its log store, some
//! not acknowledged yet, or acknowledged on a path that was slow), and L, whose progress for it
//! lagged, had purged its log and sent a snapshot ending at `s < last` instead. The follower has
//! not learned that `s` is committed (L's commit index has not reached it: L sends it no heartbeat
//! while the snapshot is in flight), so openraft's follower handler installs the snapshot and
//! submits the log IO `(L, s)` after `(L, last)`: its debug assertion `expect submitted <
//! new_submitted` (`io_progress.rs`) stops the process, and a release build moves the cursor back.
//!
//! Nothing in that snapshot is news to the follower: its log holds the entry `s`, with the same log
//! id. And a snapshot's last entry is committed (a snapshot covers applied entries), so it is in L's
//! log (leader completeness) and L's commit is at least `s`. The heartbeat L could send, "under my
//! vote, your log matches mine at `s`, and my commit is `s`", is therefore true, and the server
//! hands that heartbeat to its raft core first ([`heartbeat`]). openraft then knows `s` committed,
//! and answers the snapshot without installing anything (it is not past the follower's committed
//! log), as it does for any snapshot a follower's log already covers. Refusing the snapshot instead
//! and waiting for L's commit would wait for ever: L sends only the snapshot (seed 1919).

use openraft::raft::AppendEntriesRequest;
use openraft::type_config::alias::{LogIdOf, SnapshotMetaOf, VoteOf};
use openraft::vote::RaftCommittedLeaderId;
use openraft::{LogId, RaftState, RaftTypeConfig};

/// A snapshot the follower's log has overtaken: it holds the entry at `snapshot`, and ends at `last`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the snapshot up to index {snapshot} is already in this server's log (which ends at {last}), not yet known committed here; taken as the leader's heartbeat at {snapshot}"
)]
pub struct Overtaken {
    /// The index the snapshot ends at.
    pub snapshot: u64,
    /// The index of the last entry of the follower's log.
    pub last: u64,
}

/// Whether the log has overtaken a snapshot ending at `snapshot`: the follower's committed log is
/// `committed`, its log holds `at_index` at the snapshot's index and ends at `last`.
pub fn overtaken<CLID: RaftCommittedLeaderId>(
    snapshot: &LogId<CLID>,
    committed: Option<&LogId<CLID>>,
    at_index: Option<&LogId<CLID>>,
    last: Option<&LogId<CLID>>,
) -> Option<Overtaken> {
    if Some(snapshot) <= committed {
        // openraft answers it without installing anything.
        return None;
    }
    match (at_index, last) {
        (Some(at), Some(last)) if at == snapshot => Some(Overtaken {
            snapshot: snapshot.index,
            last: last.index,
        }),
        _ => None,
    }
}

/// [`overtaken`] on the state of the raft core that would install a snapshot ending at `snapshot`.
pub fn judge<C: RaftTypeConfig>(
    state: &RaftState<C>,
    snapshot: Option<&LogIdOf<C>>,
) -> Option<Overtaken> {
    let snapshot = snapshot?;
    overtaken(
        snapshot,
        state.local_committed(),
        state.log_ids.get(snapshot.index).as_ref(),
        state.log_ids.last(),
    )
}

/// The heartbeat a snapshot ending at `snapshot`, sent under `vote`, stands for: the sender's log
/// matches at `snapshot`, and its commit is at least there.
pub fn heartbeat<C: RaftTypeConfig>(
    vote: &VoteOf<C>,
    snapshot: &LogIdOf<C>,
) -> AppendEntriesRequest<C> {
    AppendEntriesRequest {
        vote: vote.clone(),
        prev_log_id: Some(snapshot.clone()),
        entries: Vec::new(),
        leader_commit: Some(snapshot.clone()),
    }
}

/// Before `raft` installs the snapshot `meta` sent under `vote`: when its log has overtaken the
/// snapshot ([`judge`]), hands it the [`heartbeat`] the snapshot stands for. Errors are the core's
/// (it stopped), as the text the transport sends back.
pub async fn prepare<C, SM>(
    raft: &openraft::Raft<C, SM>,
    vote: &VoteOf<C>,
    meta: &SnapshotMetaOf<C>,
) -> Result<(), String>
where
    C: RaftTypeConfig,
    SM: openraft::storage::RaftStateMachine<C>,
{
    let Some(snapshot) = meta.last_log_id.clone() else {
        return Ok(());
    };
    let last = Some(snapshot.clone());
    let judged = raft
        .with_raft_state(move |state| judge(state, last.as_ref()))
        .await
        .map_err(|e| e.to_string())?;
    if let Some(overtaken) = judged {
        tracing::info!(%overtaken, "snapshot overtaken by the log");
        raft.append_entries(heartbeat::<C>(vote, &snapshot))
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "overtaken_test.rs"]
mod tests;
