//! The seeded faults and their undoing: crashes (one server, or the whole cluster's power) with
//! restarts, symmetric and one-way partitions, the leader isolated, message loss, duplication and
//! long delays (reordering), slow disks, clock jumps, agents that stall, and membership changes (a
//! voter removed, then added back as a learner and promoted, through the calls convoy makes), and
//! a full disk on one server (its writes fail until space returns and it is restarted).
//! Each fault is drawn whole from the fault stream (a [`Fault`], numbered), then injected unless
//! the run's [`Schedule`] drops it; each is undone after a drawn time; at the end of a run
//! [`Faults::heal`] undoes them all.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;

use super::cluster::Cluster;
use super::executor;
use super::membership;
use super::observe::Observations;
use super::run::Shared;
use super::schedule::Schedule;

/// The network's delays when nothing is wrong, in microseconds.
pub const NORMAL_DELAY_US: (u64, u64) = (100, 2_000);
/// A disk's sync time when nothing is wrong.
pub const NORMAL_SYNC: Duration = Duration::from_micros(500);
/// How long the end of a run tries to add a removed server back.
const READD_FOR: Duration = Duration::from_secs(60);

/// How a fault is undone.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Undo {
    Restart(u64),
    Uncut(Vec<(u64, u64)>),
    NetNormal,
    DiskNormal(u64),
    AddBack(u64),
    DiskFreed(u64),
    Snapshot,
}

/// One fault, drawn whole before it is injected (or dropped by the schedule).
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// Server `id` crashes; it restarts after `down`.
    Crash { id: u64, down: Duration },
    /// Every server up loses power; they restart after `down`.
    PowerLoss { ids: Vec<u64>, down: Duration },
    /// Server `id` is cut from every other, both ways.
    Isolate { id: u64, span: Duration },
    /// Messages from `from` to `to` are lost.
    CutOneWay { from: u64, to: u64, span: Duration },
    /// Every message is lost or duplicated with these odds.
    Lossy {
        loss: f64,
        duplicate: f64,
        span: Duration,
    },
    /// Messages take up to `max_us`.
    Delays { max_us: u64, span: Duration },
    /// Server `id`'s syncs take `sync`.
    SlowDisk {
        id: u64,
        sync: Duration,
        span: Duration,
    },
    /// Server `id`'s wall clock moves by `jump_ms`.
    ClockJump { id: u64, jump_ms: i64 },
    /// An agent stalls, or the stalled ones resume (`roll` picks which).
    Agent { roll: u64 },
    /// Voter `id` is removed from the membership, and added back after `span`.
    RemoveVoter { id: u64, span: Duration },
    /// Server `id` builds a snapshot and purges its log behind it.
    Snapshot { id: u64 },
    /// Follower `id` is down for `span`; 3/4 in, the leader builds a snapshot and purges its log,
    /// so the follower, lagging, gets the snapshot installed when it is back.
    LaggingFollower { id: u64, span: Duration },
    /// Server `id`'s disk is full for `span`: its writes fail (openraft stops on the storage
    /// error, as the real server does); when space returns, it is restarted.
    FullDisk { id: u64, span: Duration },
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Crash { id, down } => write!(f, "crash s{id} for {down:?}"),
            Fault::PowerLoss { ids, down } => write!(f, "power loss of {ids:?} for {down:?}"),
            Fault::Isolate { id, span } => write!(f, "s{id} isolated for {span:?}"),
            Fault::CutOneWay { from, to, span } => {
                write!(f, "link s{from} -> s{to} cut one way for {span:?}")
            }
            Fault::Lossy {
                loss,
                duplicate,
                span,
            } => write!(f, "loss {loss:.2}, duplication {duplicate:.2} for {span:?}"),
            Fault::Delays { max_us, span } => {
                write!(f, "delays up to {}ms for {span:?}", max_us / 1000)
            }
            Fault::SlowDisk { id, sync, span } => {
                write!(f, "s{id} disk syncs take {sync:?} for {span:?}")
            }
            Fault::ClockJump { id, jump_ms } => write!(f, "s{id} clock jumps {jump_ms} ms"),
            Fault::Agent { .. } => write!(f, "an agent stalls or the stalled resume"),
            Fault::RemoveVoter { id, span } => {
                write!(f, "voter s{id} removed, added back after {span:?}")
            }
            Fault::FullDisk { id, span } => write!(f, "s{id} disk full for {span:?}"),
            Fault::Snapshot { id } => write!(f, "s{id} builds a snapshot and purges its log"),
            Fault::LaggingFollower { id, span } => write!(
                f,
                "s{id} down for {span:?}, the leader snapshots and purges its log meanwhile"
            ),
        }
    }
}

