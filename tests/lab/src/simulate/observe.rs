//! What a run observes, shared by the stores, the network and the harness: the trace (one line
//! per event, hashed as it grows), the leaders established per term, the entry applied at each
//! index, the writes acknowledged, the client history the linearizability checker reads, and the
//! violations the checkers found as they happened.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

use openraft::type_config::alias::EntryOf;
use openraft::EntryPayload;
use sha2::{Digest, Sha256};

use super::executor;
use super::history::{History, ResourceOp};
use super::linearize::DEFAULT_BUDGET;
use super::log_store::lock;
use super::runtime::SimConfig;
use crate::chaos::check::Violation;

/// Trace lines kept for printing when a run fails (all of them with `keep_all`).
const TAIL_LINES: usize = 400;

/// A log entry reduced to what the checkers compare: its term, leader and a digest of its payload.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EntryKey {
    /// The term of the leader that wrote it.
    pub term: u64,
    /// That leader's id.
    pub leader: u64,
    /// FNV-1a of the payload.
    pub digest: u64,
}

impl EntryKey {
    /// The key of `entry`.
    pub fn of(entry: &EntryOf<SimConfig>) -> Self {
        let leader_id = entry.log_id.committed_leader_id();
        let digest = match &entry.payload {
            EntryPayload::Blank => fnv(b"blank"),
            EntryPayload::Normal(p) => fnv(&p.command) ^ p.at_ms.rotate_left(17),
            EntryPayload::Membership(m) => fnv(format!("{m:?}").as_bytes()),
        };
        EntryKey {
            term: leader_id.term,
            leader: leader_id.node_id,
            digest,
        }
    }
}

/// FNV-1a, 64 bits.
pub fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[derive(Default)]
struct Inner {
    hasher: Sha256,
    lines: u64,
    tail: VecDeque<String>,
    keep_all: bool,
    all: Vec<String>,
    leaders: BTreeMap<u64, BTreeSet<u64>>,
    applied: BTreeMap<u64, EntryKey>,
    applied_by: BTreeMap<u64, u64>,
    acked: Vec<(u64, EntryKey)>,
    violations: Vec<Violation>,
    /// (index, term, leader) → (prefix hash, first server that logged it).
    logged: BTreeMap<(u64, u64, u64), (u64, u64)>,
    /// The clients' operations on resources (linearizability).
    history: History,
    /// Person commands and faults drawn so far (numbered from 0 in that order).
    drawn: (u64, u64),
}

/// The observations of one run, cheap to clone.
#[derive(Clone, Default)]
pub struct Observations(Arc<Mutex<Inner>>);

impl Observations {
    /// Empty observations; `keep_all` keeps every trace line, not only the last ones.
    pub fn new(keep_all: bool) -> Self {
        let obs = Observations::default();
        lock(&obs.0).keep_all = keep_all;
        obs
    }

    /// Appends one line to the trace, stamped with the virtual time.
    pub fn trace(&self, line: impl AsRef<str>) {
        let line = format!("{:>9} {}", executor::now_ms(), line.as_ref());
        let mut inner = lock(&self.0);
        inner.hasher.update(line.as_bytes());
        inner.hasher.update(b"\n");
        inner.lines += 1;
        if inner.keep_all {
            inner.all.push(line.clone());
        }
        if inner.tail.len() == TAIL_LINES {
            inner.tail.pop_front();
        }
        inner.tail.push_back(line);
    }

    /// The trace's hash so far (hex SHA-256 of its lines) and its length.
    pub fn trace_hash(&self) -> (String, u64) {
        let inner = lock(&self.0);
        let hash = inner.hasher.clone().finalize();
        (hex(&hash), inner.lines)
    }

    /// The trace lines kept: all of them with `keep_all`, else the last ones.
    pub fn trace_lines(&self) -> Vec<String> {
        let inner = lock(&self.0);
        if inner.keep_all {
            inner.all.clone()
        } else {
            inner.tail.iter().cloned().collect()
        }
    }

    /// Records a broken rule (and traces it).
    pub fn violate(&self, rule: &'static str, detail: String) {
        self.trace(format!("VIOLATION {rule}: {detail}"));
        lock(&self.0).violations.push(Violation { rule, detail });
    }

    /// The violations found so far.
    pub fn violations(&self) -> Vec<Violation> {
        lock(&self.0).violations.clone()
    }

    /// `reporter` saved a committed vote: `leader` leads `term`. convoy's openraft identifies a
    /// leader by (term, node) (`leader_id_adv`, openraft's default), which allows several leaders in
    /// one term, each granted by a quorum in turn: election safety is then one grant per leader id,
    /// which the votes' order guarantees, so leaders are traced here, not judged; log matching and
    /// leader completeness key entries by the whole leader id.
    pub fn leader(&self, term: u64, leader: u64, reporter: u64) {
        let fresh = lock(&self.0)
            .leaders
            .entry(term)
            .or_default()
            .insert(leader);
        if fresh {
            self.trace(format!("s{reporter} sees leader s{leader} of term {term}"));
        }
    }

