//! One consumer's report ingestion on the leader, without actix: it takes its nodes' reports and
//! gives only changes to propose — coalesced per node and batched into one `ReportNodes` at a time,
//! paced by their error bytes. Time is passed in; the actix shell (`consumer_actor.rs`) and
//! convoy-lab's simulation propose what it gives and run its pacing wait. Liveness is not kept here
//! but once per node by the supervisor (a node may belong to several consumers; see `liveness`).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::host::{read_with, Host, ProposeError};
use super::ingest_stats;
use super::messages::ReportRejected;
use super::refusals::{RefusalLog, REFUSAL_LOG_INTERVAL};
use crate::domain::{check_report, NodeReport};

/// The most nodes with a change waiting to be proposed. A report that would add one more is
/// refused with [`ReportRejected::Busy`] (HTTP 503): nothing is lost, because the node sends its
/// whole state again on its next report. A node already waiting just has its change replaced.
pub const REPORT_QUEUE_LIMIT: usize = 10_000;

/// The most bytes of `error` text one consumer's actor puts into the log per second. After a batch
/// carrying `n` bytes of errors the next waits until `n / REPORT_ERROR_BYTES_PER_SEC` has passed since
/// it was proposed; meanwhile changes keep coalescing per node (a newer report replaces an older one),
/// so a flood of reports whose errors change every time costs the log at most this, and only its
/// latest state per node. Errors are the one free text of a report (names, versions and flags are
/// bounded by the state), so reports without them, the usual case, are never paced.
pub const REPORT_ERROR_BYTES_PER_SEC: usize = 1024 * 1024;

/// What [`ConsumerCore::flush`] asks for.
#[derive(Debug)]
pub enum Flush {
    /// Nothing to propose now (nothing pending, a batch in flight, or a wait armed).
    Idle,
    /// Paced: call [`ConsumerCore::paced_over`] after this long, then flush again.
    Wait(Duration),
    /// Propose these changes as one `ReportNodes`, then hand its answer to
    /// [`ConsumerCore::proposed`].
    Propose(Vec<NodeReport>),
}

/// The most bytes of `error` text one `ReportNodes` batch carries (one node's report always goes,
/// whatever its size). Without it a batch held every waiting node's latest report: while one large
/// batch was being committed the next grew (up to every node's 64 KiB), so a slow commit made a
/// slower one, each a log entry that every server encodes, sends, stores and applies between two
/// heartbeats. The rest waits (and coalesces) for the next batch, taken round-robin from where this
/// one stopped so that no node waits behind others that keep changing.
pub const BATCH_ERROR_BYTES: usize = 256 * 1024;

/// Ingests one consumer's reports on the leader.
pub struct ConsumerCore {
    name: String,
    host: Arc<dyn Host>,
    limit: usize,
    pending: BTreeMap<String, NodeReport>,
    in_flight: bool,
    /// The nodes of the batch being proposed: the applied state is about to change for them.
    in_flight_nodes: HashSet<String>,
    /// Reports refused as out of bounds, logged as a summary.
    refusals: RefusalLog,
    /// Error bytes per second this actor puts into the log at most.
    bytes_per_sec: usize,
    /// Before this instant no batch is proposed (the last one's bytes are paid for then).
    paced_until: Option<Instant>,
    /// Error bytes one batch carries at most ([`BATCH_ERROR_BYTES`]).
    batch_error_bytes: usize,
    /// The next batch starts at this node (the first one the last batch left waiting).
    next_node: String,
}

impl ConsumerCore {
    /// The ingestion of consumer `name`.
    pub fn new(name: String, host: Arc<dyn Host>) -> Self {
        Self {
            name,
            host,
            limit: REPORT_QUEUE_LIMIT,
            pending: BTreeMap::new(),
            in_flight: false,
            in_flight_nodes: HashSet::new(),
            refusals: RefusalLog::new(REFUSAL_LOG_INTERVAL),
            bytes_per_sec: REPORT_ERROR_BYTES_PER_SEC,
            paced_until: None,
            batch_error_bytes: BATCH_ERROR_BYTES,
            next_node: String::new(),
        }
    }

