//! A running replica: openraft wired to the RocksDB stores and the transport, with proposal
//! batching, forwarding to the leader, linearizable reads and membership changes.

mod ask_peers;
mod batcher;
mod config;
pub mod contact;
pub mod core_watch;
mod handler;
mod info;
pub mod snapshot_due;
mod stop;
mod storage_hold;

pub use config::{RaftConfig, DEFAULT_SNAPSHOT_EVERY, DEFAULT_SNAPSHOT_MAX_EVERY};
pub use contact::Contact;
pub use handler::may_change_membership;
pub use info::{ClusterInfo, MemberInfo, Role};
pub use storage_hold::StorageHold;

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use openraft::async_runtime::WatchReceiver;
use openraft::ServerState;

use crate::codec;
use crate::error::RaftError;
use crate::identity::{ClusterId, Identity, Opened};
use crate::log_store::{open_db_tuned, RocksLogStore};
use crate::network::client::{Network, NetworkConfig};
use crate::network::heard::Heard;
use crate::network::server::{ServerConfig, TransportServer};
use crate::network::standing::Standing;
use crate::network::{ClientError, ClientHandler, ClientRequest, ClientResponse};
use crate::sm_store::files::SNAPSHOT_DIR;
use crate::sm_store::{AppliedState, SmStore, SnapshotData};
use crate::state_machine::StateMachine;
use crate::types::{Member, NodeId, Raft, Reply};
use core_watch::CoreState;
use handler::LocalHandler;

/// A running replica of a [`StateMachine`].
pub struct RaftNode<S: StateMachine> {
    id: NodeId,
    config: RaftConfig,
    raft: Raft<SmStore<S>>,
    applied: Arc<AppliedState<S>>,
    network: Network<SnapshotData>,
    local: LocalHandler<S>,
    /// The transport's server; taken by `shutdown`, which waits for its listener to close.
    server: std::sync::Mutex<Option<TransportServer>>,
    /// The task that asks for snapshots when due (module `snapshot_due`).
    snapshots: tokio::task::JoinHandle<()>,
    /// This data dir's identity, stated and checked in the transport's handshakes.
    identity: Arc<Identity>,
    /// Whether the raft core still runs (module `core_watch`).
    core: Arc<CoreState>,
    /// The database, watched: [`RaftNode::hold_storage`] hands out a hold on it.
    db: std::sync::Weak<rocksdb::DB>,
    /// When each leading peer was last heard from (the transport server records it).
    heard: Arc<Heard>,
    _state: PhantomData<S>,
}

