//! The simulated servers: each a real openraft `Raft` over its [`SimLog`] and [`SimSm`], its tasks
//! owned by its id so that a crash drops them all at once, its disk keeping only what was synced,
//! its state machine starting empty again and replaying the log, like a restarted process.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use convoy_actors::domain::{ClusterState, Command, DomainError, Response};
use convoy_raft::{codec, Member, Proposal};
use futures::channel::oneshot;
use openraft::async_runtime::WatchReceiver;
use openraft::errors::{ClientWriteError, LinearizableReadError, RaftError};
use openraft::ReadPolicy;

use super::disk::{Disk, FsyncModel};
use super::executor;
use super::log_store::{lock, DiskLatency, SharedDisk, SimLog};
use super::net::{SimNet, SimNetFactory, SimRaft};
use super::observe::{fnv, EntryKey, Observations};
use super::sm_store::{Applied, SharedApplied, SharedSnapshot, SimSm};
use super::snapshots;

/// The wall clock the servers start at (ms since the epoch): 2026-01-01.
pub const START_WALL_MS: u64 = 1_767_225_600_000;

/// The simulation's `snapshot_every` (convoy's default is far above what a run writes).
pub const SNAPSHOT_EVERY: u64 = 200;

/// The simulation's `snapshot_max_every`: the most entries between two snapshots however large the
/// state (convoy's default is a million), so that a run builds snapshots and purges its logs.
pub const SNAPSHOT_MAX_EVERY: u64 = 400;

/// One simulated server.
pub struct Server {
    disk: SharedDisk,
    applied: SharedApplied,
    snapshot: SharedSnapshot,
    latency: Arc<Mutex<DiskLatency>>,
    up: bool,
}

/// What a client's write came to.
#[derive(Debug)]
pub enum Written {
    /// Committed and applied at `index`: the domain's answer.
    Done {
        /// Its log index.
        index: u64,
        /// The state machine's answer.
        response: Result<Response, DomainError>,
    },
    /// No answer: it may or may not have been committed.
    Unknown(String),
}

/// The servers, the network and the observations.
pub struct Cluster {
    servers: BTreeMap<u64, Server>,
    /// The network between them.
    pub net: SimNet,
    /// What the run observes.
    pub obs: Observations,
    config: Arc<openraft::Config>,
    members: BTreeMap<u64, Member>,
    client: Client,
}

/// A client of the cluster, cheap to clone: sends writes to the leader it last heard of.
#[derive(Clone)]
pub struct Client {
    net: SimNet,
    obs: Observations,
    n: u64,
    /// Where clients send first (the last leader they heard of).
    leader_hint: Arc<Mutex<u64>>,
    /// Each server's wall clock offset from the virtual time, in ms (clock jumps).
    clocks: Arc<Mutex<BTreeMap<u64, i64>>>,
}

impl Cluster {
    /// `n` servers (ids 1..=n) on `net`, not started, their disks under `model`.
    pub fn new(n: u64, model: FsyncModel, net: SimNet, obs: Observations) -> anyhow::Result<Self> {
        let config = openraft_config(None)?;
        let members = (1..=n)
            .map(|id| {
                (
                    id,
                    Member {
                        raft_addr: format!("sim-{id}:7000"),
                        http_addr: format!("sim-{id}:8080"),
                    },
                )
            })
            .collect();
        let servers = (1..=n)
            .map(|id| {
                let server = Server {
                    disk: Arc::new(Mutex::new(Disk::new(model))),
                    applied: Arc::new(Mutex::new(Applied::default())),
                    snapshot: Arc::new(Mutex::new(None)),
                    latency: Arc::new(Mutex::new(DiskLatency::new(Duration::from_micros(500)))),
                    up: false,
                };
                (id, server)
            })
            .collect();
        let client = Client {
            net: net.clone(),
            obs: obs.clone(),
            n,
            leader_hint: Arc::new(Mutex::new(1)),
            clocks: Arc::new(Mutex::new(BTreeMap::new())),
        };
        Ok(Cluster {
            servers,
            net,
            obs,
            config,
            members,
            client,
        })
    }