/// The fault schedule of one run.
pub struct Faults {
    rng: StdRng,
    enabled: bool,
    keep: Schedule,
    next_at_ms: u64,
    /// Undo actions by (time, sequence).
    undo: BTreeMap<(u64, u64), Undo>,
    seq: u64,
    /// The voter removed and not yet back (one membership change at a time).
    removed: Option<u64>,
}

impl Faults {
    /// A schedule drawn from `rng`; none at all unless `enabled`; only those `keep` keeps are
    /// injected.
    pub fn new(rng: StdRng, enabled: bool, keep: Schedule) -> Self {
        Faults {
            rng,
            enabled,
            keep,
            next_at_ms: 2_000,
            undo: BTreeMap::new(),
            seq: 0,
            removed: None,
        }
    }

    fn later(&mut self, after: Duration, undo: Undo) {
        self.seq += 1;
        let at = executor::now_ms() + after.as_millis() as u64;
        self.undo.insert((at, self.seq), undo);
    }

    async fn apply(
        &mut self,
        cluster: &mut Cluster,
        undo: Undo,
        obs: &Observations,
    ) -> anyhow::Result<()> {
        match undo {
            Undo::Restart(id) => {
                if !cluster.is_up(id) {
                    cluster.start(id).await?;
                }
            }
            Undo::Uncut(links) => {
                obs.trace(format!("links {links:?} restored"));
                cluster.net.set_faults(|f| {
                    for link in &links {
                        f.cut.remove(link);
                    }
                });
            }
            Undo::NetNormal => {
                obs.trace("network back to normal");
                cluster.net.set_faults(|f| {
                    f.loss = 0.0;
                    f.duplicate = 0.0;
                    f.delay_us = NORMAL_DELAY_US;
                });
            }
            Undo::DiskNormal(id) => {
                obs.trace(format!("s{id} disk back to normal"));
                cluster.set_disk_latency(id, NORMAL_SYNC);
            }
            Undo::Snapshot => {
                let leader = cluster.leader().filter(|l| cluster.is_up(*l));
                match leader {
                    Some(l) if cluster.snapshot(l).await => {
                        obs.trace(format!("leader s{l} asked for a snapshot"));
                    }
                    _ => obs.trace("no leader up to snapshot"),
                }
            }
            Undo::DiskFreed(id) => {
                // The server stopped on its storage error (or would at its next write): an
                // operator frees space and restarts it.
                obs.trace(format!("s{id} disk has space again: restarted"));
                cluster.set_disk_full(id, false);
                cluster.crash(id);
                cluster.start(id).await?;
            }
            Undo::AddBack(id) => {
                // Tried once here; if it fails (no leader now), the next step tries again.
                match membership::add_back(cluster, id).await {
                    Ok(()) => {
                        obs.trace(format!("s{id} is a voter again"));
                        self.removed = None;
                    }
                    Err(e) => {
                        obs.trace(format!("adding s{id} back failed: {e}"));
                        self.later(Duration::from_secs(1), Undo::AddBack(id));
                    }
                }
            }
        }
        Ok(())
    }

