//! Client requests carried out on this server as leader ([`LocalHandler`]): proposals into the
//! batcher, membership changes (a learner promoted only once caught up), linearizable read index.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use openraft::async_runtime::WatchReceiver;
use openraft::error::ClientWriteError;
use openraft::{ChangeMembers, RaftMetrics, RaftTypeConfig, ReadPolicy};
use tokio::sync::{mpsc, oneshot};

use super::batcher::{run_batcher, Pending, BATCH_QUEUE};
use crate::network::{ClientError, ClientHandler, ClientRequest, ClientResponse};
use crate::sm_store::SmStore;
use crate::state_machine::StateMachine;
use crate::types::{Member, NodeId, Raft};

/// Carries out client requests on this server as leader: the [`ClientHandler`] the transport
/// calls for forwarded requests, and what [`RaftNode`] calls for its own.
pub(super) struct LocalHandler<S: StateMachine> {
    raft: Raft<SmStore<S>>,
    pub(super) proposals: mpsc::Sender<Pending>,
    /// How long a new server may take to catch up as a learner before it is given up on (shorter
    /// than a request's deadline, so a server that never catches up is removed within the request).
    catch_up: Duration,
    /// Set while leadership is handed over before a stop: every request is answered "not the
    /// leader", so callers wait for the successor instead of proposing here.
    pub(super) draining: Arc<AtomicBool>,
}

impl<S: StateMachine> Clone for LocalHandler<S> {
    fn clone(&self) -> Self {
        Self {
            raft: self.raft.clone(),
            proposals: self.proposals.clone(),
            catch_up: self.catch_up,
            draining: self.draining.clone(),
        }
    }
}

impl<S: StateMachine> LocalHandler<S> {
    pub(super) fn spawn(raft: Raft<SmStore<S>>, catch_up: Duration) -> Self {
        let (tx, rx) = mpsc::channel(BATCH_QUEUE);
        tokio::spawn(run_batcher(raft.clone(), rx));
        Self {
            raft,
            catch_up,
            proposals: tx,
            draining: Arc::new(AtomicBool::new(false)),
        }
    }

    async fn propose(&self, command: Vec<u8>) -> Result<ClientResponse, ClientError> {
        let (reply, rx) = oneshot::channel();
        self.proposals
            .send(Pending { command, reply })
            .await
            .map_err(|_| ClientError::Failed("proposal batcher stopped".into()))?;
        rx.await
            .map_err(|_| ClientError::Failed("proposal dropped by the batcher".into()))?
    }

    /// "Not the leader" unless this server may propose a membership change now
    /// ([`may_change_membership`]).
    fn ensure_may_change_membership(&self) -> Result<(), ClientError> {
        if may_change_membership(&self.raft.metrics().borrow_watched()) {
            Ok(())
        } else {
            Err(ClientError::NotLeader { leader: None })
        }
    }

    async fn add_member(&self, id: NodeId, member: Member) -> Result<ClientResponse, ClientError> {
        let addr = member.raft_addr.clone();
        self.ensure_may_change_membership()?;
        self.raft
            .add_learner(id, member, false)
            .await
            .map_err(write_error)?;
        // Only a learner that has caught up becomes a voter: promoting one that cannot be reached
        // would leave the cluster without a quorum for every later write.
        let target = self
            .raft
            .metrics()
            .borrow_watched()
            .last_log_index
            .unwrap_or(0);
        let caught_up = self
            .raft
            .wait(Some(self.catch_up))
            .metrics(
                |m| {
                    m.replication
                        .as_ref()
                        .and_then(|r| r.get(&id))
                        .and_then(|matched| matched.as_ref())
                        .is_some_and(|log_id| log_id.index >= target)
                },
                format!("learner {id} caught up"),
            )
            .await;
        if caught_up.is_err() {
            self.ensure_may_change_membership()?;
            self.raft
                .change_membership(ChangeMembers::RemoveNodes(BTreeSet::from([id])), false)
                .await
                .map_err(write_error)?;
            return Err(ClientError::Invalid(format!(
                "server {id} at {addr} did not catch up within {:?}, so it was not added; \
                 check that it runs with this cluster's secret and is reachable",
                self.catch_up
            )));
        }
        self.ensure_may_change_membership()?;
        self.raft
            .change_membership(ChangeMembers::AddVoterIds(BTreeSet::from([id])), false)
            .await
            .map_err(write_error)?;
        Ok(ClientResponse::MembershipChanged)
    }

