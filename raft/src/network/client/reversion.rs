//! The leader never dies of what a follower says: a follower whose log went backwards is refused
//! here, before openraft sees its answer.
//!
//! Under one leader vote, a follower that acknowledged entries up to index `m` holds every entry
//! up to `m` of this leader's log, which never changes below its commit. If it later answers
//! `Conflict` for an AppendEntries whose `prev_log_id` is at or below `m`, its log went backwards
//! (a data dir restored from an old backup, a disk that lost acknowledged writes, or a wiped
//! member that got past the handshake). openraft treats that as a broken invariant and its core
//! panics (`follower log reversion is not allowed`), taking every write with it. Instead the
//! answer is turned into an `Unreachable` error (openraft backs off and retries), counted, and
//! reported with a WARN (once per follower and leader vote, then in the per-minute summary).
//! The follower stays refused until it is repaired: `convoy cluster replace-member ID`, whose
//! removal makes the leader forget what it acknowledged ([`Matched::forget`]).

use std::collections::HashMap;

use openraft::raft::{AppendEntriesRequest, AppendEntriesResponse};
use openraft::type_config::alias::VoteOf;

use crate::types::{NodeId, TypeConfig};

/// The highest index each follower acknowledged, with the leader vote it was acknowledged under.
#[derive(Debug, Default)]
pub(super) struct Matched {
    by_target: HashMap<NodeId, (VoteOf<TypeConfig>, u64)>,
}

/// What an AppendEntries answer means for the follower's acknowledged log.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Hand the answer to openraft.
    Pass,
    /// The follower's log went backwards: it acknowledged `matched` but lacks `conflict`.
    Reverted {
        /// The highest index the follower acknowledged under this vote.
        matched: u64,
        /// The index it now lacks.
        conflict: u64,
    },
}

impl Matched {
    /// Judges `response` to `request` sent to `target`, and records what it acknowledged.
    pub(super) fn judge(
        &mut self,
        target: NodeId,
        request: &Sent,
        response: &AppendEntriesResponse<TypeConfig>,
    ) -> Verdict {
        let acknowledged = match response {
            AppendEntriesResponse::Success => request.last,
            AppendEntriesResponse::PartialSuccess(log_id) => log_id.as_ref().map(|l| l.index),
            AppendEntriesResponse::Conflict => {
                let known = self
                    .by_target
                    .get(&target)
                    .filter(|(vote, _)| *vote == request.vote)
                    .map(|(_, matched)| *matched);
                return match (known, request.prev) {
                    (Some(matched), Some(conflict)) if conflict <= matched => {
                        Verdict::Reverted { matched, conflict }
                    }
                    _ => Verdict::Pass,
                };
            }
            AppendEntriesResponse::HigherVote(_) => None,
        };
        if let Some(index) = acknowledged {
            let entry = self
                .by_target
                .entry(target)
                .or_insert_with(|| (request.vote, index));
            if entry.0 != request.vote {
                *entry = (request.vote, index);
            } else if index > entry.1 {
                entry.1 = index;
            }
        }
        Verdict::Pass
    }

    /// Forgets `target` (it left the membership).
    pub(super) fn forget(&mut self, target: NodeId) {
        self.by_target.remove(&target);
    }
}

/// What [`Matched::judge`] needs of a request, taken before it is sent.
#[derive(Debug)]
pub(super) struct Sent {
    vote: VoteOf<TypeConfig>,
    prev: Option<u64>,
    last: Option<u64>,
}

impl Sent {
    /// The vote, `prev_log_id` and last entry of `request`.
    pub(super) fn of(request: &AppendEntriesRequest<TypeConfig>) -> Self {
        let prev = request.prev_log_id.as_ref().map(|l| l.index);
        Self {
            vote: request.vote,
            prev,
            last: request.entries.last().map(|e| e.log_id.index).or(prev),
        }
    }
}

#[cfg(test)]
#[path = "reversion_test.rs"]
mod tests;
