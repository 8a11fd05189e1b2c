//! The seeded faults and their undoing: crashes (one server, or the whole cluster's power) with
//! restarts, symmetric and one-way partitions, the leader isolated, message loss, duplication and
//! long delays (reordering), slow disks, clock jumps, and agents that stall. Each fault is undone
//! after a drawn time; at the end of a run [`Faults::heal`] undoes them all.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;

use super::cluster::Cluster;
use super::executor;
use super::observe::Observations;
use super::run::Shared;

/// The network's delays when nothing is wrong, in microseconds.
pub const NORMAL_DELAY_US: (u64, u64) = (100, 2_000);
/// A disk's sync time when nothing is wrong.
pub const NORMAL_SYNC: Duration = Duration::from_micros(500);

/// How a fault is undone.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Undo {
    Restart(u64),
    Uncut(Vec<(u64, u64)>),
    NetNormal,
    DiskNormal(u64),
}

/// The fault schedule of one run.
pub struct Faults {
    rng: StdRng,
    enabled: bool,
    next_at_ms: u64,
    /// Undo actions by (time, sequence).
    undo: BTreeMap<(u64, u64), Undo>,
    seq: u64,
    injected: u64,
}

impl Faults {
    /// A schedule drawn from `rng`; none at all unless `enabled`.
    pub fn new(rng: StdRng, enabled: bool) -> Self {
        Faults {
            rng,
            enabled,
            next_at_ms: 2_000,
            undo: BTreeMap::new(),
            seq: 0,
            injected: 0,
        }
    }

    /// Faults injected so far.
    pub fn injected(&self) -> u64 {
        self.injected
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
        }
        Ok(())
    }

    /// Undoes what is due, then injects the next fault if its time has come.
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
        self.injected += 1;
        let ids = cluster.ids();
        let up: Vec<u64> = ids
            .iter()
            .copied()
            .filter(|id| cluster.is_up(*id))
            .collect();
        let pick = |rng: &mut StdRng, from: &[u64]| from.choose(rng).copied();
        let span = Duration::from_millis(self.rng.gen_range(1_000..15_000));
        match self.rng.gen_range(0..11) {
            0 | 1 => {
                if let Some(id) = pick(&mut self.rng, &up) {
                    obs.trace(format!("fault: crash s{id}"));
                    cluster.crash(id);
                    let down = Duration::from_millis(self.rng.gen_range(200..10_000));
                    self.later(down, Undo::Restart(id));
                }
            }
            2 => {
                obs.trace("fault: power loss of every server");
                for id in &up {
                    cluster.crash(*id);
                }
                let down = Duration::from_millis(self.rng.gen_range(200..5_000));
                for id in &up {
                    self.later(down, Undo::Restart(*id));
                }
            }
            3 | 4 => {
                let target = if self.rng.gen_bool(0.5) {
                    cluster.leader()
                } else {
                    pick(&mut self.rng, &ids)
                };
                if let Some(id) = target {
                    let links: Vec<(u64, u64)> = ids
                        .iter()
                        .filter(|o| **o != id)
                        .flat_map(|o| [(id, *o), (*o, id)])
                        .collect();
                    obs.trace(format!("fault: s{id} isolated for {span:?}"));
                    cluster
                        .net
                        .set_faults(|f| f.cut.extend(links.iter().copied()));
                    self.later(span, Undo::Uncut(links));
                }
            }
            5 => {
                let (a, b) = (pick(&mut self.rng, &ids), pick(&mut self.rng, &ids));
                if let (Some(a), Some(b)) = (a, b) {
                    if a != b {
                        obs.trace(format!("fault: link s{a} -> s{b} cut one way for {span:?}"));
                        cluster.net.set_faults(|f| {
                            f.cut.insert((a, b));
                        });
                        self.later(span, Undo::Uncut(vec![(a, b)]));
                    }
                }
            }
            6 => {
                let (loss, dup) = (self.rng.gen_range(0.01..0.3), self.rng.gen_range(0.0..0.2));
                obs.trace(format!(
                    "fault: loss {loss:.2}, duplication {dup:.2} for {span:?}"
                ));
                cluster.net.set_faults(|f| {
                    f.loss = loss;
                    f.duplicate = dup;
                });
                self.later(span, Undo::NetNormal);
            }
            7 => {
                let max_us = self.rng.gen_range(20_000..600_000);
                obs.trace(format!(
                    "fault: delays up to {}ms for {span:?}",
                    max_us / 1000
                ));
                cluster.net.set_faults(|f| f.delay_us = (100, max_us));
                self.later(span, Undo::NetNormal);
            }
            8 => {
                if let Some(id) = pick(&mut self.rng, &ids) {
                    let sync = Duration::from_millis(self.rng.gen_range(20..800));
                    obs.trace(format!(
                        "fault: s{id} disk syncs take {sync:?} for {span:?}"
                    ));
                    cluster.set_disk_latency(id, sync);
                    self.later(span, Undo::DiskNormal(id));
                }
            }
            9 => {
                if let Some(id) = pick(&mut self.rng, &ids) {
                    let jump = self.rng.gen_range(-120_000..120_000);
                    obs.trace(format!("fault: s{id} clock jumps {jump} ms"));
                    cluster.jump_clock(id, jump);
                }
            }
            _ => {
                let what = shared.borrow_mut().workload.stall_or_resume();
                obs.trace(format!("fault: {what}"));
            }
        }
        Ok(())
    }

    /// Undoes every fault now: the servers down restart, the network and the disks are normal.
    pub async fn heal(&mut self, cluster: &mut Cluster, obs: &Observations) -> anyhow::Result<()> {
        let pending: Vec<Undo> = std::mem::take(&mut self.undo).into_values().collect();
        for undo in pending {
            self.apply(cluster, undo, obs).await?;
        }
        cluster.net.set_faults(|f| f.cut.clear());
        for id in cluster.ids() {
            if !cluster.is_up(id) {
                cluster.start(id).await?;
            }
        }
        Ok(())
    }
}
