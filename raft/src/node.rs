//! A running replica: openraft wired to the RocksDB stores and the transport, with proposal
//! batching, forwarding to the leader, linearizable reads and membership changes.

use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use openraft::async_runtime::WatchReceiver;
use openraft::error::ClientWriteError;
use openraft::{ChangeMembers, ReadPolicy, ServerState, SnapshotPolicy};
use tokio::sync::{mpsc, oneshot};

use crate::codec;
use crate::error::RaftError;
use crate::log_store::{open_db, RocksLogStore};
use crate::network::client::{Network, NetworkConfig};
use crate::network::inbox::DEFAULT_SNAPSHOT_CHUNK_BYTES;
use crate::network::server::{ServerConfig, TransportServer};
use crate::network::{ClientError, ClientHandler, ClientRequest, ClientResponse};
use crate::sm_store::files::SNAPSHOT_DIR;
use crate::sm_store::{AppliedState, SmStore, SnapshotData};
use crate::state_machine::StateMachine;
use crate::types::{Member, NodeId, Proposal, Raft, Reply};

/// Proposals waiting for the batcher; when full, proposers wait (backpressure), never drop.
/// Entries between two snapshots unless configured (`snapshot_every`).
pub const DEFAULT_SNAPSHOT_EVERY: u64 = 10_000;

const BATCH_QUEUE: usize = 4096;
/// The most proposals one append carries.
const MAX_BATCH: usize = 1024;

/// How a replica is configured; built by the server from its config file, flags and environment.
#[derive(Clone, Debug)]
pub struct RaftConfig {
    /// This server's id.
    pub id: NodeId,
    /// Where RocksDB keeps the log, the vote and snapshots.
    pub data_dir: PathBuf,
    /// Address the transport listens on (and peers dial).
    pub raft_addr: String,
    /// Address of this server's HTTP API, published in the membership.
    pub http_addr: String,
    /// The shared cluster secret peers authenticate with.
    pub secret: Vec<u8>,
    /// The founding members, used only to bootstrap a brand-new cluster.
    pub initial_cluster: BTreeMap<NodeId, Member>,
    /// Bootstrap from `initial_cluster` if the data dir is empty (`initial_cluster_state = "new"`).
    pub bootstrap: bool,
    /// Heartbeat period.
    pub heartbeat_ms: u64,
    /// Election timeout range; re-sampled by openraft at every election.
    pub election_timeout_ms: (u64, u64),
    /// Build a snapshot (and purge the log before it) every this many entries.
    pub snapshot_every: u64,
    /// How long a client request may wait for a leader, including forwarding and retries.
    pub request_timeout: Duration,
    /// The size of the chunks snapshots are streamed to followers in (default
    /// [`DEFAULT_SNAPSHOT_CHUNK_BYTES`], at most
    /// [`crate::network::inbox::MAX_SNAPSHOT_CHUNK_BYTES`]). A test knob: only
    /// tests lower it, to send a small snapshot as many chunks.
    pub snapshot_chunk_bytes: usize,
}

impl RaftConfig {
    /// A config with production defaults for the given identity and directory.
    pub fn new(id: NodeId, data_dir: impl Into<PathBuf>, raft_addr: &str, http_addr: &str) -> Self {
        Self {
            id,
            data_dir: data_dir.into(),
            raft_addr: raft_addr.to_string(),
            http_addr: http_addr.to_string(),
            secret: Vec::new(),
            initial_cluster: BTreeMap::new(),
            bootstrap: false,
            // Failover takes openraft's leader lease (the election timeout's upper bound) plus a
            // random election timeout: 250-500 ms keeps it under a second.
            heartbeat_ms: 50,
            election_timeout_ms: (250, 500),
            snapshot_every: DEFAULT_SNAPSHOT_EVERY,
            request_timeout: Duration::from_secs(10),
            snapshot_chunk_bytes: DEFAULT_SNAPSHOT_CHUNK_BYTES,
        }
    }