    /// Sets the heartbeat before any server starts; the election timeout follows it as convoy's
    /// production settings do (5–10 heartbeats: 50 ms and 250–500 ms).
    pub fn set_heartbeat(&mut self, heartbeat_ms: u64) -> anyhow::Result<()> {
        self.config = openraft_config(Some(heartbeat_ms))?;
        Ok(())
    }

    /// Turns openraft's leader restore back on (the mutation `--mutate leader-restore`): a leader
    /// restarted in its term leads again without an election, which convoy turned off after seeds
    /// 880024 and 990002. Before any server starts.
    pub fn restore_leaders(&mut self) {
        let mut config = (*self.config).clone();
        config.enable_leader_restore = Some(true);
        self.config = Arc::new(config);
    }

    /// The server ids.
    pub fn ids(&self) -> Vec<u64> {
        self.servers.keys().copied().collect()
    }

    /// Whether server `id` runs.
    pub fn is_up(&self, id: u64) -> bool {
        self.servers.get(&id).is_some_and(|s| s.up)
    }

    /// Starts server `id` from its disk (a fresh state machine replays the log).
    pub async fn start(&mut self, id: u64) -> anyhow::Result<()> {
        let Some(server) = self.servers.get_mut(&id) else {
            anyhow::bail!("no server {id}");
        };
        // A restarted server starts from its last snapshot and replays the log after it.
        let applied = Applied::from_snapshot(&server.snapshot)
            .map_err(|e| anyhow::anyhow!("server {id}'s snapshot does not restore: {e}"))?;
        server.applied = Arc::new(Mutex::new(applied));
        let log = SimLog::new(
            id,
            server.disk.clone(),
            server.latency.clone(),
            self.obs.clone(),
        );
        let sm = SimSm::new(
            id,
            server.applied.clone(),
            server.snapshot.clone(),
            self.obs.clone(),
        );
        let factory = SimNetFactory {
            from: id,
            net: self.net.clone(),
        };
        let config = self.config.clone();
        let (tx, rx) = oneshot::channel();
        // Booted from a task of its own, so that every task openraft spawns belongs to `id`.
        executor::spawn_owned(id, async move {
            let raft = SimRaft::new(id, config, factory, log, sm).await;
            let _ = tx.send(raft.map_err(|e| e.to_string()));
        });
        let raft = rx
            .await
            .map_err(|_| anyhow::anyhow!("server {id} died while booting"))?
            .map_err(|e| anyhow::anyhow!("server {id} did not boot: {e}"))?;
        snapshots::spawn(
            id,
            raft.clone(),
            server.snapshot.clone(),
            SNAPSHOT_EVERY,
            SNAPSHOT_MAX_EVERY,
        );
        self.net.up(id, raft);
        server.up = true;
        self.obs.trace(format!("s{id} up"));
        Ok(())
    }

    /// Founds the cluster from server `id`.
    pub async fn initialize(&self, id: u64) -> anyhow::Result<()> {
        let raft = self
            .net
            .raft(id)
            .ok_or_else(|| anyhow::anyhow!("server {id} is down"))?;
        raft.initialize(self.members.clone())
            .await
            .map_err(|e| anyhow::anyhow!("initialize from {id}: {e}"))?;
        Ok(())
    }

    /// Server `id` loses power: its tasks stop, its unsynced writes and its memory are lost.
    pub fn crash(&mut self, id: u64) {
        let Some(server) = self.servers.get_mut(&id) else {
            return;
        };
        if !server.up {
            return;
        }
        self.net.down(id);
        executor::kill_owner(id);
        let lost = lock(&server.disk).crash();
        server.up = false;
        self.obs
            .trace(format!("s{id} crashed, {lost} unsynced entries lost"));
    }

    /// Sets how long server `id`'s syncs take.
    pub fn set_disk_latency(&self, id: u64, sync: Duration) {
        if let Some(server) = self.servers.get(&id) {
            lock(&server.latency).sync = sync;
        }
    }