    /// Server `server` applied `key` at `index`. State machine safety: one entry per index.
    pub fn applied(&self, server: u64, index: u64, key: &EntryKey) {
        let first = {
            let mut inner = lock(&self.0);
            match inner.applied.get(&index) {
                Some(first) => Some((first.clone(), inner.applied_by[&index])),
                None => {
                    inner.applied.insert(index, key.clone());
                    inner.applied_by.insert(index, server);
                    None
                }
            }
        };
        if let Some((first, by)) = first {
            if first != *key {
                self.violate(
                    "state-machine-safety",
                    format!("s{server} applied {key:?} at {index}, s{by} applied {first:?}"),
                );
            }
        }
    }

    /// Log matching: `server` wrote `key` at `index` after a log whose prefix hash is `chain`. Two
    /// logs holding an entry of the same index and term must be identical up to it.
    pub fn logged(&self, server: u64, index: u64, key: &EntryKey, chain: u64) {
        let clash = {
            let mut inner = lock(&self.0);
            match inner.logged.get(&(index, key.term, key.leader)) {
                Some(&(first, by)) if first != chain => Some(by),
                Some(_) => None,
                None => {
                    inner
                        .logged
                        .insert((index, key.term, key.leader), (chain, server));
                    None
                }
            }
        };
        if let Some(by) = clash {
            self.violate(
                "log-matching",
                format!(
                    "s{server} and s{by} hold an entry of term {} at {index} after different logs",
                    key.term
                ),
            );
        }
    }

    /// The hash of the log up to the entry of `term` and `leader` at `index`, as first logged.
    pub fn chain_of(&self, index: u64, term: u64, leader: u64) -> Option<u64> {
        lock(&self.0)
            .logged
            .get(&(index, term, leader))
            .map(|(chain, _)| *chain)
    }

    /// Leader completeness: `leader`, just elected for `term`, holds `log` (index → entry); every
    /// entry applied anywhere (so committed) must be in it.
    pub fn elected_with(&self, leader: u64, term: u64, log: &BTreeMap<u64, EntryKey>, purged: u64) {
        let missing: Vec<u64> = {
            let inner = lock(&self.0);
            inner
                .applied
                .iter()
                .filter(|(i, k)| **i > purged && log.get(i) != Some(*k))
                .map(|(i, _)| *i)
                .take(5)
                .collect()
        };
        if !missing.is_empty() {
            self.violate(
                "leader-completeness",
                format!("s{leader} leads term {term} without committed entries at {missing:?}"),
            );
        }
    }

    /// The entry first applied at `index`, if any.
    pub fn applied_at(&self, index: u64) -> Option<EntryKey> {
        lock(&self.0).applied.get(&index).cloned()
    }

    /// The highest index any server applied.
    pub fn max_applied(&self) -> u64 {
        lock(&self.0)
            .applied
            .keys()
            .next_back()
            .copied()
            .unwrap_or(0)
    }

    /// A client's write was acknowledged as committed at `index`.
    pub fn acked(&self, index: u64, key: EntryKey) {
        lock(&self.0).acked.push((index, key));
    }

    /// The acknowledged writes: (index, entry).
    pub fn acked_writes(&self) -> Vec<(u64, EntryKey)> {
        lock(&self.0).acked.clone()
    }

    /// A client invokes `op` on `resource` now; returns the operation's id.
    pub fn op_called(&self, resource: &str, op: ResourceOp) -> usize {
        let now = executor::now_ms();
        lock(&self.0).history.call(resource, op, now)
    }

    /// Operation `id` answered now with `op` (its outcome).
    pub fn op_returned(&self, id: usize, op: ResourceOp) {
        let now = executor::now_ms();
        lock(&self.0).history.returned(id, op, now);
    }

    /// Operation `id` (a read) got no answer: it had no effect and is forgotten.
    pub fn op_discarded(&self, id: usize) {
        lock(&self.0).history.discard(id);
    }

    /// Numbers the next person command drawn.
    pub fn next_op(&self) -> u64 {
        let mut inner = lock(&self.0);
        inner.drawn.0 += 1;
        inner.drawn.0 - 1
    }

    /// Numbers the next fault drawn.
    pub fn next_fault(&self) -> u64 {
        let mut inner = lock(&self.0);
        inner.drawn.1 += 1;
        inner.drawn.1 - 1
    }

    /// Person commands and faults drawn so far (kept even when the run panics).
    pub fn drawn(&self) -> (u64, u64) {
        lock(&self.0).drawn
    }

    /// How many clients' reads were answered.
    pub fn reads_answered(&self) -> u64 {
        lock(&self.0).history.answered_reads()
    }

    /// Checks the history so far for linearizability; each violation fails the run (with the
    /// operations involved, in the trace).
    pub fn check_linearizable(&self) {
        let (found, ops) = {
            let inner = lock(&self.0);
            (inner.history.check(DEFAULT_BUDGET), inner.history.len())
        };
        self.trace(format!(
            "linearizability: {ops} operations checked, {} violations",
            found.len()
        ));
        for v in found {
            self.violate(v.rule, v.detail);
        }
    }

    /// The leaders per term.
    pub fn leaders(&self) -> BTreeMap<u64, BTreeSet<u64>> {
        lock(&self.0).leaders.clone()
    }
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