    async fn remove_member(&self, id: NodeId) -> Result<ClientResponse, ClientError> {
        let metrics = self.raft.metrics().borrow_watched().clone();
        let membership = metrics.membership_config.membership();
        if membership.get_node(&id).is_none() {
            return Err(ClientError::Invalid(format!("server {id} is not a member")));
        }
        if membership.voter_ids().any(|v| v == id) {
            self.ensure_may_change_membership()?;
            self.raft
                .change_membership(ChangeMembers::RemoveVoters(BTreeSet::from([id])), false)
                .await
                .map_err(write_error)?;
        }
        // A learner (or the voter just demoted) leaves the membership entirely.
        let still_there = self
            .raft
            .metrics()
            .borrow_watched()
            .membership_config
            .membership()
            .get_node(&id)
            .is_some();
        if still_there {
            self.ensure_may_change_membership()?;
            self.raft
                .change_membership(ChangeMembers::RemoveNodes(BTreeSet::from([id])), false)
                .await
                .map_err(write_error)?;
        }
        Ok(ClientResponse::MembershipChanged)
    }

    async fn read_index(&self) -> Result<ClientResponse, ClientError> {
        let read = self
            .raft
            .ensure_linearizable(ReadPolicy::ReadIndex)
            .await
            .map_err(|e| match e.api_error() {
                Some(openraft::error::LinearizableReadError::ForwardToLeader(f)) => {
                    ClientError::NotLeader {
                        leader: f.leader_id.zip(f.leader_node.clone()),
                    }
                }
                Some(openraft::error::LinearizableReadError::QuorumNotEnough(q)) => {
                    ClientError::NoQuorum(q.to_string())
                }
                _ => ClientError::Failed(e.to_string()),
            })?;
        Ok(ClientResponse::ReadIndex(read.log_id().index))
    }
}

impl<S: StateMachine> ClientHandler for LocalHandler<S> {
    fn handle(
        &self,
        request: ClientRequest,
    ) -> BoxFuture<'static, Result<ClientResponse, ClientError>> {
        let this = self.clone();
        async move {
            if this.draining.load(Ordering::SeqCst) {
                return Err(ClientError::NotLeader { leader: None });
            }
            match request {
                ClientRequest::Propose(command) => this.propose(command).await,
                ClientRequest::AddMember { id, member } => this.add_member(id, member).await,
                ClientRequest::RemoveMember { id } => this.remove_member(id).await,
                ClientRequest::ReadIndex => this.read_index().await,
            }
        }
        .boxed()
    }
}

/// Whether the server whose `metrics` these are may propose a membership change: as a member
/// (voter or learner) of its effective membership, or a voter of its committed one, the condition
/// openraft (0.10) asserts on every change ("Only leader is allowed to call
/// update_effective_membership()"). A leader whose own removal was proposed keeps leading until
/// openraft steps it down (`removed_leader_step_down`, after the removal commits) and still accepts
/// changes, which then fail that assertion: it answers "not the leader" instead, so that the caller
/// retries at its successor. A leader demoted to learner (`RemoveVoters` without the `RemoveNodes`
/// that `convoy cluster remove` sends next) is still a member: openraft keeps it leading for good,
/// and it must stay able to change the membership, to add itself back or remove itself.
/// Shared with the simulation's membership calls (convoy-lab).
pub fn may_change_membership<C: RaftTypeConfig>(metrics: &RaftMetrics<C>) -> bool {
    let me = &metrics.id;
    let member_of_effective = metrics
        .membership_config
        .membership()
        .get_node(me)
        .is_some();
    let voter_of_committed = metrics
        .committed_membership_config
        .membership()
        .voter_ids()
        .any(|v| &v == me);
    member_of_effective || voter_of_committed
}

fn write_error(
    e: openraft::error::RaftError<crate::TypeConfig, ClientWriteError<crate::TypeConfig>>,
) -> ClientError {
    match e.api_error() {
        Some(ClientWriteError::ForwardToLeader(f)) => ClientError::NotLeader {
            leader: f.leader_id.zip(f.leader_node.clone()),
        },
        Some(other) => ClientError::Invalid(other.to_string()),
        None => ClientError::Failed(e.to_string()),
    }
}
