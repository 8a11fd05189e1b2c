//! Point-in-time counts of the replicated state for monitoring (`GET /metrics`): pure, with time passed in.

use std::collections::BTreeMap;

use crate::deployment::NodePhase;
use crate::state::ClusterState;
use crate::values::ids::{DeploymentId, Timestamp};
use crate::values::status::Status;

/// What the state looks like at `now`, counted once per scrape.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gauges {
    /// Deployments (active and terminal) by status; every status is present, zero or not.
    pub deployments_by_status: BTreeMap<Status, u64>,
    /// Per active deployment: its consumer, resource and how many of its nodes are in each phase.
    pub active: BTreeMap<DeploymentId, ActiveGauges>,
    /// Coordinated deployments still rolling whose pulse deadline is at or before `now` (the leader
    /// blocks them at its next tick).
    pub overdue_pulses: u64,
    /// Nodes known to the state.
    pub nodes: u64,
    /// Nodes of `nodes` not marked inactive (by `MarkInactive`, or a report saying so).
    pub active_nodes: u64,
}

/// One active deployment's counts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActiveGauges {
    /// The consumer whose nodes the deployment moves (a metric label).
    pub consumer: String,
    /// The resource it deploys (a metric label).
    pub resource: String,
    /// The deployment's status; always `Some` from [`ClusterState::gauges`], `None` only in a
    /// default value.
    pub status: Option<Status>,
    /// Nodes in each phase, every phase of [`ALL_PHASES`] in its order (zero or not).
    pub phases: Vec<(NodePhase, u64)>,
    /// Milliseconds left before the pulse countdown runs out (negative once past); `None` when the
    /// deployment has no countdown running (uncoordinated, or held).
    pub pulse_slack_ms: Option<i64>,
}

/// Every status, in the order of the status table.
pub const ALL_STATUSES: [Status; 10] = [
    Status::RollingForward,
    Status::RollingBack,
    Status::RollForwardPaused,
    Status::RollBackPaused,
    Status::RollForwardAwaitingPulse,
    Status::RollBackAwaitingPulse,
    Status::RolledForward,
    Status::RolledBack,
    Status::Aborted,
    Status::Failed,
];

/// Every node phase, in the order of API.md.
pub const ALL_PHASES: [NodePhase; 11] = [
    NodePhase::Pending,
    NodePhase::Downloading,
    NodePhase::Downloaded,
    NodePhase::Installing,
    NodePhase::Watching,
    NodePhase::Succeeded,
    NodePhase::Failed,
    NodePhase::Skipped,
    NodePhase::RollingBack,
    NodePhase::RolledBack,
    NodePhase::TimedOut,
];

impl ClusterState {
    /// Counts for monitoring at `now` (the caller's clock): O(deployments + nodes of active deployments).
    pub fn gauges(&self, now: Timestamp) -> Gauges {
        let mut g = Gauges {
            deployments_by_status: ALL_STATUSES.iter().map(|s| (*s, 0)).collect(),
            ..Gauges::default()
        };
        for d in self.deployment_map().values() {
            *g.deployments_by_status.entry(d.status).or_default() += 1;
        }
        for id in self.active_set() {
            let Some(d) = self.deployment_map().get(id) else {
                continue;
            };
            let mut phases: Vec<(NodePhase, u64)> = ALL_PHASES.iter().map(|p| (*p, 0)).collect();
            for n in &d.nodes {
                if let Some(slot) = phases.iter_mut().find(|(p, _)| *p == n.phase) {
                    slot.1 += 1;
                }
            }
            let slack = d
                .pulse_deadline()
                .map(|deadline| deadline as i64 - now as i64);
            if slack.is_some_and(|s| s <= 0) {
                g.overdue_pulses += 1;
            }
            g.active.insert(
                *id,
                ActiveGauges {
                    consumer: d.consumer.clone(),
                    resource: d.resource.clone(),
                    status: Some(d.status),
                    phases,
                    pulse_slack_ms: slack,
                },
            );
        }
        for (_, n) in self.node_table().iter() {
            g.nodes += 1;
            if n.active {
                g.active_nodes += 1;
            }
        }
        g
    }
}

#[cfg(test)]
#[path = "gauges_test.rs"]
mod gauges_test;
