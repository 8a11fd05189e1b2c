//! One simulated server's disk under the raft log: what was written (the page cache) and what was
//! synced. Like the RocksDB store it models, the vote and a truncation are written synced (and sync
//! everything before them), an append is acknowledged only once a later sync covers it, and the
//! committed index and purges are written unsynced. A crash keeps only what was synced.
//!
//! [`FsyncModel::AckBeforeSync`] is the mutation that proves the checkers can fail: appends are
//! acknowledged and votes returned before any sync, as a disk that lies about fsync would.

use std::collections::BTreeMap;

use openraft::type_config::alias::{EntryOf, LogIdOf, VoteOf};

use super::observe::{fnv, EntryKey};
use super::runtime::SimConfig;

/// How honest the disk is about fsync.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FsyncModel {
    /// Acknowledged writes were synced (the real store).
    #[default]
    Honest,
    /// Mutation: writes are acknowledged before they are synced, so a crash may lose them.
    AckBeforeSync,
}

/// One server's raft log, vote and committed index, as written and as synced.
#[derive(Debug, Default)]
pub struct Disk {
    /// The fsync model.
    pub model: FsyncModel,
    /// Bumped at each crash: writes and syncs of an earlier incarnation are refused.
    pub incarnation: u64,
    vote: Option<VoteOf<SimConfig>>,
    durable_vote: Option<VoteOf<SimConfig>>,
    log: BTreeMap<u64, EntryOf<SimConfig>>,
    /// Entries of `log` up to this index are synced.
    durable_upto: Option<u64>,
    committed: Option<LogIdOf<SimConfig>>,
    durable_committed: Option<LogIdOf<SimConfig>>,
    purged: Option<LogIdOf<SimConfig>>,
    /// Per index, a hash of the log up to it (the log-matching checker compares them).
    chain: BTreeMap<u64, u64>,
    /// The hash of the log up to the last purged entry (what a snapshot stands for).
    purged_chain: Option<u64>,
}

impl Disk {
    /// An empty disk under `model`.
    pub fn new(model: FsyncModel) -> Self {
        Disk {
            model,
            ..Disk::default()
        }
    }

    /// Makes everything written so far durable (one fsync covers every earlier write).
    pub fn sync(&mut self) {
        self.durable_vote = self.vote;
        self.durable_upto = self.log.keys().next_back().copied();
        self.durable_committed = self.committed;
    }

    /// The server lost power: only synced writes survive. Returns how many entries were lost.
    pub fn crash(&mut self) -> usize {
        self.incarnation += 1;
        self.vote = self.durable_vote;
        self.committed = self.durable_committed;
        let keep_from = self.durable_upto.map_or(0, |i| i + 1);
        self.chain.split_off(&keep_from);
        let lost = self.log.split_off(&keep_from);
        lost.len()
    }

    /// Writes the vote: synced, except under [`FsyncModel::AckBeforeSync`].
    pub fn save_vote(&mut self, vote: &VoteOf<SimConfig>) {
        self.vote = Some(*vote);
        if self.model == FsyncModel::Honest {
            self.sync();
        }
    }

    /// The vote as written.
    pub fn vote(&self) -> Option<VoteOf<SimConfig>> {
        self.vote
    }

    /// Writes entries (unsynced); returns each one's index, key and prefix hash.
    pub fn append(
        &mut self,
        entries: impl IntoIterator<Item = EntryOf<SimConfig>>,
    ) -> Vec<(u64, EntryKey, u64)> {
        let mut written = Vec::new();
        for entry in entries {
            let index = entry.log_id.index;
            let key = EntryKey::of(&entry);
            let before = index
                .checked_sub(1)
                .and_then(|i| {
                    let purged_here = self.purged.is_some_and(|p| p.index == i);
                    match purged_here {
                        true => self.purged_chain.or_else(|| self.chain.get(&i).copied()),
                        false => self.chain.get(&i).copied(),
                    }
                })
                .unwrap_or(0);
            let chain = fnv(&[
                before.to_le_bytes(),
                key.term.to_le_bytes(),
                key.leader.to_le_bytes(),
                key.digest.to_le_bytes(),
            ]
            .concat());
            self.chain.split_off(&index);
            self.chain.insert(index, chain);
            self.log.split_off(&index);
            self.log.insert(index, entry);
            written.push((index, key, chain));
        }
        written
    }

    /// Removes the entries after `last` (synced, with everything before it).
    pub fn truncate_after(&mut self, last: Option<u64>) {
        let from = last.map_or(0, |i| i + 1);
        self.log.split_off(&from);
        self.chain.split_off(&from);
        self.sync();
    }

    /// Removes the entries up to `log_id` (unsynced in the real store; losing a purge is harmless,
    /// so it is applied as durable here).
    /// `chain` is the hash of the log up to `log_id` as the cluster logged it (after a snapshot
    /// is installed, this disk's own entries there may be older ones, or none).
    pub fn purge(&mut self, log_id: LogIdOf<SimConfig>, chain: Option<u64>) {
        let keep = self.log.split_off(&(log_id.index + 1));
        self.log = keep;
        self.purged = Some(log_id);
        self.purged_chain = chain.or_else(|| self.chain.get(&log_id.index).copied());
    }

    /// Writes the committed log id (unsynced).
    pub fn save_committed(&mut self, committed: Option<LogIdOf<SimConfig>>) {
        self.committed = committed;
    }

    /// The committed log id as written.
    pub fn committed(&self) -> Option<LogIdOf<SimConfig>> {
        self.committed
    }

    /// The last purged log id.
    pub fn purged(&self) -> Option<LogIdOf<SimConfig>> {
        self.purged
    }

    /// The last entry's log id, else the last purged.
    pub fn last_log_id(&self) -> Option<LogIdOf<SimConfig>> {
        self.log
            .values()
            .next_back()
            .map(|e| e.log_id)
            .or(self.purged)
    }

    /// The entries with index in `start..end`.
    pub fn entries(&self, start: u64, end: Option<u64>) -> Vec<EntryOf<SimConfig>> {
        match end {
            Some(end) if end <= start => Vec::new(),
            Some(end) => self.log.range(start..end).map(|(_, e)| e.clone()).collect(),
            None => self.log.range(start..).map(|(_, e)| e.clone()).collect(),
        }
    }

    /// The whole log as written (for the checkers).
    pub fn log(&self) -> &BTreeMap<u64, EntryOf<SimConfig>> {
        &self.log
    }
}