    fn openraft_config(&self) -> Result<openraft::Config, RaftError> {
        let config = openraft::Config {
            cluster_name: "convoy".to_string(),
            heartbeat_interval: self.heartbeat_ms,
            election_timeout_min: self.election_timeout_ms.0,
            election_timeout_max: self.election_timeout_ms.1,
            snapshot_policy: SnapshotPolicy::LogsSinceLast(self.snapshot_every),
            max_in_snapshot_log_to_keep: self.snapshot_every / 10,
            enable_pre_vote: Some(true),
            // The deadline of each RPC of a streamed snapshot (a chunk of up to 16 MiB; the
            // install at the end gets at least `NetworkConfig::snapshot_install_timeout`).
            // openraft's default (200 ms) would time out a large chunk and resend forever.
            install_snapshot_timeout: 30_000,
            ..Default::default()
        };
        config.validate().map_err(|e| RaftError::Storage {
            path: self.data_dir.display().to_string(),
            reason: format!("invalid raft settings: {e}"),
        })
    }
}

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

/// A running replica of a [`StateMachine`].
pub struct RaftNode<S: StateMachine> {
    id: NodeId,
    config: RaftConfig,
    raft: Raft<SmStore<S>>,
    applied: Arc<AppliedState<S>>,
    network: Network<SnapshotData>,
    local: LocalHandler<S>,
    server: TransportServer,
    _state: PhantomData<S>,
}

impl<S: StateMachine> RaftNode<S> {
    /// Opens (or creates) the data dir, starts raft and the transport, and bootstraps a new
    /// cluster when configured to and the data dir was empty. A restart never bootstraps again.
    pub async fn start(config: RaftConfig) -> Result<Arc<Self>, RaftError> {
        let fresh = std::fs::read_dir(&config.data_dir)
            .map(|mut d| d.next().is_none())
            .unwrap_or(true);
        std::fs::create_dir_all(&config.data_dir).map_err(|e| RaftError::Storage {
            path: config.data_dir.display().to_string(),
            reason: e.to_string(),
        })?;
        let db = open_db(&config.data_dir)?;
        let log_store = RocksLogStore::new(db.clone());
        let sm_store = SmStore::<S>::open(db)?;
        let applied = sm_store.applied();
        let secret = Arc::new(config.secret.clone());
        let network_config = NetworkConfig {
            snapshot_chunk_bytes: config.snapshot_chunk_bytes,
            ..NetworkConfig::default()
        };
        let network = Network::with_config(config.id, secret.clone(), network_config);
        let raft = Raft::new(
            config.id,
            Arc::new(config.openraft_config()?),
            network.clone(),
            log_store,
            sm_store,
        )
        .await
        .map_err(|e| RaftError::Stopped(e.to_string()))?;

        let local = LocalHandler::spawn(raft.clone(), config.request_timeout * 2 / 3);
        let listener = tokio::net::TcpListener::bind(&config.raft_addr)
            .await
            .map_err(|e| RaftError::Unreachable {
                leader: config.id,
                addr: config.raft_addr.clone(),
                reason: format!("cannot listen: {e}"),
            })?;
        // Received snapshot chunks go to `tmp-recv-*` files in the snapshot directory: on this
        // file system, and removed with a crash's other leftovers when the data dir is opened.
        let server_config = ServerConfig {
            snapshot_inbox: Some(config.data_dir.join(SNAPSHOT_DIR)),
            peer_closed: Some(crate::failover::spawn(config.id, raft.clone())),
            ..ServerConfig::default()
        };
        let server = TransportServer::spawn_with(
            listener,
            config.id,
            raft.clone(),
            secret,
            Arc::new(local.clone()) as Arc<dyn ClientHandler>,
            server_config,
        );

        let initialized = raft
            .is_initialized()
            .await
            .map_err(|e| RaftError::Stopped(e.to_string()))?;
        if config.bootstrap && fresh && !initialized {
            if !config.initial_cluster.contains_key(&config.id) {
                return Err(RaftError::Client(ClientError::Invalid(format!(
                    "server id {} is not in initial_cluster {:?}",
                    config.id,
                    config.initial_cluster.keys().collect::<Vec<_>>()
                ))));
            }
            tracing::info!(members = ?config.initial_cluster.keys().collect::<Vec<_>>(), "bootstrapping a new cluster");
            if let Err(e) = raft.initialize(config.initial_cluster.clone()).await {
                // Another founding member may already have initialized us: not an error.
                tracing::warn!(error = %e, "initialize refused");
            }
        } else if fresh && !initialized {
            tracing::info!("empty data dir: waiting to be added to an existing cluster");
        } else {
            tracing::info!(last_applied = applied.last_applied(), "resuming from disk");
        }

        Ok(Arc::new(Self {
            id: config.id,
            config,
            raft,
            applied,
            network,
            local,
            server,
            _state: PhantomData,
        }))
    }

