//! The leader's analysis query: which measurements are due, each with its provider, rendered query and the
//! numbers the `RecordMeasurement` it proposes must carry. Derived from the replicated run alone, so a new
//! leader re-arms every measurement where the old one left it (as `rearm_pulses` does for pulse countdowns).

use crate::analysis::run::{Measurement, Verdict};
use crate::analysis::template::{render, Vars};
use crate::deployment::Deployment;
use crate::state::ClusterState;
use crate::values::ids::{DeploymentId, Timestamp};

/// One measurement to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueMeasurement {
    /// The deployment measured.
    pub id: DeploymentId,
    /// The provider named in its analysis (looked up in the servers' config).
    pub provider: String,
    /// The metric's name.
    pub metric: String,
    /// The phase measured.
    pub phase: u32,
    /// The measurement's number in the phase.
    pub seq: u32,
    /// When it is due (leader-stamped ms).
    pub due_at: Timestamp,
    /// The query with its placeholders filled in.
    pub query: String,
}

/// A deployment's analysis in a watcher's summary: the verdict and, per metric, its counts and newest
/// measurement (a few hundred bytes whatever the history).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct AnalysisSummary {
    /// The phase measured or last measured.
    pub phase: u32,
    /// The current phase's verdict.
    pub verdict: Verdict,
    /// Why, when failed or inconclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Per metric: name, counts in the phase and the newest measurement.
    pub metrics: Vec<MetricSummary>,
}

/// One metric's line in an [`AnalysisSummary`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct MetricSummary {
    /// The metric's name.
    pub name: String,
    /// Successful measurements in the phase.
    pub successes: u32,
    /// Failed measurements in the phase.
    pub failures: u32,
    /// Inconclusive measurements in the phase.
    pub inconclusive: u32,
    /// Errors in the phase.
    pub errors: u32,
    /// The newest measurement, any phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<Measurement>,
}

/// The summary of `d`'s analysis, if it has one.
pub fn analysis_summary(d: &Deployment) -> Option<AnalysisSummary> {
    let run = d.analysis.as_ref()?;
    Some(AnalysisSummary {
        phase: run.phase,
        verdict: run.verdict,
        reason: run.reason.clone(),
        metrics: run
            .metrics
            .iter()
            .map(|m| MetricSummary {
                name: m.name.clone(),
                successes: m.successes,
                failures: m.failures,
                inconclusive: m.inconclusive,
                errors: m.errors,
                last: m.last.last().cloned(),
            })
            .collect(),
    })
}

/// What of an analysis changes a watcher's fingerprint: measurements recorded, and the verdict.
pub fn analysis_fingerprint(d: &Deployment) -> (u32, u8) {
    d.analysis.as_ref().map_or((0, 0), |r| {
        (r.metrics.iter().map(|m| m.total).sum(), r.verdict as u8)
    })
}

impl ClusterState {
    /// Every measurement of a rolling-forward deployment with an analysis due at or before `now`, in id
    /// order; and the earliest due time after `now`, for the leader to sleep until.
    pub fn analysis_due(&self, now: Timestamp) -> (Vec<DueMeasurement>, Option<Timestamp>) {
        let mut due = Vec::new();
        let mut next: Option<Timestamp> = None;
        for id in self.active_set() {
            let Some(d) = self.deployment_map().get(id) else {
                continue;
            };
            let (Some(spec), Some(run)) = (&d.settings.analysis, &d.analysis) else {
                continue;
            };
            // Measurements are spaced in active time: none is due while the deployment waits.
            if !d.moving() {
                continue;
            }
            let mut rendered: Option<(Vec<&str>, String)> = None;
            for (i, m) in spec.metrics.iter().enumerate() {
                let Some((seq, at)) = run
                    .due(spec, i)
                    .and_then(|(seq, active)| Some((seq, d.active_wall(active)?)))
                else {
                    continue;
                };
                if at > now {
                    next = Some(next.map_or(at, |n| n.min(at)));
                    continue;
                }
                let (nodes, deployment) = rendered.get_or_insert_with(|| {
                    let nodes = d
                        .analysis_phase_nodes(run.phase)
                        .iter()
                        .map(|&p| d.nodes[p as usize].id.as_str())
                        .collect();
                    (nodes, d.id.to_string())
                });
                let vars = Vars {
                    consumer: &d.consumer,
                    resource: &d.resource,
                    version: d.version,
                    deployment,
                    nodes: nodes.clone(),
                };
                due.push(DueMeasurement {
                    id: *id,
                    provider: spec.provider.clone(),
                    metric: m.name.clone(),
                    phase: run.phase,
                    seq,
                    due_at: at,
                    query: render(&m.query, &vars),
                });
            }
        }
        (due, next)
    }
}

#[cfg(test)]
#[path = "analysis_test.rs"]
mod tests;
