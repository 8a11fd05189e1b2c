//! openraft's log storage over a simulated [`Disk`]: appends are acknowledged after a seeded disk
//! latency, once synced (or at once under the fsync mutation), and each established leader is
//! reported to the observations for the election-safety checker.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io;
use std::ops::RangeBounds;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use openraft::storage::{IOFlushed, LogState, RaftLogReader, RaftLogStorage};
use openraft::type_config::alias::{EntryOf, LogIdOf, VoteOf};
use openraft::OptionalSend;

use super::disk::{Disk, FsyncModel};
use super::executor;
use super::observe::{EntryKey, Observations};
use super::runtime::SimConfig;

/// Under the fsync mutation, how long the disk's cache holds a write before it reaches the platter.
const WRITE_BACK_NS: u64 = 1_000_000_000;

/// One server's disk, shared by its log store handles and the harness (crashes, checkers).
pub type SharedDisk = Arc<Mutex<Disk>>;

/// Locks a mutex, ignoring poisoning (a panic ends the whole run anyway).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The log store of one incarnation of one server.
#[derive(Clone)]
pub struct SimLog {
    id: u64,
    disk: SharedDisk,
    incarnation: u64,
    /// How long a sync takes, drawn per append by the harness (slow disks are a fault).
    latency: Arc<Mutex<DiskLatency>>,
    observations: Observations,
}

/// The latency of the next syncs of one server's disk.
#[derive(Clone, Copy, Debug)]
pub struct DiskLatency {
    /// How long one sync takes.
    pub sync: Duration,
    /// When the last sync queued ends (virtual ns): syncs complete in the order they were asked.
    pub busy_until_ns: u64,
    /// The disk is full: appends and votes fail, as RocksDB's writes do (the full-disk fault).
    pub full: bool,
}

impl DiskLatency {
    /// A disk whose syncs take `sync`.
    pub fn new(sync: Duration) -> Self {
        DiskLatency {
            sync,
            busy_until_ns: 0,
            full: false,
        }
    }

    /// Queues one sync: when it ends.
    fn queue(&mut self) -> u64 {
        let end = executor::now_ns()
            .saturating_add(executor::duration_ns(self.sync))
            .max(self.busy_until_ns);
        self.busy_until_ns = end;
        end
    }
}

impl SimLog {
    /// The store of server `id` over `disk`, for its current incarnation.
    pub fn new(
        id: u64,
        disk: SharedDisk,
        latency: Arc<Mutex<DiskLatency>>,
        observations: Observations,
    ) -> Self {
        let incarnation = lock(&disk).incarnation;
        SimLog {
            id,
            disk,
            incarnation,
            latency,
            observations,
        }
    }

    /// Refuses a write while the disk is full.
    fn space(&self) -> io::Result<()> {
        if lock(&self.latency).full {
            return Err(io::Error::other(format!(
                "server {}: no space left on device",
                self.id
            )));
        }
        Ok(())
    }

    fn disk(&self) -> io::Result<MutexGuard<'_, Disk>> {
        let disk = lock(&self.disk);
        if disk.incarnation != self.incarnation {
            return Err(io::Error::other(format!(
                "server {} crashed: incarnation {} is gone",
                self.id, self.incarnation
            )));
        }
        Ok(disk)
    }
}

impl Debug for SimLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimLog")
            .field("id", &self.id)
            .field("incarnation", &self.incarnation)
            .finish()
    }
}

impl RaftLogReader<SimConfig> for SimLog {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<EntryOf<SimConfig>>, io::Error> {
        let (start, end) = convoy_raft::log_store::index_range(&range);
        Ok(self.disk()?.entries(start, end))
    }

    async fn read_vote(&mut self) -> Result<Option<VoteOf<SimConfig>>, io::Error> {
        Ok(self.disk()?.vote())
    }
}

impl RaftLogStorage<SimConfig> for SimLog {
    type LogReader = Self;

    async fn get_log_state(&mut self) -> Result<LogState<SimConfig>, io::Error> {
        let disk = self.disk()?;
        Ok(LogState {
            last_purged_log_id: disk.purged(),
            last_log_id: disk.last_log_id(),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &VoteOf<SimConfig>) -> Result<(), io::Error> {
        self.space()?;
        let (term, leader) = (vote.leader_id.term, vote.leader_id.node_id);
        let elected = {
            let mut disk = self.disk()?;
            disk.save_vote(vote);
            (vote.committed && leader == self.id).then(|| {
                let log: BTreeMap<u64, EntryKey> = disk
                    .log()
                    .iter()
                    .map(|(i, e)| (*i, EntryKey::of(e)))
                    .collect();
                (log, disk.purged().map_or(0, |p| p.index))
            })
        };
        if vote.committed {
            self.observations.leader(term, leader, self.id);
        }
        if let Some((log, purged)) = elected {
            self.observations.elected_with(leader, term, &log, purged);
        }
        Ok(())
    }

    async fn save_committed(
        &mut self,
        committed: Option<LogIdOf<SimConfig>>,
    ) -> Result<(), io::Error> {
        self.disk()?.save_committed(committed);
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogIdOf<SimConfig>>, io::Error> {
        Ok(self.disk()?.committed())
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: IOFlushed<SimConfig>,
    ) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = EntryOf<SimConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        self.space()?;
        let (model, written) = {
            let mut disk = self.disk()?;
            let written = disk.append(entries);
            (disk.model, written)
        };
        for (index, key, chain) in &written {
            self.observations.logged(self.id, *index, key, *chain);
        }
        let mut callback = Some(callback);
        let done_at = if model == FsyncModel::AckBeforeSync {
            // A lying disk: acknowledged now, written back from its cache a second later.
            if let Some(callback) = callback.take() {
                callback.io_completed(Ok(()));
            }
            executor::now_ns() + WRITE_BACK_NS
        } else {
            lock(&self.latency).queue()
        };
        let (disk, incarnation) = (self.disk.clone(), self.incarnation);
        executor::spawn(async move {
            executor::Sleep::until(done_at).await;
            let synced = {
                let mut disk = lock(&disk);
                let alive = disk.incarnation == incarnation;
                if alive {
                    disk.sync();
                }
                alive
            };
            if let Some(callback) = callback.filter(|_| synced) {
                callback.io_completed(Ok(()));
            }
        });
        Ok(())
    }

    async fn truncate_after(
        &mut self,
        last_log_id: Option<LogIdOf<SimConfig>>,
    ) -> Result<(), io::Error> {
        self.disk()?.truncate_after(last_log_id.map(|id| id.index));
        Ok(())
    }

    async fn purge(&mut self, log_id: LogIdOf<SimConfig>) -> Result<(), io::Error> {
        let leader = log_id.committed_leader_id();
        let chain = self
            .observations
            .chain_of(log_id.index, leader.term, leader.node_id);
        self.disk()?.purge(log_id, chain);
        self.observations.trace(format!(
            "s{} purged its log up to {}",
            self.id, log_id.index
        ));
        Ok(())
    }
}
