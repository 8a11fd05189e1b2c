//! The simulated network between the servers: every raft RPC is a message with a seeded fate
//! (lost, delayed, duplicated), crossing links that a partition may cut one way or both; its answer
//! crosses the reverse link with a fate of its own. Messages overtake each other when their delays
//! differ, so reordering comes free. A crashed server refuses connections at once; a lost message
//! or a cut link is silence until the sender's deadline.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::io::Cursor;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openraft::errors::{RPCError, ReplicationClosed, StreamingError, Timeout, Unreachable};
use openraft::network::{RPCOption, RaftNetworkFactory, RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::type_config::alias::{SnapshotOf, VoteOf};
use openraft::{AnyError, AsyncRuntime, OptionalSend, RPCTypes};
use rand::rngs::StdRng;
use rand::Rng;

use super::executor;
use super::log_store::lock;
use super::runtime::{SimConfig, SimRuntime};
use super::sm_store::SimSm;
use convoy_raft::Member;

/// openraft's handle on one simulated server.
pub type SimRaft = openraft::Raft<SimConfig, SimSm>;

/// The network's faults at one moment; the harness changes them as the run goes.
#[derive(Clone, Debug, Default)]
pub struct NetFaults {
    /// Probability that a message is lost.
    pub loss: f64,
    /// Probability that a request is delivered twice.
    pub duplicate: f64,
    /// One-way delay range in microseconds (inclusive).
    pub delay_us: (u64, u64),
    /// Cut links, `(from, to)`: messages from `from` to `to` are lost.
    pub cut: BTreeSet<(u64, u64)>,
}

/// Counts of what happened to messages.
#[derive(Clone, Copy, Debug, Default)]
pub struct NetStats {
    /// Requests sent.
    pub sent: u64,
    /// Messages lost (by chance or a cut link).
    pub lost: u64,
    /// Requests delivered twice.
    pub duplicated: u64,
    /// Requests refused by a crashed server.
    pub refused: u64,
}

struct Inner {
    rng: StdRng,
    faults: NetFaults,
    up: BTreeMap<u64, SimRaft>,
    stats: NetStats,
    /// The product's guard for snapshots a follower's log overtook is on (off: the mutation).
    overtaken_guard: bool,
}

/// The network, shared by every server's clients and the harness.
#[derive(Clone)]
pub struct SimNet {
    inner: Arc<Mutex<Inner>>,
}

/// What happens to one message.
enum Fate {
    Lost,
    Delivered { delay: Duration, twice: bool },
}

impl SimNet {
    /// Hands every snapshot to openraft as it comes, without the product's guard for a snapshot the
    /// receiver's log overtook (`convoy_raft::network::overtaken`): the mutation that shows the
    /// guard is what keeps openraft's log IO from going back.
    pub fn without_overtaken_guard(&self) {
        lock(&self.inner).overtaken_guard = false;
    }

    /// A network drawing its fates from `rng`, with no fault yet.
    pub fn new(rng: StdRng) -> Self {
        SimNet {
            inner: Arc::new(Mutex::new(Inner {
                rng,
                faults: NetFaults {
                    delay_us: (100, 2_000),
                    ..NetFaults::default()
                },
                up: BTreeMap::new(),
                stats: NetStats::default(),
                overtaken_guard: true,
            })),
        }
    }

    /// Server `id` answers at `raft`.
    pub fn up(&self, id: u64, raft: SimRaft) {
        lock(&self.inner).up.insert(id, raft);
    }

    /// Server `id` is down: connections to it are refused.
    pub fn down(&self, id: u64) -> Option<SimRaft> {
        lock(&self.inner).up.remove(&id)
    }

    /// The handle of server `id` if it is up.
    pub fn raft(&self, id: u64) -> Option<SimRaft> {
        lock(&self.inner).up.get(&id).cloned()
    }

    /// The servers up.
    pub fn up_ids(&self) -> Vec<u64> {
        lock(&self.inner).up.keys().copied().collect()
    }

    /// Changes the faults.
    pub fn set_faults(&self, f: impl FnOnce(&mut NetFaults)) {
        f(&mut lock(&self.inner).faults);
    }

    /// The faults now.
    pub fn faults(&self) -> NetFaults {
        lock(&self.inner).faults.clone()
    }

    /// The message counts so far.
    pub fn stats(&self) -> NetStats {
        lock(&self.inner).stats
    }

    fn fate(&self, from: u64, to: u64, request: bool) -> Fate {
        let mut inner = lock(&self.inner);
        let inner = &mut *inner;
        if request {
            inner.stats.sent += 1;
        }
        let cut = inner.faults.cut.contains(&(from, to));
        let (loss, dup, (lo, hi)) = (
            inner.faults.loss,
            inner.faults.duplicate,
            inner.faults.delay_us,
        );
        let lost = inner.rng.gen_bool(loss.clamp(0.0, 1.0)) || cut;
        let twice = request && inner.rng.gen_bool(dup.clamp(0.0, 1.0));
        let delay = Duration::from_micros(inner.rng.gen_range(lo..=hi.max(lo)));
        if lost {
            inner.stats.lost += 1;
            return Fate::Lost;
        }
        if twice {
            inner.stats.duplicated += 1;
        }
        Fate::Delivered { delay, twice }
    }

    fn arrive(&self, from: u64, to: u64) -> Option<SimRaft> {
        let mut inner = lock(&self.inner);
        if inner.faults.cut.contains(&(from, to)) {
            inner.stats.lost += 1;
            return None;
        }
        let raft = inner.up.get(&to).cloned();
        if raft.is_none() {
            inner.stats.refused += 1;
        }
        raft
    }

    /// Carries one request from `from` to `to` and its answer back, under the deadline `ttl`.
    async fn carry<Req, Resp, Fut>(
        &self,
        from: u64,
        to: u64,
        action: RPCTypes,
        ttl: Duration,
        req: Req,
        call: impl Fn(SimRaft, Req) -> Fut + Send + Sync + 'static,
    ) -> Result<Resp, RPCError<SimConfig>>
    where
        Req: Clone + Send + 'static,
        Resp: Send + 'static,
        Fut: Future<Output = Result<Resp, String>> + Send + 'static,
    {
        let timeout = || {
            RPCError::Timeout(Timeout {
                action,
                id: from,
                target: to,
                timeout: ttl,
            })
        };
        let net = self.clone();
        let trip = async move {
            let (delay, twice) = match net.fate(from, to, true) {
                Fate::Lost => return Err(None),
                Fate::Delivered { delay, twice } => (delay, twice),
            };
            executor::sleep(delay).await;
            let Some(raft) = net.arrive(from, to) else {
                return Err(Some(format!("s{to} is down or cut off from s{from}")));
            };
            if twice {
                let (copy, raft2) = (req.clone(), raft.clone());
                let later = call(raft2, copy);
                let extra = Duration::from_micros(1 + (delay.as_micros() as u64) / 2);
                // The copy sits in the receiver's inbox: it dies with the receiver.
                executor::spawn_owned(to, async move {
                    executor::sleep(extra).await;
                    let _ = later.await;
                });
            }
            let answer = call(raft, req).await.map_err(Some)?;
            match net.fate(to, from, false) {
                Fate::Lost => Err(None),
                Fate::Delivered { delay, .. } => {
                    executor::sleep(delay).await;
                    Ok(answer)
                }
            }
        };
        let guarded = async move {
            match trip.await {
                Ok(answer) => Ok(answer),
                // Silence: the sender waits for its deadline.
                Err(None) => std::future::pending().await,
                Err(Some(reason)) => Err(reason),
            }
        };
        match SimRuntime::timeout(ttl, guarded).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(reason)) => Err(RPCError::Unreachable(Unreachable::new(&AnyError::error(
                reason,
            )))),
            Err(_) => Err(timeout()),
        }
    }
}

