//! Report routing and node liveness on the leader: every report passes through here on its way to
//! the child of its node's (first) consumer, so node liveness is kept here too, once per node
//! whatever the number of its consumers, and active consumer nodes silent longer than the node
//! timeout are proposed as `MarkInactive`. The liveness table itself is `liveness.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::host::{read_with, Host, ProposeError};
use super::ingest_stats;
use super::liveness::Liveness;
use crate::domain::{Command, NodeReport, Response};

/// The reports of one batch, by the consumer whose child takes them, each with its places in the
/// batch; the answers go back in the batch's order (reports of nodes in no consumer are taken).
#[derive(Debug, Default)]
pub struct Routed {
    /// Reports in the batch.
    pub count: usize,
    /// Per consumer: the places of its reports in the batch, and the reports.
    pub batches: BTreeMap<String, (Vec<usize>, Vec<NodeReport>)>,
}

/// Routes reports to consumer actors and judges node liveness from them.
pub(crate) struct ReportRouting {
    host: Arc<dyn Host>,
    /// When each node last reported (leader only).
    liveness: Liveness,
    /// A `MarkInactive` is being committed: the next check waits for it.
    marking: bool,
}

impl ReportRouting {
    /// Routing with an empty liveness table watching from `now`: nodes silent for `node_timeout`
    /// are marked inactive, and judged for forgetting after `forget_after` (zero: never).
    pub fn new(
        host: Arc<dyn Host>,
        node_timeout: Duration,
        forget_after: Duration,
        now: Instant,
    ) -> Self {
        Self {
            host,
            liveness: Liveness::new(node_timeout, now).forgetting_after(forget_after),
            marking: false,
        }
    }

    /// Leadership began at `now`: every node gets one full timeout from it.
    pub fn restart(&mut self, now: Instant) {
        self.liveness.restart(now);
    }

    /// The liveness table (housekeeping reads it to find nodes to forget).
    pub fn liveness(&self) -> &Liveness {
        &self.liveness
    }

    /// Whether a `MarkInactive` is being committed (the liveness check waits for it).
    pub fn marking(&self) -> bool {
        self.marking
    }

    /// Of the active nodes of any consumer, those silent longer than the node timeout at `now`.
    /// Each node is checked once, however many consumers hold it.
    pub fn silent(&self, now: Instant) -> Vec<String> {
        let liveness = &self.liveness;
        read_with(&self.host, |s| liveness.silent(s.reporting_nodes(), now))
    }

    /// Drops stale entries of the table at `now` and returns the `MarkInactive` to propose for the
    /// `silent` nodes, if any (then the next check waits until [`ReportRouting::marked`]).
    pub fn mark_inactive(&mut self, silent: Vec<String>, now: Instant) -> Option<Command> {
        self.liveness.forget_stale(now);
        ingest_stats::liveness(self.liveness.len());
        tracing::trace!(heard = self.liveness.len(), "liveness checked");
        if silent.is_empty() {
            return None;
        }
        tracing::info!(nodes = ?silent, "nodes stopped reporting: marking inactive");
        self.marking = true;
        Some(Command::MarkInactive { nodes: silent })
    }

    /// The `MarkInactive` proposed by [`ReportRouting::mark_inactive`] was committed or not.
    pub fn marked(&mut self, result: Result<Response, ProposeError>) {
        self.marking = false;
        if let Err(e) = result {
            tracing::warn!(error = %e, "MarkInactive not committed");
        }
    }

    /// How many milliseconds before `now` each of `nodes` last reported (`None`: not since this
    /// leader started, or longer ago than the node timeout).
    pub fn last_reports(&self, nodes: &[String], now: Instant) -> Vec<Option<u64>> {
        nodes
            .iter()
            .map(|n| self.liveness.age(n, now).map(|d| d.as_millis() as u64))
            .collect()
    }

    /// Refreshes the reporting nodes' liveness at `now` and sorts the reports by their (first)
    /// consumer, one batch per consumer's child. Called on the leader only (a follower refuses them
    /// all).
    pub fn route(&mut self, reports: Vec<NodeReport>, now: Instant) -> Routed {
        let count = reports.len();
        let consumers: Vec<Option<String>> = read_with(&self.host, |s| {
            reports
                .iter()
                .map(|r| s.report_consumer(&r.node).map(str::to_string))
                .collect()
        });
        // A report is proof of life for its node, whichever consumer's actor takes it; only for a
        // node some consumer's actor takes, so made-up ids never grow the table.
        for (r, consumer) in reports.iter().zip(&consumers) {
            if r.active != Some(false) && consumer.is_some() {
                self.liveness.seen(&r.node, now);
            }
        }
        ingest_stats::liveness(self.liveness.len());
        let mut batches: BTreeMap<String, (Vec<usize>, Vec<NodeReport>)> = BTreeMap::new();
        let mut unassigned = Vec::new();
        for (i, (report, consumer)) in reports.into_iter().zip(consumers).enumerate() {
            match consumer {
                Some(consumer) => {
                    let (slots, batch) = batches.entry(consumer).or_default();
                    slots.push(i);
                    batch.push(report);
                }
                None => unassigned.push(report),
            }
        }
        // Nodes in no consumer (and nothing to remove) are answered (no targets) but never written
        // to the log: a flood of made-up node ids must cost the replicas nothing. A node added to a
        // consumer later is recorded from its next report.
        if !unassigned.is_empty() {
            tracing::debug!(
                nodes = unassigned.len(),
                "reports of nodes in no consumer ignored"
            );
        }
        Routed { count, batches }
    }
}

#[cfg(test)]
#[path = "routing_test.rs"]
mod tests;