    /// Asks server `id` to build a snapshot now (as convoy's replica does when one is due);
    /// openraft then purges its log behind it. Returns whether the server was up to ask.
    pub async fn snapshot(&self, id: u64) -> bool {
        let Some(raft) = self.net.raft(id) else {
            return false;
        };
        raft.trigger().snapshot().await.is_ok()
    }

    /// Fills server `id`'s disk (its log refuses appends and votes) or frees it.
    pub fn set_disk_full(&self, id: u64, full: bool) {
        if let Some(server) = self.servers.get(&id) {
            lock(&server.latency).full = full;
        }
    }

    /// Moves server `id`'s wall clock by `delta_ms`.
    pub fn jump_clock(&self, id: u64, delta_ms: i64) {
        let mut clocks = lock(&self.client.clocks);
        let offset = clocks.entry(id).or_default();
        *offset = offset.saturating_add(delta_ms);
    }

    /// Server `id`'s addresses, as the membership names them.
    pub fn member(&self, id: u64) -> Option<Member> {
        self.members.get(&id).cloned()
    }

    /// A client of this cluster.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The leader as the servers up believe it (the belief of the highest term).
    pub fn leader(&self) -> Option<u64> {
        self.client.leader()
    }

    /// The last index server `id` applied (0 when down).
    pub fn last_applied(&self, id: u64) -> u64 {
        self.servers
            .get(&id)
            .filter(|s| s.up)
            .and_then(|s| lock(&s.applied).last_applied.as_ref().map(|l| l.index))
            .unwrap_or(0)
    }

    /// Server `id`'s applied state, shared, if it is up.
    pub fn applied_of(&self, id: u64) -> Option<SharedApplied> {
        self.servers
            .get(&id)
            .filter(|s| s.up)
            .map(|s| s.applied.clone())
    }

    /// Reads server `id`'s applied state (what its API would answer).
    pub fn read<R>(&self, id: u64, f: impl FnOnce(&ClusterState, u64) -> R) -> Option<R> {
        let server = self.servers.get(&id).filter(|s| s.up)?;
        let applied = lock(&server.applied);
        Some(f(applied.machine.state(), applied.last_at_ms))
    }

    /// The SHA-256 of server `id`'s state (its snapshot bytes) and its last applied index.
    pub fn digest(&self, id: u64) -> Option<(u64, String)> {
        use sha2::{Digest, Sha256};
        let bytes = self.read(id, |state, _| state.snapshot_bytes())?;
        Some((
            self.last_applied(id),
            super::observe::hex(&Sha256::digest(bytes)),
        ))
    }
}

/// convoy's openraft settings, with 5 s client requests and, if given, another heartbeat (and an
/// election timeout of 5–10 heartbeats, as convoy's 50 ms and 250–500 ms).
fn openraft_config(heartbeat_ms: Option<u64>) -> anyhow::Result<Arc<openraft::Config>> {
    let mut raft_config = convoy_raft::RaftConfig::new(0, "/nonexistent", "", "");
    raft_config.request_timeout = Duration::from_secs(5);
    // Snapshots every few hundred entries, so that a run purges its logs (openraft keeps a
    // tenth of that behind each snapshot): each server asks for them when due (`snapshots`), and
    // the snapshot fault asks at other times.
    raft_config.snapshot_every = SNAPSHOT_EVERY;
    raft_config.snapshot_max_every = SNAPSHOT_MAX_EVERY;
    if let Some(ms) = heartbeat_ms {
        raft_config.heartbeat_ms = ms;
        raft_config.election_timeout_ms = (ms * 5, ms * 10);
    }
    Ok(Arc::new(raft_config.openraft_config()?))
}

impl Client {
    /// Server `id`'s wall clock now (ms since the epoch).
    pub fn wall_ms(&self, id: u64) -> u64 {
        let offset = lock(&self.clocks).get(&id).copied().unwrap_or(0);
        (START_WALL_MS + executor::now_ms()).saturating_add_signed(offset)
    }