    /// This server's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The openraft handle, for metrics and tests.
    pub fn raft(&self) -> &Raft<SmStore<S>> {
        &self.raft
    }

    /// The transport client, e.g. to inject faults in tests.
    pub fn network(&self) -> &Network<SnapshotData> {
        &self.network
    }

    /// The applied state, readable at any time (possibly stale on a follower).
    pub fn applied(&self) -> &Arc<AppliedState<S>> {
        &self.applied
    }

    /// Reads the locally applied state.
    pub fn read<R>(&self, f: impl FnOnce(&S) -> R) -> R {
        self.applied.read(f)
    }

    /// Reads the state after everything committed before this call is applied here
    /// (linearizable; the leader confirms its leadership with a quorum first).
    pub async fn read_consistent<R>(&self, f: impl FnOnce(&S) -> R) -> Result<R, RaftError> {
        let index = match self.request(ClientRequest::ReadIndex).await? {
            ClientResponse::ReadIndex(index) => index,
            other => return Err(unexpected(other)),
        };
        self.wait_applied(index, self.config.request_timeout)
            .await?;
        Ok(self.applied.read(f))
    }

    /// Waits until this server has applied log index `index`.
    pub async fn wait_applied(&self, index: u64, timeout: Duration) -> Result<(), RaftError> {
        let mut rx = self.applied.subscribe();
        let wait = async move { rx.wait_for(|applied| *applied >= index).await.map(|_| ()) };
        match tokio::time::timeout(timeout, wait).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(RaftError::Stopped("state machine closed".into())),
            Err(_) => Err(RaftError::NoLeader(format!(
                "index {index} not applied within {timeout:?} (applied {})",
                self.applied.last_applied()
            ))),
        }
    }

    /// Proposes a command: on the leader it joins the next batch; on a follower it is forwarded.
    /// Returns the state machine's response once the command is committed and applied by the
    /// leader and, as far as `request_timeout` allows, by this server too: a read of this
    /// server's state right after sees the write (read-your-writes) without another round trip.
    /// A write that committed is never reported as failed because this server lags.
    pub async fn propose(&self, command: &S::Command) -> Result<S::Response, RaftError> {
        let bytes = codec::encode(command)?;
        match self.request(ClientRequest::Propose(bytes)).await? {
            ClientResponse::Applied {
                index,
                reply: Reply(bytes),
            } => {
                if let Err(e) = self.wait_applied(index, self.config.request_timeout).await {
                    tracing::debug!(index, error = %e, "committed, not yet applied here");
                }
                Ok(codec::decode(&bytes)?)
            }
            other => Err(unexpected(other)),
        }
    }

    /// Adds a server: as a learner, then as a voter once it has caught up.
    pub async fn add_member(&self, id: NodeId, member: Member) -> Result<(), RaftError> {
        self.request(ClientRequest::AddMember { id, member })
            .await
            .map(|_| ())
    }

    /// Removes a server from the cluster.
    pub async fn remove_member(&self, id: NodeId) -> Result<(), RaftError> {
        self.request(ClientRequest::RemoveMember { id })
            .await
            .map(|_| ())
    }

    /// Whether this server is the leader right now.
    pub fn is_leader(&self) -> bool {
        self.raft.metrics().borrow_watched().state == ServerState::Leader
    }

    /// The leader this server knows of, with its addresses.
    pub fn leader(&self) -> Option<(NodeId, Member)> {
        let metrics = self.raft.metrics().borrow_watched().clone();
        let leader = metrics.current_leader?;
        let member = metrics.membership_config.get_node(&leader)?.clone();
        Some((leader, member))
    }

    /// A watch that changes whenever this server's raft metrics change (e.g. leadership).
    pub fn metrics(
        &self,
    ) -> openraft::alias::WatchReceiverOf<crate::TypeConfig, openraft::RaftMetrics<crate::TypeConfig>>
    {
        self.raft.metrics()
    }

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

    /// Before a planned stop: if this server leads, stops taking proposals (callers here and
    /// forwarding followers wait for the successor), waits until what it took is applied, hands
    /// leadership to the most up-to-date voter and waits until another server leads, all within
    /// `patience`. Returns the new leader, or `None` when this server was not leading, has no
    /// other voter, or the hand-over did not finish in time (the stop then costs an election).
    pub async fn hand_over(&self, patience: Duration) -> Option<NodeId> {
        if !self.is_leader() {
            return None;
        }
        let deadline = tokio::time::Instant::now() + patience;
        self.local.draining.store(true, Ordering::SeqCst);
        // What was proposed before the drain commits here, so that no write is cut off mid-way
        // and answered "not the leader" after all (a retry would apply it twice).
        let mut metrics = self.raft.metrics();
        let settled = |m: &openraft::RaftMetrics<crate::TypeConfig>| {
            m.last_applied.as_ref().map(|l| l.index) >= m.last_log_index
        };
        while tokio::time::Instant::now() < deadline {
            let idle = self.local.proposals.capacity() == BATCH_QUEUE;
            if idle && settled(&metrics.borrow_watched()) {
                break;
            }
            let _ = tokio::time::timeout(Duration::from_millis(10), metrics.changed()).await;
        }
        let m = self.raft.metrics().borrow_watched().clone();
        let voters: BTreeSet<NodeId> = m.membership_config.membership().voter_ids().collect();
        let replication = m.replication.clone().unwrap_or_default();
        let Some(to) = crate::handover::successor(self.id, &voters, &replication) else {
            tracing::info!("no other voter to hand leadership to");
            return None;
        };
        tracing::info!(to, "handing leadership over before stopping");
        if let Err(e) = self.raft.trigger().transfer_leader(to).await {
            tracing::warn!(to, error = %e, "leadership hand-over refused");
            return None;
        }
        let mut metrics = self.raft.metrics();
        loop {
            let leader = metrics.borrow_watched().current_leader;
            if let Some(leader) = leader.filter(|l| *l != self.id) {
                tracing::info!(leader, "leadership handed over");
                return Some(leader);
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                tracing::warn!(to, ?patience, "leadership hand-over did not finish in time");
                return None;
            }
            let _ = tokio::time::timeout(left, metrics.changed()).await;
        }
    }

    /// Stops raft and the transport; the data dir stays consistent.
    pub async fn shutdown(&self) {
        self.server.stop();
        if let Err(e) = self.raft.shutdown().await {
            tracing::warn!(error = %e, "raft shutdown");
        }
    }

    /// Carries out a client request on the leader, forwarding it if this server is a follower,
    /// and retrying while there is no leader, until the request timeout.
    async fn request(&self, request: ClientRequest) -> Result<ClientResponse, RaftError> {
        let deadline = Instant::now() + self.config.request_timeout;
        let mut last_error;
        loop {
            let outcome = match self.leader() {
                Some((leader, _)) if leader == self.id => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match tokio::time::timeout(left, self.local.handle(request.clone())).await {
                        Ok(answer) => answer,
                        Err(_) => {
                            return Err(RaftError::NoLeader(format!(
                                "not committed within {:?}: no quorum reachable",
                                self.config.request_timeout
                            )))
                        }
                    }
                }
                Some((leader, member)) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match self
                        .network
                        .call_client(leader, &member.raft_addr, request.clone(), left)
                        .await
                    {
                        Ok(answer) => answer,
                        Err(e) if e.is_connect() => Err(ClientError::NoLeader),
                        Err(e) => {
                            return Err(RaftError::Unreachable {
                                leader,
                                addr: member.raft_addr,
                                reason: e.to_string(),
                            })
                        }
                    }
                }
                None => Err(ClientError::NoLeader),
            };
            match outcome {
                Ok(response) => return Ok(response),
                Err(e @ (ClientError::NoLeader | ClientError::NotLeader { .. })) => last_error = e,
                Err(e) => return Err(e.into()),
            }
            if Instant::now() >= deadline {
                return Err(RaftError::NoLeader(format!(
                    "gave up after {:?}: {last_error}",
                    self.config.request_timeout
                )));
            }
            let mut metrics = self.raft.metrics();
            let _ = tokio::time::timeout(Duration::from_millis(50), metrics.changed()).await;
        }
    }
}

