//! How a replica is configured ([`RaftConfig`]) and the openraft settings derived from it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use openraft::SnapshotPolicy;

use crate::error::RaftError;
use crate::log_store::StorageTuning;
use crate::network::inbox::DEFAULT_SNAPSHOT_CHUNK_BYTES;
use crate::types::{Member, NodeId};

/// Entries between two snapshots unless configured (`snapshot_every`).
pub const DEFAULT_SNAPSHOT_EVERY: u64 = 10_000;

/// The most entries between two snapshots however large the state (`snapshot_max_every`).
pub const DEFAULT_SNAPSHOT_MAX_EVERY: u64 = 1_000_000;

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
    /// Build a snapshot (and purge the log before it) after this many entries, or more as the
    /// state grows (one entry per 64 bytes of the last snapshot; module `snapshot_due`).
    pub snapshot_every: u64,
    /// The most entries between two snapshots, however large the state; at or below
    /// `snapshot_every` the interval is fixed at `snapshot_every`.
    pub snapshot_max_every: u64,
    /// How long a client request may wait for a leader, including forwarding and retries.
    pub request_timeout: Duration,
    /// The size of the chunks snapshots are streamed to followers in (default
    /// [`DEFAULT_SNAPSHOT_CHUNK_BYTES`], at most
    /// [`crate::network::inbox::MAX_SNAPSHOT_CHUNK_BYTES`]). A test knob: only
    /// tests lower it, to send a small snapshot as many chunks.
    pub snapshot_chunk_bytes: usize,
    /// How the RocksDB under the log is tuned.
    pub storage: StorageTuning,
    /// The version of the state machine's encoding (its commands and snapshots), recorded in the
    /// data dir: a data dir recorded with another is refused at start ([`crate::identity`]).
    pub state_format: u32,
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
            snapshot_max_every: DEFAULT_SNAPSHOT_MAX_EVERY,
            request_timeout: Duration::from_secs(10),
            snapshot_chunk_bytes: DEFAULT_SNAPSHOT_CHUNK_BYTES,
            storage: StorageTuning::default(),
            state_format: 1,
        }
    }

    /// How long a replica may go without word of a quorum (module `contact`) and still be ready: the leader
    /// lease (openraft: the election timeout's upper bound) plus the longest election timeout, after which
    /// a follower that has not heard from its leader campaigns. A healthy leader hears from its quorum at
    /// every heartbeat, a follower from its leader.
    pub fn quorum_patience(&self) -> Duration {
        Duration::from_millis(2 * self.election_timeout_ms.1)
    }

    /// The openraft settings a replica runs with; convoy-lab's simulation runs openraft with them too.
    pub fn openraft_config(&self) -> Result<openraft::Config, RaftError> {
        let config = openraft::Config {
            cluster_name: "convoy".to_string(),
            heartbeat_interval: self.heartbeat_ms,
            election_timeout_min: self.election_timeout_ms.0,
            election_timeout_max: self.election_timeout_ms.1,
            // The replica asks for snapshots itself (module `snapshot_due`), scaling the
            // interval with the state's size, which openraft's policies cannot.
            snapshot_policy: SnapshotPolicy::Never,
            max_in_snapshot_log_to_keep: self.snapshot_every / 10,
            enable_pre_vote: Some(true),
            // The deadline of each RPC of a streamed snapshot (a chunk of up to 16 MiB; the
            // install at the end gets at least `NetworkConfig::snapshot_install_timeout`).
            // openraft's default (200 ms) would time out a large chunk and resend forever.
            install_snapshot_timeout: 30_000,
            // A restarted leader stands for election like any server instead of restoring its
            // leadership in the same term: a leader whose last entries were committed by the
            // followers before its own disk synced them (then lost in a power cut) would otherwise
            // write other entries at those indexes in that term. `convoy-lab simulate` found it
            // (seeds 880024 and 990002).
            enable_leader_restore: Some(false),
            ..Default::default()
        };
        config
            .validate()
            .map_err(|e| RaftError::Config(format!("openraft refuses the settings: {e}")))
    }
}
