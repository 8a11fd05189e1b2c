//! Applying committed entries in chunks: one write lock per chunk of the entries the stream has
//! ready (at most [`CHUNK_ENTRIES`], for about [`CHUNK_HOLD`] at most), the decode of each command,
//! the clamp of its time, and the encoding of a reply only when someone waits for it.

use std::io;
use std::time::{Duration, Instant};

use futures::{FutureExt, Stream, StreamExt};
use openraft::storage::{ApplyResponder, EntryResponder};
use openraft::type_config::alias::EntryOf;
use openraft::{EntryPayload, StoredMembership};

use super::{AppliedState, Inner};
use crate::codec;
use crate::state_machine::StateMachine;
use crate::types::{Proposal, Reply, TypeConfig};

/// The most entries applied under one write lock.
const CHUNK_ENTRIES: usize = 1024;
/// How long one chunk may hold the write lock (readers wait meanwhile).
const CHUNK_HOLD: Duration = Duration::from_millis(1);
/// The clock is read after a chunk's first entry and then after every this many (a read costs as
/// much as a small apply).
const CLOCK_EVERY: usize = 16;

/// A reply to send once its entry's index is published.
pub(super) type PendingReply = (ApplyResponder<TypeConfig>, Reply);

/// Why [`apply_chunk`] stopped.
pub(super) enum ChunkEnd {
    /// The chunk is full, or the stream has nothing ready: wait for the next entry.
    More,
    /// The stream is exhausted.
    Finished,
    /// The stream yielded an error, after the chunk's entries.
    Failed(io::Error),
}

/// Applies `first` and then the entries `entries` has ready, under one write lock of `applied`;
/// queues the replies. Returns the last index applied and why it stopped. Publishing the index
/// and sending the replies is the caller's, after the lock is released.
pub(super) fn apply_chunk<S, Strm>(
    applied: &AppliedState<S>,
    first: Result<EntryResponder<TypeConfig>, io::Error>,
    entries: &mut Strm,
    replies: &mut Vec<PendingReply>,
) -> (Option<u64>, ChunkEnd)
where
    S: StateMachine,
    Strm: Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin,
{
    let mut inner = applied.lock_write();
    let started = Instant::now();
    let out = apply_locked(&mut inner, started, first, entries, replies);
    drop(inner);
    crate::stats::record_apply_pause(started.elapsed());
    out
}

/// [`apply_chunk`] under the write lock taken at `started`.
fn apply_locked<S, Strm>(
    inner: &mut Inner<S>,
    started: Instant,
    first: Result<EntryResponder<TypeConfig>, io::Error>,
    entries: &mut Strm,
    replies: &mut Vec<PendingReply>,
) -> (Option<u64>, ChunkEnd)
where
    S: StateMachine,
    Strm: Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin,
{
    let mut last = None;
    let mut item = first;
    let mut count = 0;
    loop {
        let (entry, responder) = match item {
            Ok(pair) => pair,
            Err(e) => return (last, ChunkEnd::Failed(e)),
        };
        last = Some(entry.log_id.index);
        let reply = apply_entry(inner, entry, responder.is_some());
        if let Some(responder) = responder {
            replies.push((responder, reply));
        }
        count += 1;
        let check_clock = count == 1 || count % CLOCK_EVERY == 0;
        if count == CHUNK_ENTRIES || (check_clock && started.elapsed() >= CHUNK_HOLD) {
            return (last, ChunkEnd::More);
        }
        item = match entries.next().now_or_never() {
            Some(Some(next)) => next,
            Some(None) => return (last, ChunkEnd::Finished),
            None => return (last, ChunkEnd::More),
        };
    }
}

/// Applies one entry to the locked state; returns its reply if `reply` is asked for.
fn apply_entry<S: StateMachine>(
    inner: &mut Inner<S>,
    entry: EntryOf<TypeConfig>,
    reply: bool,
) -> Reply {
    let log_id = entry.log_id;
    let out = match entry.payload {
        EntryPayload::Blank => Reply::default(),
        EntryPayload::Normal(proposal) => apply_proposal(
            &mut inner.sm,
            &mut inner.last_at_ms,
            proposal,
            log_id.index,
            reply,
        ),
        EntryPayload::Membership(membership) => {
            inner.membership = StoredMembership::new(Some(log_id), membership);
            Reply::default()
        }
    };
    inner.last_applied = Some(log_id);
    out
}

/// Applies one normal entry to `sm`: clamp its time to at least `last_at_ms` (then raised to it),
/// decode, apply, and encode the response if `reply` (nobody waits for it when replaying the log
/// or on a follower). Every replica's one apply path; convoy-lab's deterministic simulation,
/// whose stores are in memory, applies through it too.
pub fn apply_proposal<S: StateMachine>(
    sm: &mut S,
    last_at_ms: &mut u64,
    proposal: Proposal,
    index: u64,
    reply: bool,
) -> Reply {
    let at = proposal.at_ms.max(*last_at_ms);
    *last_at_ms = at;
    let command = match codec::decode::<S::Command>(&proposal.command) {
        Ok(command) => command,
        Err(e) => {
            tracing::error!(index, error = %e, "committed command does not decode; skipped with an empty reply");
            return Reply::default();
        }
    };
    let response = sm.apply(command, at);
    if !reply {
        return Reply::default();
    }
    match codec::encode(&response) {
        Ok(bytes) => Reply(bytes),
        Err(e) => {
            tracing::error!(index, error = %e, "response does not encode; answering an empty reply");
            Reply::default()
        }
    }
}