    /// Draws the next fault from the stream (the draws do not depend on whether it is kept).
    fn draw(&mut self, cluster: &Cluster) -> Fault {
        let ids = cluster.ids();
        let up: Vec<u64> = ids
            .iter()
            .copied()
            .filter(|id| cluster.is_up(*id))
            .collect();
        let pick = |rng: &mut StdRng, from: &[u64]| from.choose(rng).copied();
        let span = Duration::from_millis(self.rng.gen_range(1_000..15_000));
        let first = ids.first().copied().unwrap_or(1);
        match self.rng.gen_range(0..14) {
            0 | 1 => Fault::Crash {
                id: pick(&mut self.rng, &up).unwrap_or(first),
                down: Duration::from_millis(self.rng.gen_range(200..10_000)),
            },
            2 => Fault::PowerLoss {
                ids: up,
                down: Duration::from_millis(self.rng.gen_range(200..5_000)),
            },
            3 | 4 => {
                let leader = self.rng.gen_bool(0.5);
                let any = pick(&mut self.rng, &ids).unwrap_or(first);
                let id = if leader {
                    cluster.leader().unwrap_or(any)
                } else {
                    any
                };
                Fault::Isolate { id, span }
            }
            5 => Fault::CutOneWay {
                from: pick(&mut self.rng, &ids).unwrap_or(first),
                to: pick(&mut self.rng, &ids).unwrap_or(first),
                span,
            },
            6 => Fault::Lossy {
                loss: self.rng.gen_range(0.01..0.3),
                duplicate: self.rng.gen_range(0.0..0.2),
                span,
            },
            7 => Fault::Delays {
                max_us: self.rng.gen_range(20_000..600_000),
                span,
            },
            8 => Fault::SlowDisk {
                id: pick(&mut self.rng, &ids).unwrap_or(first),
                sync: Duration::from_millis(self.rng.gen_range(20..800)),
                span,
            },
            9 => Fault::ClockJump {
                id: pick(&mut self.rng, &ids).unwrap_or(first),
                jump_ms: self.rng.gen_range(-120_000..120_000),
            },
            10 => Fault::RemoveVoter {
                id: pick(&mut self.rng, &ids).unwrap_or(first),
                span,
            },
            11 => Fault::FullDisk {
                id: pick(&mut self.rng, &ids).unwrap_or(first),
                span,
            },
            12 => {
                let lagging = self.rng.gen_bool(0.5);
                let any = pick(&mut self.rng, &ids).unwrap_or(first);
                let leader = cluster.leader();
                let follower = ids
                    .iter()
                    .copied()
                    .filter(|id| Some(*id) != leader)
                    .nth(any as usize % ids.len().saturating_sub(1).max(1));
                match (lagging, follower) {
                    // Long enough that more than the 20 entries kept behind a snapshot go by.
                    (true, Some(id)) => Fault::LaggingFollower {
                        id,
                        span: span + Duration::from_secs(12),
                    },
                    _ => Fault::Snapshot { id: any },
                }
            }
            _ => Fault::Agent {
                roll: self.rng.gen(),
            },
        }
    }

    /// Injects `fault`.
    async fn inject(
        &mut self,
        fault: Fault,
        cluster: &mut Cluster,
        shared: &Rc<RefCell<Shared>>,
        obs: &Observations,
    ) {
        let ids = cluster.ids();
        match fault {
            Fault::Crash { id, down } => {
                if cluster.is_up(id) {
                    cluster.crash(id);
                    self.later(down, Undo::Restart(id));
                }
            }
            Fault::PowerLoss { ids, down } => {
                for id in &ids {
                    cluster.crash(*id);
                }
                for id in ids {
                    self.later(down, Undo::Restart(id));
                }
            }
            Fault::Isolate { id, span } => {
                let links: Vec<(u64, u64)> = ids
                    .iter()
                    .filter(|o| **o != id)
                    .flat_map(|o| [(id, *o), (*o, id)])
                    .collect();
                cluster
                    .net
                    .set_faults(|f| f.cut.extend(links.iter().copied()));
                self.later(span, Undo::Uncut(links));
            }
            Fault::CutOneWay { from, to, span } => {
                if from != to {
                    cluster.net.set_faults(|f| {
                        f.cut.insert((from, to));
                    });
                    self.later(span, Undo::Uncut(vec![(from, to)]));
                }
            }
            Fault::Lossy {
                loss,
                duplicate,
                span,
            } => {
                cluster.net.set_faults(|f| {
                    f.loss = loss;
                    f.duplicate = duplicate;
                });
                self.later(span, Undo::NetNormal);
            }
            Fault::Delays { max_us, span } => {
                cluster.net.set_faults(|f| f.delay_us = (100, max_us));
                self.later(span, Undo::NetNormal);
            }
            Fault::SlowDisk { id, sync, span } => {
                cluster.set_disk_latency(id, sync);
                self.later(span, Undo::DiskNormal(id));
            }
            Fault::ClockJump { id, jump_ms } => cluster.jump_clock(id, jump_ms),
            Fault::Agent { roll } => {
                let what = shared.borrow_mut().workload.stall_or_resume(roll);
                obs.trace(format!("  {what}"));
            }
            Fault::Snapshot { id } => {
                if !cluster.snapshot(id).await {
                    obs.trace(format!("  s{id} is down: no snapshot"));
                }
            }
            Fault::LaggingFollower { id, span } => {
                if cluster.is_up(id) {
                    cluster.crash(id);
                    self.later(span * 3 / 4, Undo::Snapshot);
                    self.later(span, Undo::Restart(id));
                }
            }
            Fault::FullDisk { id, span } => {
                cluster.set_disk_full(id, true);
                self.later(span, Undo::DiskFreed(id));
            }
            Fault::RemoveVoter { id, span } => {
                if self.removed.is_some() {
                    obs.trace("  (a voter is already out: nothing removed)");
                    return;
                }
                // A change that failed or timed out may still have been made, in part (demoted
                // but not removed) or later: the server is added back after `span` either way.
                self.removed = Some(id);
                self.later(span, Undo::AddBack(id));
                match membership::remove(cluster, id).await {
                    Ok(()) => obs.trace(format!("  s{id} removed from the membership")),
                    Err(e) => obs.trace(format!("  removing s{id} failed: {e}")),
                }
            }
        }
    }