/// The factory openraft asks for one client per peer.
pub struct SimNetFactory {
    /// The server the clients send from.
    pub from: u64,
    /// The network.
    pub net: SimNet,
}

impl RaftNetworkFactory<SimConfig> for SimNetFactory {
    type Network = SimPeer;

    async fn new_client(&mut self, target: u64, _node: &Member) -> SimPeer {
        SimPeer {
            from: self.from,
            to: target,
            net: self.net.clone(),
        }
    }
}

/// One server's client of one peer.
pub struct SimPeer {
    from: u64,
    to: u64,
    net: SimNet,
}

impl RaftNetworkV2<SimConfig> for SimPeer {
    type SnapshotData = Cursor<Vec<u8>>;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<SimConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<SimConfig>, RPCError<SimConfig>> {
        self.net
            .carry(
                self.from,
                self.to,
                RPCTypes::AppendEntries,
                option.soft_ttl(),
                rpc,
                |raft, rpc| async move { raft.append_entries(rpc).await.map_err(|e| e.to_string()) },
            )
            .await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<SimConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<SimConfig>, RPCError<SimConfig>> {
        self.net
            .carry(
                self.from,
                self.to,
                RPCTypes::Vote,
                option.soft_ttl(),
                rpc,
                |raft, rpc| async move { raft.vote(rpc).await.map_err(|e| e.to_string()) },
            )
            .await
    }

    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<SimConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<SimConfig>, RPCError<SimConfig>> {
        self.net
            .carry(
                self.from,
                self.to,
                RPCTypes::Vote,
                option.soft_ttl(),
                rpc,
                |raft, rpc| async move { raft.pre_vote(rpc).await.map_err(|e| e.to_string()) },
            )
            .await
    }

    async fn full_snapshot(
        &mut self,
        vote: VoteOf<SimConfig>,
        snapshot: SnapshotOf<SimConfig, Cursor<Vec<u8>>>,
        _cancel: impl Future<Output = ReplicationClosed> + OptionalSend + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<SimConfig>, StreamingError<SimConfig>> {
        let bytes = snapshot.snapshot.into_inner();
        let meta = snapshot.meta;
        let guard = lock(&self.net.inner).overtaken_guard;
        let sent = self
            .net
            .carry(
                self.from,
                self.to,
                RPCTypes::InstallSnapshot,
                option.hard_ttl(),
                (vote, meta, bytes),
                move |raft, (vote, meta, bytes)| async move {
                    // As the product's transport does (`rpc_target.rs`).
                    if guard {
                        convoy_raft::network::overtaken::prepare(&raft, &vote, &meta).await?;
                    }
                    let snapshot = SnapshotOf::<SimConfig, Cursor<Vec<u8>>> {
                        meta,
                        snapshot: Cursor::new(bytes),
                    };
                    raft.install_full_snapshot(vote, snapshot)
                        .await
                        .map_err(|e| e.to_string())
                },
            )
            .await;
        sent.map_err(|e| match e {
            RPCError::Timeout(t) => StreamingError::Timeout(t),
            RPCError::Unreachable(u) => StreamingError::Unreachable(u),
            other => StreamingError::Network(openraft::errors::NetworkError::new(&other)),
        })
    }
}