    /// The leader as the servers up believe it (the belief of the highest term).
    pub fn leader(&self) -> Option<u64> {
        let mut best: Option<(u64, u64)> = None;
        for id in self.net.up_ids() {
            let Some(raft) = self.net.raft(id) else {
                continue;
            };
            let metrics = raft.metrics();
            let m = metrics.borrow_watched();
            if let Some(leader) = m.current_leader {
                if best.is_none_or(|(term, _)| m.current_term > term) {
                    best = Some((m.current_term, leader));
                }
            }
        }
        best.map(|(_, leader)| leader)
    }

    /// What the run observes.
    pub fn observations(&self) -> Observations {
        self.obs.clone()
    }

    /// A linearizable read's barrier as convoy serves it (convoy-raft's `read_index`): the leader
    /// confirms its leadership with a quorum (openraft's `ensure_linearizable`, `ReadIndex`) and
    /// answers the index a read must wait for, following redirects as [`Client::write`] does.
    pub async fn read_index(&self, timeout: Duration) -> Result<u64, String> {
        let mut target = *lock(&self.leader_hint);
        let mut last_error = String::from("no server up");
        for _ in 0..3 {
            let Some(raft) = self.net.raft(target) else {
                target = self.leader().unwrap_or(target % self.n + 1);
                continue;
            };
            let asked = <super::runtime::SimRuntime as openraft::AsyncRuntime>::timeout(
                timeout,
                raft.ensure_linearizable(ReadPolicy::ReadIndex),
            )
            .await;
            match asked {
                Ok(Ok(read)) => return Ok(read.log_id().index),
                Ok(Err(RaftError::APIError(LinearizableReadError::ForwardToLeader(f)))) => {
                    last_error = format!("s{target} is not the leader");
                    target = f.leader_id.unwrap_or(target % self.n + 1);
                    executor::sleep(Duration::from_millis(100)).await;
                }
                Ok(Err(e)) => return Err(format!("s{target}: {e}")),
                Err(_) => return Err(format!("s{target}: no read index in {timeout:?}")),
            }
        }
        Err(last_error)
    }

    /// Proposes `command` as a client would: to the last known leader, following redirects, each
    /// try under `timeout`. The leader stamps it with its own wall clock.
    pub async fn write(&self, command: &Command, timeout: Duration) -> Written {
        let bytes = match codec::encode(command) {
            Ok(bytes) => bytes,
            Err(e) => return Written::Unknown(format!("encode: {e}")),
        };
        let mut target = *lock(&self.leader_hint);
        let mut last_error = String::from("no server up");
        for _ in 0..3 {
            let Some(raft) = self.net.raft(target) else {
                target = self.leader().unwrap_or(target % self.n + 1);
                continue;
            };
            let proposal = Proposal {
                at_ms: self.wall_ms(target),
                command: bytes.clone(),
            };
            let digest = fnv(&proposal.command) ^ proposal.at_ms.rotate_left(17);
            let sent = <super::runtime::SimRuntime as openraft::AsyncRuntime>::timeout(
                timeout,
                raft.client_write(proposal),
            )
            .await;
            match sent {
                Ok(Ok(resp)) => {
                    *lock(&self.leader_hint) = target;
                    let leader_id = resp.log_id.committed_leader_id();
                    let key = EntryKey {
                        term: leader_id.term,
                        leader: leader_id.node_id,
                        digest,
                    };
                    let index = resp.log_id.index;
                    self.obs
                        .trace(format!("s{target} acknowledged a write at {index}"));
                    self.obs.acked(index, key);
                    let response =
                        match codec::decode::<Result<Response, DomainError>>(&resp.data.0) {
                            Ok(r) => r,
                            Err(e) => {
                                return Written::Unknown(format!("reply does not decode: {e}"))
                            }
                        };
                    return Written::Done { index, response };
                }
                Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f)))) => {
                    last_error = format!("s{target} is not the leader");
                    target = f.leader_id.unwrap_or(target % self.n + 1);
                    // A follower that knows no leader yet: give the election time.
                    executor::sleep(Duration::from_millis(100)).await;
                }
                Ok(Err(e)) => return Written::Unknown(format!("s{target}: {e}")),
                Err(_) => return Written::Unknown(format!("s{target}: no answer in {timeout:?}")),
            }
        }
        Written::Unknown(last_error)
    }
}