    /// Undoes what is due, then draws the next fault if its time has come and injects it unless
    /// the schedule drops it.
    pub(super) async fn step(
        &mut self,
        cluster: &mut Cluster,
        shared: &Rc<RefCell<Shared>>,
        obs: &Observations,
    ) -> anyhow::Result<()> {
        let now = executor::now_ms();
        while let Some(entry) = self.undo.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let undo = entry.remove();
            self.apply(cluster, undo, obs).await?;
        }
        if !self.enabled || now < self.next_at_ms {
            return Ok(());
        }
        self.next_at_ms = now + self.rng.gen_range(500..8_000);
        let n = obs.next_fault();
        let fault = self.draw(cluster);
        if !self.keep.keeps_fault(n) {
            obs.trace(format!("fault {n} dropped: {fault}"));
            return Ok(());
        }
        obs.trace(format!("fault {n}: {fault}"));
        self.inject(fault, cluster, shared, obs).await;
        Ok(())
    }

    /// Undoes every fault now: the servers down restart, the network and the disks are normal,
    /// a removed voter is added back.
    pub async fn heal(&mut self, cluster: &mut Cluster, obs: &Observations) -> anyhow::Result<()> {
        let pending: Vec<Undo> = std::mem::take(&mut self.undo).into_values().collect();
        for undo in pending {
            if !matches!(undo, Undo::AddBack(_)) {
                self.apply(cluster, undo, obs).await?;
            }
        }
        cluster.net.set_faults(|f| f.cut.clear());
        for id in cluster.ids() {
            if !cluster.is_up(id) {
                cluster.start(id).await?;
            }
        }
        if let Some(id) = self.removed {
            let deadline = executor::now_ms() + READD_FOR.as_millis() as u64;
            loop {
                // A removal that timed out may still land: a voter twice, a second apart.
                let back = match membership::add_back(cluster, id).await {
                    Ok(()) => {
                        executor::sleep(Duration::from_secs(1)).await;
                        membership::add_back(cluster, id).await
                    }
                    Err(e) => Err(e),
                };
                match back {
                    Ok(()) => {
                        obs.trace(format!("s{id} is a voter again"));
                        self.removed = None;
                        break;
                    }
                    Err(e) if executor::now_ms() >= deadline => {
                        obs.violate(
                            "membership",
                            format!("s{id} removed and not added back within {READD_FOR:?} of healing: {e}"),
                        );
                        break;
                    }
                    Err(_) => executor::sleep(Duration::from_millis(500)).await,
                }
            }
        }
        Ok(())
    }
}
