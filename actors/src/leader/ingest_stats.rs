//! Process-wide statistics of report ingestion on the leader, for monitoring: heartbeats coalesced
//! away, changes queued and proposed, and how many node changes wait in the consumers' queues now.
//! (Not the domain's `counters.rs`, which is a deployment's replicated bookkeeping.)

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

static HEARTBEATS: AtomicU64 = AtomicU64::new(0);
static CHANGES: AtomicU64 = AtomicU64::new(0);
static BATCHES: AtomicU64 = AtomicU64::new(0);
static QUEUED: AtomicI64 = AtomicI64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);
static LIVENESS: AtomicU64 = AtomicU64::new(0);

/// What the statistics say now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngestStats {
    /// Reports that changed nothing (heartbeats): never proposed.
    pub heartbeats: u64,
    /// Reports whose change was queued for the log.
    pub changes: u64,
    /// `ReportNodes` batches proposed.
    pub batches: u64,
    /// Node changes waiting in the consumer actors' queues.
    pub queued: u64,
    /// Reports the consumer actors refused as out of bounds (`check_report`), each alone.
    pub refused: u64,
    /// Entries of this leader's liveness table now (nodes of a consumer heard from recently).
    pub liveness: u64,
}

/// The statistics now.
pub fn snapshot() -> IngestStats {
    IngestStats {
        heartbeats: HEARTBEATS.load(Ordering::Relaxed),
        changes: CHANGES.load(Ordering::Relaxed),
        batches: BATCHES.load(Ordering::Relaxed),
        queued: QUEUED.load(Ordering::Relaxed).max(0) as u64,
        refused: REFUSED.load(Ordering::Relaxed),
        liveness: LIVENESS.load(Ordering::Relaxed),
    }
}

pub(crate) fn heartbeat() {
    HEARTBEATS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn change() {
    CHANGES.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn batch() {
    BATCHES.fetch_add(1, Ordering::Relaxed);
}

/// The queues grew (positive) or shrank (negative) by `delta` node changes.
pub(crate) fn queued(delta: i64) {
    QUEUED.fetch_add(delta, Ordering::Relaxed);
}

/// One report refused as out of bounds (by a consumer actor, or by the API where it arrived).
pub fn refused() {
    REFUSED.fetch_add(1, Ordering::Relaxed);
}

/// The liveness table holds `entries` now.
pub(crate) fn liveness(entries: usize) {
    LIVENESS.store(entries as u64, Ordering::Relaxed);
}
