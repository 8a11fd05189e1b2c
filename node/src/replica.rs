//! `Replica`: the server's handle on its raft node and the runtime it runs on, usable from actix-web
//! handlers (named for what it is; it was `Engine`, a word the domain's benchmark also uses).
//!
//! Raft runs on its own multi-threaded tokio runtime; HTTP handlers and actors run on actix's
//! single-threaded runtimes. Every call here hops onto the raft runtime, so sockets and timers
//! always belong to the runtime that drives them.

use std::future::Future;

use openraft::async_runtime::WatchReceiver;
use std::sync::Arc;

use crate::machine::Machine;
use convoy_actors::domain::{ClusterState, Command, DomainError, Response};
use convoy_raft::node::ClusterInfo;
use convoy_raft::{Member, NodeId, RaftError, RaftNode};

/// Why the replica did not do what was asked. The API layer maps each variant to an HTTP answer
/// (`From<ReplicaError> for ApiError`); the leader's actors to a [`convoy_actors::leader::ProposeError`].
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    /// This server is not in the cluster (removed, or not yet added): it takes no writes.
    #[error("this server is not a member of the cluster; send requests to a member")]
    NotAMember,
    /// The domain refused the command, before the log (precheck) or when applying it.
    #[error(transparent)]
    Refused(#[from] DomainError),
    /// The replicated log could not do it (no leader, no quorum, storage).
    #[error(transparent)]
    Raft(#[from] RaftError),
    /// This server's peers refuse it, or it refuses them as another cluster's (readiness says why): the
    /// state it holds may be another cluster's, so it serves none (issue 37).
    #[error("{0}")]
    NotServing(String),
    /// The task running the call on the raft runtime failed (panicked or was cancelled).
    #[error("raft task failed: {0}")]
    Task(String),
}

/// Refuses to serve state on a server that its peers refuse, or that refuses them as another cluster's.
fn serving(view: &crate::readiness::ReplicaView) -> Result<(), ReplicaError> {
    match view.judge() {
        Err(why) if why.serves_nothing() => Err(ReplicaError::NotServing(why.to_string())),
        _ => Ok(()),
    }
}

/// Shared by every handler: the replica and the runtime it lives on.
#[derive(Clone)]
pub struct Replica {
    node: Arc<RaftNode<Machine>>,
    rt: tokio::runtime::Handle,
    removed: crate::membership::Removed,
    /// The names of this server's `[[analysis_provider]]`s: an analysis naming another is refused.
    providers: Arc<Vec<String>>,
    /// This server has a `bootstrap_token_file`: until the bootstrap token is applied it knows no token.
    bootstrap_token: bool,
}

impl Replica {
    /// Wraps a started replica and the runtime it was started on.
    pub fn new(node: Arc<RaftNode<Machine>>, rt: tokio::runtime::Handle) -> Self {
        Self {
            node,
            rt,
            removed: Default::default(),
            providers: Arc::default(),
            bootstrap_token: false,
        }
    }

    /// This replica, for a server with a `bootstrap_token_file` (token auth): not ready, and answering 503
    /// for unknown tokens, until the bootstrap token is applied ([`Replica::bootstrapping`]).
    pub fn with_bootstrap_token(mut self) -> Self {
        self.bootstrap_token = true;
        self
    }

    /// Whether this server has a `bootstrap_token_file` and has not applied the bootstrap token yet (the
    /// first leader proposes it after its election: see `api::auth::bootstrap`). Revoking it later does not
    /// bring this back.
    pub fn bootstrapping(&self) -> bool {
        self.bootstrap_token && !self.node.read(|m| m.state().tokens().bootstrapped())
    }

    /// This replica, refusing every analysis that names none of `providers` (its config's names).
    pub fn with_providers(mut self, providers: Vec<String>) -> Self {
        self.providers = Arc::new(providers);
        self
    }

    /// Refuses a command whose analysis names a provider this server's config does not have (DEPLOYMENTS.md
    /// §15): a 400 naming it, at creation, rather than errors at every measurement.
    pub fn check_providers(&self, command: &Command) -> Result<(), DomainError> {
        convoy_actors::domain::check_providers(command, &self.providers)
    }

    /// Whether the leader said this server is no longer a member (see [`crate::membership`]).
    pub fn removed(&self) -> &crate::membership::Removed {
        &self.removed
    }

    /// `GET /v1/cluster/membership/{id}`: whether `id` is in this server's membership.
    pub fn membership_of(&self, id: NodeId) -> crate::membership::MembershipAnswer {
        let metrics = self.node.raft().metrics().borrow_watched().clone();
        let membership = metrics.membership_config.membership();
        crate::membership::MembershipAnswer {
            id,
            member: membership.voter_ids().any(|v| v == id)
                || membership.learner_ids().any(|l| l == id),
            answered_by: self.node.id(),
            leader: self.node.is_leader(),
        }
    }

    /// The raft node underneath.
    pub fn node(&self) -> &Arc<RaftNode<Machine>> {
        &self.node
    }

    async fn on_raft<F, T>(&self, fut: F) -> Result<T, ReplicaError>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        self.rt
            .spawn(fut)
            .await
            .map_err(|e| ReplicaError::Task(e.to_string()))
    }

    /// Proposes a command through the log; domain refusals come back as [`ReplicaError::Refused`]. The command's
    /// shape and cost are checked first against this server's applied state
    /// ([`convoy_actors::domain::precheck`]): a refused request never reaches the log.
    pub async fn propose(&self, command: Command) -> Result<Response, ReplicaError> {
        let view = self.replica_view();
        if !view.member {
            return Err(ReplicaError::NotAMember);
        }
        serving(&view)?;
        self.node
            .read(|m| convoy_actors::domain::precheck(m.state(), &command))?;
        self.check_providers(&command)?;
        let node = self.node.clone();
        let outcome = self
            .on_raft(async move { node.propose(&command).await })
            .await??;
        Ok(outcome?)
    }

    /// Reads the applied state; with `consistent`, after a linearizable read barrier.
    pub async fn read<R, F>(&self, consistent: bool, f: F) -> Result<R, ReplicaError>
    where
        F: FnOnce(&ClusterState) -> R + Send + 'static,
        R: Send + 'static,
    {
        serving(&self.replica_view())?;
        if !consistent {
            return Ok(self.node.read(|m| f(m.state())));
        }
        let node = self.node.clone();
        Ok(self
            .on_raft(async move { node.read_consistent(|m| f(m.state())).await })
            .await??)
    }

    /// Runs `f` on a copy of the applied state, away from it: the copy is taken under the read lock (O(1) for
    /// the copy-on-write maps that hold nearly all of it; the small sets beside them are copied) and the lock
    /// released at once, then `f` runs on actix's blocking pool, so neither the state machine (which waits
    /// for readers to apply) nor this HTTP worker waits while `f` builds a list or a dry-run (issue 37 §2).
    pub async fn read_snapshot<R, F>(&self, consistent: bool, f: F) -> Result<R, ReplicaError>
    where
        F: FnOnce(&ClusterState) -> R + Send + 'static,
        R: Send + 'static,
    {
        let state = self.read(consistent, ClusterState::clone).await?;
        actix_web::web::block(move || f(&state))
            .await
            .map_err(|e| ReplicaError::Task(e.to_string()))
    }

    /// What a write answers with: this server's applied state, which [`Replica::propose`] has
    /// already brought up to the write (read-your-writes, also through a follower) without a
    /// second round to a quorum.
    pub async fn read_written<R, F>(&self, f: F) -> Result<R, ReplicaError>
    where
        F: FnOnce(&ClusterState) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.read(false, f).await
    }

    /// `GET /v1/cluster`.
    pub fn cluster_info(&self) -> ClusterInfo {
        self.node.cluster_info()
    }

    /// Adds a server (learner, then voter).
    pub async fn add_member(&self, id: NodeId, member: Member) -> Result<(), ReplicaError> {
        let node = self.node.clone();
        Ok(self
            .on_raft(async move { node.add_member(id, member).await })
            .await??)
    }

    /// Removes a server.
    pub async fn remove_member(&self, id: NodeId) -> Result<(), ReplicaError> {
        let node = self.node.clone();
        Ok(self
            .on_raft(async move { node.remove_member(id).await })
            .await??)
    }

    /// Replaces member `id` whose data dir was lost (see `RaftNode::replace_member`).
    pub async fn replace_member(&self, id: NodeId) -> Result<Member, ReplicaError> {
        let node = self.node.clone();
        Ok(self
            .on_raft(async move { node.replace_member(id).await })
            .await??)
    }

    /// What readiness is judged from: this server's view of the replica.
    pub fn replica_view(&self) -> crate::readiness::ReplicaView {
        let metrics = self.node.raft().metrics().borrow_watched().clone();
        let id = self.node.id();
        let membership = metrics.membership_config.membership();
        crate::readiness::ReplicaView {
            // `Stopped` is a clean shutdown (SIGTERM), not a failure.
            fatal: self.node.core_stopped().or(match &metrics.running_state {
                Err(openraft::error::Fatal::Stopped) | Ok(()) => None,
                Err(e) => Some(e.to_string()),
            }),
            refused: self.node.refused_by_peers(),
            refusing: self.node.refuses_peers(),
            member: !self.removed.get()
                && (membership.voter_ids().any(|v| v == id)
                    || membership.learner_ids().any(|l| l == id)),
            leader: metrics.current_leader,
            committed: metrics.local_committed.as_ref().map_or(0, |l| l.index),
            applied: self.node.applied().last_applied(),
            contact: self.node.contact(&metrics),
            patience: self.node.quorum_patience(),
            bootstrapping: self.bootstrapping(),
        }
    }

    /// Ready, or why not (see [`crate::readiness`]).
    pub fn readiness(&self) -> Result<(), crate::readiness::NotReady> {
        self.replica_view().judge()
    }
}