    /// Like [`ConsumerCore::new`] with a custom bound on a batch's error bytes (tests).
    #[cfg(test)]
    pub fn with_batch_error_bytes(name: String, host: Arc<dyn Host>, bytes: usize) -> Self {
        Self {
            batch_error_bytes: bytes,
            ..Self::new(name, host)
        }
    }

    /// Like [`ConsumerCore::new`] with a custom error byte rate (tests).
    pub fn with_byte_rate(name: String, host: Arc<dyn Host>, bytes_per_sec: usize) -> Self {
        Self {
            bytes_per_sec,
            ..Self::new(name, host)
        }
    }

    /// Like [`ConsumerCore::new`] with a custom queue bound (tests).
    pub fn with_limit(name: String, host: Arc<dyn Host>, limit: usize) -> Self {
        Self {
            limit,
            ..Self::new(name, host)
        }
    }

    /// The consumer it ingests for.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// At `now`: the batch to propose, if any, or how long the pacing holds it.
    pub fn flush(&mut self, now: Instant) -> Flush {
        if self.in_flight || self.pending.is_empty() {
            return Flush::Idle;
        }
        if let Some(until) = self.paced_until.filter(|until| *until > now) {
            // Paced: one flush is armed at `until`; the changes wait (and coalesce) until then.
            self.in_flight = true;
            return Flush::Wait(until - now);
        }
        // Batches whose every member is refused are skipped: the nodes still waiting go next.
        let batch = loop {
            let batch = self.checked_batch(now);
            if !batch.is_empty() || self.pending.is_empty() {
                break batch;
            }
        };
        if batch.is_empty() {
            return Flush::Idle;
        }
        let bytes: usize = batch.iter().map(error_bytes).sum();
        let paid =
            std::time::Duration::from_secs_f64(bytes as f64 / self.bytes_per_sec.max(1) as f64);
        self.paced_until = Some(now + paid);
        ingest_stats::batch();
        self.in_flight = true;
        self.in_flight_nodes = batch.iter().map(|r| r.node.clone()).collect();
        Flush::Propose(batch)
    }

    /// The wait [`Flush::Wait`] asked for is over: the next flush may propose.
    pub fn paced_over(&mut self) {
        self.in_flight = false;
        self.paced_until = None;
    }

    /// The batch of [`Flush::Propose`] was committed or not; flush again after.
    pub fn proposed<T>(&mut self, result: Result<T, ProposeError>) {
        self.in_flight = false;
        let count = std::mem::take(&mut self.in_flight_nodes).len();
        if let Err(e) = result {
            // Dropped, not retried: the nodes report their whole state again shortly, and a
            // stale change must never overwrite a newer one.
            tracing::warn!(consumer = %self.name, changes = count, error = %e, "node changes not committed");
        }
    }

    /// Its shell stopped: the pending changes are dropped.
    pub fn stopped(&mut self) {
        ingest_stats::queued(-(self.pending.len() as i64));
        self.pending.clear();
    }

    /// The next batch ([`Self::take_batch`]) less its members out of bounds, which are refused.
    fn checked_batch(&mut self, now: Instant) -> Vec<NodeReport> {
        let pending = self.take_batch();
        ingest_stats::queued(-(pending.len() as i64));
        // Each member is checked again against the state now, so that one report out of bounds (the
        // state moved since it was taken) is refused alone and never fails the whole batch.
        let (batch, refused): (Vec<_>, Vec<_>) = read_with(&self.host, |s| {
            pending
                .into_iter()
                .map(|r| match check_report(s, &r) {
                    Ok(()) => Ok(r),
                    Err(e) => Err((r.node, e.to_string())),
                })
                .partition(Result::is_ok)
        });
        for (node, reason) in refused.into_iter().filter_map(Result::err) {
            self.refuse(node, reason, now);
        }
        batch.into_iter().filter_map(Result::ok).collect()
    }

