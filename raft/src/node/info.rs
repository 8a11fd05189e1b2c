//! The cluster as one server sees it (`GET /v1/cluster`): [`ClusterInfo`], its members and roles.

use std::collections::BTreeSet;

use openraft::async_runtime::WatchReceiver;
use openraft::ServerState;

use super::RaftNode;
use crate::state_machine::StateMachine;
use crate::types::NodeId;

/// A server's role as shown by `GET /v1/cluster`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The current leader.
    Leader,
    /// A voter that is not the leader.
    Follower,
    /// A voter campaigning.
    Candidate,
    /// A non-voting member catching up.
    Learner,
}

/// One member as shown by `GET /v1/cluster`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemberInfo {
    /// The member's id.
    pub id: NodeId,
    /// Its transport address.
    pub raft_addr: String,
    /// Its HTTP address.
    pub http_addr: String,
    /// Its role, as far as this server knows.
    pub role: Role,
}

/// The cluster as seen by one server: `GET /v1/cluster`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClusterInfo {
    /// This server's id.
    pub id: NodeId,
    /// The leader this server knows of.
    pub leader_id: Option<NodeId>,
    /// The current term.
    pub term: u64,
    /// The last log index applied to the state machine here.
    pub last_applied: u64,
    /// Every member, voters and learners.
    pub members: Vec<MemberInfo>,
    /// The last log index covered by this server's latest snapshot.
    pub snapshot: Option<u64>,
    /// The last log index purged from this server's log.
    pub purged: Option<u64>,
}

impl<S: StateMachine> RaftNode<S> {
    /// The cluster as this server sees it.
    pub fn cluster_info(&self) -> ClusterInfo {
        let metrics = self.raft.metrics().borrow_watched().clone();
        let membership = metrics.membership_config.membership();
        let voters: BTreeSet<NodeId> = membership.voter_ids().collect();
        let members = membership
            .nodes()
            .map(|(id, member)| {
                let role = if Some(*id) == metrics.current_leader {
                    Role::Leader
                } else if !voters.contains(id) {
                    Role::Learner
                } else if *id == self.id && metrics.state == ServerState::Candidate {
                    Role::Candidate
                } else {
                    Role::Follower
                };
                MemberInfo {
                    id: *id,
                    raft_addr: member.raft_addr.clone(),
                    http_addr: member.http_addr.clone(),
                    role,
                }
            })
            .collect();
        ClusterInfo {
            id: self.id,
            leader_id: metrics.current_leader,
            term: metrics.current_term,
            last_applied: self.applied.last_applied(),
            members,
            snapshot: metrics.snapshot.as_ref().map(|l| l.index),
            purged: metrics.purged.as_ref().map(|l| l.index),
        }
    }
}
