//! How a server learns it was removed: raft stops replicating to a removed server before it can see
//! the configuration that leaves it out, so it would go on believing it is a member. A follower asks
//! the leader it knows (`GET /v1/cluster/membership/{id}`, unauthenticated: it reveals only whether an
//! id is a member) every few seconds; an answer that leaves it out marks it removed, so `/readyz`
//! says `not_a_member` and writes are refused, until a later answer includes it again. This file holds
//! the answer and the flag the replica shares; the loop that asks is `membership_probe.rs`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// `GET /v1/cluster/membership/{id}`: whether `id` is a voter or learner of the answering server's
/// membership, and the term it answers in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MembershipAnswer {
    /// The id asked about.
    pub id: u64,
    /// Whether it is a member.
    pub member: bool,
    /// The answering server's id.
    pub answered_by: u64,
    /// Whether the answering server leads.
    pub leader: bool,
}

/// What the probe concluded, shared with the replica.
#[derive(Clone, Debug, Default)]
pub struct Removed(Arc<AtomicBool>);

impl Removed {
    /// Whether the leader's last answer left this server out.
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Records the leader's answer; returns whether that changed anything.
    pub fn record(&self, answer: &MembershipAnswer) -> bool {
        // Only a leader's word counts: a follower may lag behind a change, in either direction.
        if !answer.leader {
            return false;
        }
        let removed = !answer.member;
        self.0.swap(removed, Ordering::Relaxed) != removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(member: bool, leader: bool) -> MembershipAnswer {
        MembershipAnswer {
            id: 4,
            member,
            answered_by: 1,
            leader,
        }
    }

    #[test]
    fn only_a_leaders_answer_marks_a_server_removed_and_back() {
        let removed = Removed::default();
        assert!(!removed.record(&answer(false, false)), "a follower's word");
        assert!(!removed.get());
        assert!(removed.record(&answer(false, true)));
        assert!(removed.get());
        assert!(!removed.record(&answer(false, true)), "no change");
        assert!(removed.record(&answer(true, true)), "added again");
        assert!(!removed.get());
    }
}
