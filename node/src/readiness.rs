//! When a server is ready to serve (`GET /readyz`): a pure judgement of what the replica reports, so
//! each reason is tested without a cluster.

use std::time::Duration;

pub use convoy_raft::node::Contact;

/// At most this many committed entries may wait to be applied on a ready server: a server further
/// behind is catching up (after a restart, or from a snapshot) and would answer reads with old state.
pub const MAX_READY_LAG: u64 = 1_000;

/// What readiness is judged from: this server's view of the replica.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaView {
    /// The replica stopped on a fatal error (storage failed, the raft core panicked); why.
    pub fatal: Option<String>,
    /// Why this server's peers refuse it (another cluster, a replaced data dir, another
    /// secret), when they have lately and none accepted it since.
    pub refused: Option<String>,
    /// Why this server refuses its peers as another cluster's while working with none of them (it runs on
    /// another cluster's data), when it has lately (issue 37).
    pub refusing: Option<String>,
    /// This server is a voter or a learner of the current membership.
    pub member: bool,
    /// The leader this server knows, if any.
    pub leader: Option<u64>,
    /// The last index this server knows to be committed.
    pub committed: u64,
    /// The last index this server applied.
    pub applied: u64,
    /// Word of a quorum: how long since one acknowledged this leader, or since this follower heard from
    /// its leader.
    pub contact: Contact,
    /// How long without word of a quorum a server stays ready ([`convoy_raft::RaftConfig::quorum_patience`]).
    pub patience: Duration,
    /// This server has a `bootstrap_token_file` (token auth) and has not applied the bootstrap admin token
    /// yet: every token is unknown to it.
    pub bootstrapping: bool,
}

/// Why a server is not ready; `code` is the API error code of the 503.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    /// The replica stopped; the process exits so that its supervisor restarts it.
    #[error("the replica stopped on a fatal error: {0}")]
    Fatal(String),
    /// The server's peers refuse it; why (with the recovery).
    #[error("this server's peers refuse it: {0}")]
    Refused(String),
    /// The server refuses its peers as another cluster's and works with none: it is the odd one out.
    #[error("this server refuses every peer that reaches it as belonging to another cluster and works with none of them: it runs on another cluster's data dir (or was started with another cluster's secret or founders), so it serves no state; start it on its own data dir: {0}")]
    RefusesPeers(String),
    /// The server is not in the cluster (removed, or a joiner not yet added).
    #[error("this server is not a member of the cluster")]
    NotAMember,
    /// No leader is known.
    #[error("no leader is known yet")]
    NoLeader,
    /// This server leads but no quorum of voters has acknowledged it for longer than the patience: its
    /// writes cannot commit (its followers are down or cut off).
    #[error("this server leads but no quorum of voters has acknowledged it for {}: writes cannot commit until a majority of the voters answers it (ready again once one does; not ready after {})", secs(.silent), secs(.patience))]
    NoQuorum {
        /// Since a quorum last acknowledged it.
        silent: Duration,
        /// The patience it exceeded.
        patience: Duration,
    },
    /// This server follows a leader it has not heard from for longer than the patience: it is cut off from
    /// it (the leader still runs for all it knows, so no election replaced it).
    #[error("this server has not heard from its leader, server {leader}, for {}: it is cut off from it, so its writes cannot commit and its reads may be old (ready again once the leader or a new one reaches it; not ready after {})", secs(.silent), secs(.patience))]
    LeaderUnreachable {
        /// The leader it names.
        leader: u64,
        /// Since it last heard from it.
        silent: Duration,
        /// The patience it exceeded.
        patience: Duration,
    },
    /// Applying is far behind the commit index.
    #[error("catching up: applied {applied} of {committed} committed entries (ready within {MAX_READY_LAG})")]
    CatchingUp {
        /// Applied index.
        applied: u64,
        /// Committed index.
        committed: u64,
    },
    /// Token auth is on and the bootstrap admin token is not applied yet: every token is unknown here.
    #[error("bootstrapping: the bootstrap admin token (bootstrap_token_file) is not applied on this server yet, so it knows no token; retry once GET /readyz answers 200")]
    Bootstrapping,
}

/// A duration as a person reads it in a reason: `2.4 s`.
fn secs(d: &Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

impl NotReady {
    /// Whether the server must serve no state at all (its peers refuse it, or it them): what it holds may be
    /// another cluster's.
    pub fn serves_nothing(&self) -> bool {
        matches!(self, NotReady::Refused(_) | NotReady::RefusesPeers(_))
    }

    /// The API error code.
    pub fn code(&self) -> &'static str {
        match self {
            NotReady::Fatal(_) => "fatal",
            NotReady::Refused(_) => "refused_by_peers",
            NotReady::RefusesPeers(_) => "another_cluster",
            NotReady::NotAMember => "not_a_member",
            NotReady::NoLeader => "no_leader",
            NotReady::NoQuorum { .. } => "no_quorum",
            NotReady::LeaderUnreachable { .. } => "leader_unreachable",
            NotReady::CatchingUp { .. } => "catching_up",
            NotReady::Bootstrapping => "bootstrapping",
        }
    }
}

impl ReplicaView {
    /// Ready, or the first reason not to be, in the order a person should fix them.
    pub fn judge(&self) -> Result<(), NotReady> {
        if let Some(why) = &self.fatal {
            return Err(NotReady::Fatal(why.clone()));
        }
        if let Some(why) = &self.refused {
            return Err(NotReady::Refused(why.clone()));
        }
        if let Some(why) = &self.refusing {
            return Err(NotReady::RefusesPeers(why.clone()));
        }
        if !self.member {
            return Err(NotReady::NotAMember);
        }
        if self.leader.is_none() {
            return Err(NotReady::NoLeader);
        }
        let patience = self.patience;
        match self.contact {
            Contact::Leading { silent } if silent > patience => {
                return Err(NotReady::NoQuorum { silent, patience })
            }
            Contact::Following { leader, silent } if silent > patience => {
                return Err(NotReady::LeaderUnreachable {
                    leader,
                    silent,
                    patience,
                })
            }
            _ => {}
        }
        if self.committed.saturating_sub(self.applied) > MAX_READY_LAG {
            return Err(NotReady::CatchingUp {
                applied: self.applied,
                committed: self.committed,
            });
        }
        if self.bootstrapping {
            return Err(NotReady::Bootstrapping);
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "readiness_test.rs"]
mod tests;