fn unexpected(response: ClientResponse) -> RaftError {
    RaftError::Client(ClientError::Failed(format!(
        "unexpected answer {response:?}"
    )))
}

/// Milliseconds since the Unix epoch, the leader's stamp on a batch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A proposal waiting for the batcher, and where its answer goes.
struct Pending {
    command: Vec<u8>,
    reply: oneshot::Sender<Result<ClientResponse, ClientError>>,
}

/// Carries out client requests on this server as leader: the [`ClientHandler`] the transport
/// calls for forwarded requests, and what [`RaftNode`] calls for its own.
struct LocalHandler<S: StateMachine> {
    raft: Raft<SmStore<S>>,
    proposals: mpsc::Sender<Pending>,
    /// How long a new server may take to catch up as a learner before it is given up on (shorter
    /// than a request's deadline, so a server that never catches up is removed within the request).
    catch_up: Duration,
    /// Set while leadership is handed over before a stop: every request is answered "not the
    /// leader", so callers wait for the successor instead of proposing here.
    draining: Arc<AtomicBool>,
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
    fn spawn(raft: Raft<SmStore<S>>, catch_up: Duration) -> Self {
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

    async fn add_member(&self, id: NodeId, member: Member) -> Result<ClientResponse, ClientError> {
        let addr = member.raft_addr.clone();
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

/// Drains queued proposals into batches: each batch is one `client_write_many`, so its entries
/// share one append and one fsync. The next batch is submitted while the previous one commits.
async fn run_batcher<S: StateMachine>(raft: Raft<SmStore<S>>, mut rx: mpsc::Receiver<Pending>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let at_ms = now_ms();
        let (proposals, replies): (Vec<_>, Vec<_>) = batch
            .drain(..)
            .map(|p| {
                (
                    Proposal {
                        at_ms,
                        command: p.command,
                    },
                    p.reply,
                )
            })
            .unzip();
        match raft.client_write_many(proposals).await {
            Ok(results) => {
                tokio::spawn(async move {
                    let mut results = results;
                    for reply in replies {
                        let answer = match results.next().await {
                            Some(Ok(Ok(written))) => Ok(ClientResponse::Applied {
                                index: written.log_id.index,
                                reply: written.response,
                            }),
                            Some(Ok(Err(ClientWriteError::ForwardToLeader(f)))) => {
                                Err(ClientError::NotLeader {
                                    leader: f.leader_id.zip(f.leader_node),
                                })
                            }
                            Some(Ok(Err(e))) => Err(ClientError::Failed(e.to_string())),
                            Some(Err(fatal)) => Err(ClientError::Failed(fatal.to_string())),
                            None => Err(ClientError::Failed("no result for proposal".into())),
                        };
                        let _ = reply.send(answer);
                    }
                });
            }
            Err(fatal) => {
                for reply in replies {
                    let _ = reply.send(Err(ClientError::Failed(fatal.to_string())));
                }
            }
        }
    }
}
