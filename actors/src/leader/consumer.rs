//! One actor per consumer: it ingests its nodes' reports and proposes only changes — coalesced per
//! node and batched into one `ReportNodes` at a time. Liveness is not kept here but once per node by
//! the supervisor (a node may belong to several consumers; see `liveness`).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;

use super::host::{read_with, Host};
use super::ingest_stats;
use super::messages::{Report, ReportBatch, ReportRejected, Stop};
use super::refusals::{RefusalLog, REFUSAL_LOG_INTERVAL};
use crate::domain::{check_report, Command, NodeReport};

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

/// Ingests one consumer's reports on the leader.
pub struct ConsumerActor {
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
}

impl ConsumerActor {
    /// An actor for consumer `name`.
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
        }
    }

    /// Like [`ConsumerActor::new`] with a custom error byte rate (tests).
    #[cfg(test)]
    pub fn with_byte_rate(name: String, host: Arc<dyn Host>, bytes_per_sec: usize) -> Self {
        Self {
            bytes_per_sec,
            ..Self::new(name, host)
        }
    }

    /// Like [`ConsumerActor::new`] with a custom queue bound (tests).
    #[cfg(test)]
    pub fn with_limit(name: String, host: Arc<dyn Host>, limit: usize) -> Self {
        Self {
            limit,
            ..Self::new(name, host)
        }
    }

    fn flush(&mut self, ctx: &mut Context<Self>) {
        if self.in_flight || self.pending.is_empty() {
            return;
        }
        let now = Instant::now();
        if let Some(until) = self.paced_until.filter(|until| *until > now) {
            // Paced: one flush is armed at `until`; the changes wait (and coalesce) until then.
            self.in_flight = true;
            ctx.run_later(until - now, |act, ctx| {
                act.in_flight = false;
                act.paced_until = None;
                act.flush(ctx);
            });
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        ingest_stats::queued(-(pending.len() as i64));
        // Each member is checked again against the state now, so that one report out of bounds (the
        // state moved since it was taken) is refused alone and never fails the whole batch.
        let (batch, refused): (Vec<_>, Vec<_>) = read_with(&self.host, |s| {
            pending
                .into_values()
                .map(|r| match check_report(s, &r) {
                    Ok(()) => Ok(r),
                    Err(e) => Err((r.node, e.to_string())),
                })
                .partition(Result::is_ok)
        });
        for (node, reason) in refused.into_iter().filter_map(Result::err) {
            self.refuse(node, reason);
        }
        let batch: Vec<NodeReport> = batch.into_iter().filter_map(Result::ok).collect();
        if batch.is_empty() {
            return;
        }
        let count = batch.len();
        let bytes: usize = batch.iter().map(error_bytes).sum();
        let paid =
            std::time::Duration::from_secs_f64(bytes as f64 / self.bytes_per_sec.max(1) as f64);
        self.paced_until = Some(now + paid);
        ingest_stats::batch();
        self.in_flight = true;
        self.in_flight_nodes = batch.iter().map(|r| r.node.clone()).collect();
        let fut = self.host.propose(Command::ReportNodes(batch));
        ctx.spawn(fut.into_actor(self).map(move |result, act, ctx| {
            act.in_flight = false;
            act.in_flight_nodes.clear();
            if let Err(e) = result {
                // Dropped, not retried: the nodes report their whole state again shortly, and a
                // stale change must never overwrite a newer one.
                tracing::warn!(consumer = %act.name, changes = count, error = %e, "node changes not committed");
            }
            act.flush(ctx);
        }));
    }

    /// Takes reports: queues their changes, if any, for the next batch (the caller flushes). The changes are found under one read of the applied state.
    /// A report out of bounds is refused alone (`check_report`), counted and summarised in the log.
    fn ingest(&mut self, reports: Vec<NodeReport>) -> Vec<Result<(), ReportRejected>> {
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
                Err(reason) => Err(self.refuse(report.node, reason)),
            })
            .collect()
    }

    /// Counts and (in summary) logs the refusal of `node`'s report, and says why.
    fn refuse(&mut self, node: String, reason: String) -> ReportRejected {
        ingest_stats::refused();
        if let Some(line) = self.refusals.record(Instant::now(), &reason) {
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

impl Actor for ConsumerActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Self::Context) {
        ingest_stats::queued(-(self.pending.len() as i64));
        self.pending.clear();
    }
}

impl Handler<Report> for ConsumerActor {
    type Result = Result<(), ReportRejected>;

    fn handle(&mut self, Report(report): Report, ctx: &mut Self::Context) -> Self::Result {
        let taken = self.ingest(vec![report]).pop();
        self.flush(ctx);
        taken.unwrap_or(Err(ReportRejected::NotLeader))
    }
}

impl Handler<ReportBatch> for ConsumerActor {
    type Result = Vec<Result<(), ReportRejected>>;

    fn handle(
        &mut self,
        ReportBatch(reports): ReportBatch,
        ctx: &mut Self::Context,
    ) -> Self::Result {
        let taken = self.ingest(reports);
        self.flush(ctx);
        taken
    }
}

impl Handler<Stop> for ConsumerActor {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

#[cfg(test)]
#[path = "consumer_test.rs"]
mod tests;