    /// Takes the next batch out of the waiting changes: round-robin from [`Self::next_node`], until
    /// the next one would take it past [`BATCH_ERROR_BYTES`] (the first is always taken).
    fn take_batch(&mut self) -> Vec<NodeReport> {
        let start = self.next_node.clone();
        let order: Vec<String> = self
            .pending
            .range(start.clone()..)
            .chain(self.pending.range(..start))
            .map(|(node, _)| node.clone())
            .collect();
        let mut batch = Vec::new();
        let mut bytes = 0;
        for node in order {
            let Some(report) = self.pending.get(&node) else {
                continue;
            };
            let cost = error_bytes(report);
            if !batch.is_empty() && bytes + cost > self.batch_error_bytes {
                self.next_node = node;
                break;
            }
            bytes += cost;
            batch.extend(self.pending.remove(&node));
        }
        batch
    }

    /// Takes reports at `now`: queues their changes, if any, for the next batch (the caller flushes). The changes are found under one read of the applied state.
    /// A report out of bounds is refused alone (`check_report`), counted and summarised in the log.
    pub fn ingest(
        &mut self,
        reports: Vec<NodeReport>,
        now: Instant,
    ) -> Vec<Result<(), ReportRejected>> {
        let changes: Vec<Result<Option<NodeReport>, String>> = read_with(&self.host, |s| {
            reports
                .iter()
                .map(|r| match check_report(s, r) {
                    Ok(()) => Ok(s.report_changes(r)),
                    Err(e) => Err(e.to_string()),
                })
                .collect()
        });
        reports
            .into_iter()
            .zip(changes)
            .map(|(report, change)| match change {
                Ok(change) => self.take(report, change),
                Err(reason) => Err(self.refuse(report.node, reason, now)),
            })
            .collect()
    }

    /// Counts and (in summary) logs the refusal of `node`'s report, and says why.
    fn refuse(&mut self, node: String, reason: String, now: Instant) -> ReportRejected {
        ingest_stats::refused();
        if let Some(line) = self.refusals.record(now, &reason) {
            tracing::warn!(consumer = %self.name, "{line}");
        }
        ReportRejected::Invalid { node, reason }
    }

    /// Takes one report whose change from the applied state is `change`.
    fn take(
        &mut self,
        report: NodeReport,
        change: Option<NodeReport>,
    ) -> Result<(), ReportRejected> {
        let node = report.node.clone();
        let change = match change {
            Some(change) => change,
            // Same as the applied state, but a change of this node is being committed and will
            // overwrite it: the report must follow that change to the log, or it is lost.
            None if self.in_flight_nodes.contains(&node) => report,
            None => {
                // A heartbeat: nothing reaches the log.
                ingest_stats::heartbeat();
                if self.pending.remove(&node).is_some() {
                    ingest_stats::queued(-1);
                }
                return Ok(());
            }
        };
        if self.pending.len() >= self.limit && !self.pending.contains_key(&node) {
            return Err(ReportRejected::Busy {
                consumer: self.name.clone(),
                pending: self.pending.len(),
                limit: self.limit,
            });
        }
        ingest_stats::change();
        if self.pending.insert(node, change).is_none() {
            ingest_stats::queued(1);
        }
        Ok(())
    }
}

/// The bytes of free text in `report`: its `error`s, and its log paths (carried only when they changed).
fn error_bytes(report: &NodeReport) -> usize {
    let logs: usize = report
        .resources
        .values()
        .map(|r| r.log.as_ref().map_or(0, String::len))
        .sum();
    logs + report
        .resources
        .values()
        .flat_map(|r| r.versions.values())
        .map(|v| v.error.as_ref().map_or(0, String::len))
        .sum::<usize>()
}

#[cfg(test)]
#[path = "consumer_core_test.rs"]
mod tests;