impl<S: StateMachine> RaftNode<S> {
    /// Opens (or creates) the data dir, starts raft and the transport, and bootstraps a new
    /// cluster when configured to and the data dir was empty. A restart never bootstraps again.
    pub async fn start(config: RaftConfig) -> Result<Arc<Self>, RaftError> {
        // The transport's address first: one in use stops the server before it opens anything.
        let listener = tokio::net::TcpListener::bind(&config.raft_addr)
            .await
            .map_err(|e| RaftError::Listen {
                addr: config.raft_addr.clone(),
                reason: e.to_string(),
            })?;
        let fresh = std::fs::read_dir(&config.data_dir)
            .map(|mut d| d.next().is_none())
            .unwrap_or(true);
        std::fs::create_dir_all(&config.data_dir).map_err(|e| RaftError::Storage {
            path: config.data_dir.display().to_string(),
            reason: e.to_string(),
        })?;
        // Who this data dir belongs to, before anything is written to it.
        let founders = config
            .bootstrap
            .then(|| ClusterId::of_founders(&config.secret, &config.initial_cluster));
        let (identity, opened) = Identity::open(
            &config.data_dir,
            config.id,
            founders,
            fresh,
            config.state_format,
        )?;
        let identity = Arc::new(identity);
        match opened {
            Opened::Adopted => tracing::info!(
                incarnation = format!("{:016x}", identity.incarnation()),
                "data dir without an identity: adopted (a new incarnation; the cluster id comes from the founders or the first peer)"
            ),
            Opened::Created | Opened::Read => tracing::debug!(
                incarnation = format!("{:016x}", identity.incarnation()),
                "identity"
            ),
        }
        let db = open_db_tuned(&config.data_dir, &config.storage)?;
        let db_watch = Arc::downgrade(&db);
        let log_store = RocksLogStore::new(db.clone());
        let sm_store = SmStore::<S>::open(db)?;
        let applied = sm_store.applied();
        let snapshot_file = sm_store.snapshot_path();
        let secret = Arc::new(config.secret.clone());
        let network_config = NetworkConfig {
            snapshot_chunk_bytes: config.snapshot_chunk_bytes,
            ..NetworkConfig::default()
        };
        let standing = Arc::new(Standing::default());
        let heard = Arc::new(Heard::default());
        let network = Network::with_identity(
            config.id,
            secret.clone(),
            network_config,
            identity.clone(),
            standing.clone(),
        );
        let raft = Raft::new(
            config.id,
            Arc::new(config.openraft_config()?),
            network.clone(),
            log_store,
            sm_store,
        )
        .await
        .map_err(|e| RaftError::Stopped(e.to_string()))?;

        core_watch::prime(&raft, &identity);
        let core = Arc::new(CoreState::default());
        core_watch::spawn(
            raft.clone(),
            identity.clone(),
            network.clone(),
            core.clone(),
        );
        let snapshots = snapshot_due::spawn(
            raft.clone(),
            config.snapshot_every,
            config.snapshot_max_every,
            snapshot_file,
        );
        let local = LocalHandler::spawn(raft.clone(), config.request_timeout * 2 / 3);
        // Received snapshot chunks go to `tmp-recv-*` files in the snapshot directory: on this
        // file system, and removed with a crash's other leftovers when the data dir is opened.
        let server_config = ServerConfig {
            snapshot_inbox: Some(config.data_dir.join(SNAPSHOT_DIR)),
            peer_closed: Some(crate::failover::spawn(config.id, raft.clone())),
            identity: identity.clone(),
            standing,
            heard: heard.clone(),
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
                return Err(RaftError::Config(format!(
                    "server id {} is not in initial_cluster {:?}",
                    config.id,
                    config.initial_cluster.keys().collect::<Vec<_>>()
                )));
            }
            // Asked with this server's transport already answering, so that founders starting
            // together answer each other. If refused, the data dir is no longer empty: a restart
            // waits to be added (as `existing`) instead of bootstrapping.
            ask_peers::ask_peers(&config, &identity).await?;
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
            server: std::sync::Mutex::new(Some(server)),
            snapshots,
            identity,
            core,
            db: db_watch,
            heard,
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

    /// This data dir's identity (cluster id, incarnation, the peers met).
    pub fn identity(&self) -> &Arc<Identity> {
        &self.identity
    }

    /// Why the raft core stopped on its own (a panic or a fatal error), if it did: the process
    /// must exit.
    pub fn core_stopped(&self) -> Option<String> {
        self.core.stopped().map(str::to_string)
    }

    /// Word of a quorum as `metrics` (this replica's) and the transport have it: see [`contact`].
    pub fn contact(&self, metrics: &openraft::RaftMetrics<crate::types::TypeConfig>) -> Contact {
        let now = Instant::now();
        contact::contact(&contact::Seen::of(metrics, now), &self.heard, now)
    }

    /// How long this replica may go without word of a quorum and still be ready: see
    /// [`RaftConfig::quorum_patience`].
    pub fn quorum_patience(&self) -> Duration {
        self.config.quorum_patience()
    }

    /// Why this server's peers refuse it (another cluster, a replaced data dir, another secret),
    /// when they have lately and none accepted it since.
    pub fn refused_by_peers(&self) -> Option<String> {
        self.network.standing().refused_by_peers()
    }

    /// Why this server refuses its peers as another cluster's while working with none of them (it is
    /// on another cluster's data): see `Standing::refuses_peers`.
    pub fn refuses_peers(&self) -> Option<String> {
        self.network.standing().refuses_peers()
    }

    /// Replaces member `id` whose data dir was lost: removes it, then adds it back at the same
    /// addresses as a learner (it has a new incarnation, met anew), promoted once caught up. The
    /// server must run on its new data dir with `initial_cluster_state = "existing"`.
    pub async fn replace_member(&self, id: NodeId) -> Result<Member, RaftError> {
        let member = self
            .raft
            .metrics()
            .borrow_watched()
            .membership_config
            .membership()
            .get_node(&id)
            .cloned()
            .ok_or_else(|| {
                RaftError::Client(ClientError::Invalid(format!("server {id} is not a member")))
            })?;
        self.remove_member(id).await?;
        // Every member forgets the old incarnation when it sees the removal (module
        // `core_watch`); give the followers a few heartbeats to see it.
        tokio::time::sleep(Duration::from_millis(self.config.heartbeat_ms * 10)).await;
        self.add_member(id, member.clone()).await?;
        Ok(member)
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
