//! How a server learns it was removed: raft stops replicating to a removed server before it can see
//! the configuration that leaves it out, so it would go on believing it is a member. A follower asks
//! the leader it knows (`GET /v1/cluster/membership/{id}`, unauthenticated: it reveals only whether an
//! id is a member) every few seconds; an answer that leaves it out marks it removed, so `/readyz`
//! says `not_a_member` and writes are refused, until a later answer includes it again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::Engine;

/// How often a follower asks the leader whether it is still a member.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(2);

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

/// What the probe concluded, shared with the engine.
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

/// Asks the leader this server knows, every [`PROBE_INTERVAL`], until the process ends.
pub async fn probe(engine: Engine, http: reqwest::Client, scheme: &'static str) {
    let id = engine.node().id();
    loop {
        tokio::time::sleep(PROBE_INTERVAL).await;
        let Some((leader, member)) = engine.node().leader() else {
            continue;
        };
        if leader == id {
            continue;
        }
        let url = format!("{scheme}://{}/v1/cluster/membership/{id}", member.http_addr);
        let answer = match http.get(&url).send().await {
            Ok(r) if r.status().is_success() => r.json::<MembershipAnswer>().await.ok(),
            _ => None,
        };
        if let Some(answer) = answer.filter(|a| a.id == id && a.answered_by == leader) {
            if engine.removed().record(&answer) {
                if answer.member {
                    tracing::info!(leader, "the leader counts this server as a member again");
                } else {
                    tracing::warn!(leader, "the leader says this server is no longer a member: refusing writes, not ready");
                }
            }
        }
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
