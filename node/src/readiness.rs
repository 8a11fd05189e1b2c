//! When a server is ready to serve (`GET /readyz`): a pure judgement of what the replica reports, so
//! each reason is tested without a cluster.

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
    /// Applying is far behind the commit index.
    #[error("catching up: applied {applied} of {committed} committed entries (ready within {MAX_READY_LAG})")]
    CatchingUp {
        /// Applied index.
        applied: u64,
        /// Committed index.
        committed: u64,
    },
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
            NotReady::CatchingUp { .. } => "catching_up",
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
        if self.committed.saturating_sub(self.applied) > MAX_READY_LAG {
            return Err(NotReady::CatchingUp {
                applied: self.applied,
                committed: self.committed,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready() -> ReplicaView {
        ReplicaView {
            fatal: None,
            refused: None,
            refusing: None,
            member: true,
            leader: Some(1),
            committed: 5_000,
            applied: 5_000,
        }
    }

    #[test]
    fn a_member_with_a_leader_that_keeps_up_is_ready() {
        assert_eq!(ready().judge(), Ok(()));
        let slightly_behind = ReplicaView {
            applied: 5_000 - MAX_READY_LAG,
            ..ready()
        };
        assert_eq!(slightly_behind.judge(), Ok(()));
    }

    #[test]
    fn each_reason_is_named_with_its_code() {
        let cases = [
            (
                ReplicaView {
                    fatal: Some("disk full".into()),
                    ..ready()
                },
                "fatal",
            ),
            (
                ReplicaView {
                    refused: Some("server 1 refuses server 3".into()),
                    ..ready()
                },
                "refused_by_peers",
            ),
            (
                ReplicaView {
                    refusing: Some("server 0 (cluster a) refuses server 1 (cluster b)".into()),
                    ..ready()
                },
                "another_cluster",
            ),
            (
                ReplicaView {
                    member: false,
                    ..ready()
                },
                "not_a_member",
            ),
            (
                ReplicaView {
                    leader: None,
                    ..ready()
                },
                "no_leader",
            ),
            (
                ReplicaView {
                    applied: 5_000 - MAX_READY_LAG - 1,
                    ..ready()
                },
                "catching_up",
            ),
        ];
        for (view, code) in cases {
            assert_eq!(view.judge().unwrap_err().code(), code, "{view:?}");
        }
    }

    #[test]
    fn a_fatal_error_wins_over_every_other_reason() {
        let view = ReplicaView {
            fatal: Some("disk full".into()),
            refused: Some("server 1 refuses server 3".into()),
            refusing: None,
            member: false,
            leader: None,
            committed: 10,
            applied: 0,
        };
        assert_eq!(view.judge(), Err(NotReady::Fatal("disk full".into())));
    }

    #[test]
    fn peers_refusing_this_server_come_before_membership() {
        // A wiped member is no member on its own view; the refusal says what to do about it.
        let view = ReplicaView {
            refused: Some("server 1 refuses server 3: run replace-member 3".into()),
            member: false,
            leader: None,
            ..ready()
        };
        assert_eq!(view.judge().unwrap_err().code(), "refused_by_peers");
    }
}
