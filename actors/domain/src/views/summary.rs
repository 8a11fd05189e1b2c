//! Small views of one deployment for watchers: its summary (counts per node state, window occupancy,
//! pulse countdown, failing nodes with their reasons, recent events, age), a cheap fingerprint that changes
//! when the summary would, and a page of its nodes. Their size does not grow with the node count.

use crate::deployment::pace::PaceView;
use crate::deployment::reasons::WaitView;
use crate::deployment::{Deployment, NodePhase};
use crate::errors::clip;
use crate::state::ClusterState;
use crate::values::ids::{DeploymentId, Timestamp};
use crate::values::status::{PausedBy, Status};
use crate::values::strategy::Strategy;
use crate::views::budgets::Waiting;
use crate::views::{event_view, DeploymentNodeView, DeploymentView, EventView};
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};

/// How many of the newest events a summary carries.
pub const SUMMARY_EVENTS: usize = 10;
/// How many failing nodes a summary names (the rest are counted in `failing_total`).
pub const SUMMARY_FAILING: usize = 20;
/// The largest node page (`?limit=`).
pub const MAX_PAGE_LIMIT: u32 = 10_000;
/// The node page when `?limit=` is not given.
pub const DEFAULT_PAGE_LIMIT: u32 = 100;

/// Nodes per state. Every state is present (0 when none), so a client needs no defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PhaseCounts {
    /// Not yet admitted.
    pub pending: u32,
    /// In the download window, fetching.
    pub downloading: u32,
    /// In the download window, fetched.
    pub downloaded: u32,
    /// In the install window.
    pub installing: u32,
    /// Installed and healthy, inside `min_healthy`.
    pub watching: u32,
    /// Stayed healthy for `min_healthy` after installing, or already ran the version at creation.
    pub succeeded: u32,
    /// Out of retries going forward, or their rollback failed.
    pub failed: u32,
    /// Left without counting: their activity, interest or membership changed.
    pub skipped: u32,
    /// Being re-targeted at their from-version.
    pub rolling_back: u32,
    /// Back on their from-version.
    pub rolled_back: u32,
    /// Not done when the completion timeout fired: left where they were.
    #[serde(default)]
    pub timed_out: u32,
}

impl PhaseCounts {
    /// Counts one node in `phase`.
    pub fn add(&mut self, phase: NodePhase) {
        let slot = match phase {
            NodePhase::Pending => &mut self.pending,
            NodePhase::Downloading => &mut self.downloading,
            NodePhase::Downloaded => &mut self.downloaded,
            NodePhase::Installing => &mut self.installing,
            NodePhase::Watching => &mut self.watching,
            NodePhase::Succeeded => &mut self.succeeded,
            NodePhase::Failed => &mut self.failed,
            NodePhase::Skipped => &mut self.skipped,
            NodePhase::RollingBack => &mut self.rolling_back,
            NodePhase::RolledBack => &mut self.rolled_back,
            NodePhase::TimedOut => &mut self.timed_out,
        };
        *slot += 1;
    }

    /// The count of `phase`.
    pub fn get(&self, phase: NodePhase) -> u32 {
        match phase {
            NodePhase::Pending => self.pending,
            NodePhase::Downloading => self.downloading,
            NodePhase::Downloaded => self.downloaded,
            NodePhase::Installing => self.installing,
            NodePhase::Watching => self.watching,
            NodePhase::Succeeded => self.succeeded,
            NodePhase::Failed => self.failed,
            NodePhase::Skipped => self.skipped,
            NodePhase::RollingBack => self.rolling_back,
            NodePhase::RolledBack => self.rolled_back,
            NodePhase::TimedOut => self.timed_out,
        }
    }
}

/// One window: the slots taken and its size (absent when unbounded: all at once).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WindowUse {
    /// Nodes holding one of the window's slots now.
    pub used: u32,
    /// Its size, if bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
}

/// The batch a batch deployment is in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BatchUse {
    /// 1-based number of the current batch (0 before the first).
    pub number: u32,
    /// The strategy's size for this batch (the last size repeats; the first size before the first
    /// batch); the batch holds fewer nodes when the order runs out.
    pub size: u32,
    /// Its nodes not finished yet.
    pub open: u32,
}

/// How full a deployment's windows are: install and download slots, the current batch, rollback
/// slots.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Windows {
    /// Install slots (installing, watching and, rolling forward, failed nodes).
    pub install: WindowUse,
    /// Download (prefetch) slots.
    pub download: WindowUse,
    /// Batch strategy: the current batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchUse>,
    /// Nodes rolling back now (only once a rollback started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<u32>,
}

/// The pulse countdown of a coordinated deployment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PulseView {
    /// The interval pulses must keep.
    pub interval_ms: u64,
    /// The last pulse (leader-stamped ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pulse_at: Option<Timestamp>,
    /// When the countdown runs out (none before the first pulse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Timestamp>,
    /// Milliseconds left at `now` (negative: overdue); absent when held, blocked or finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_ms: Option<i64>,
    /// Blocked in AWAITING_PULSE.
    pub blocked: bool,
}

/// A failing node: failed, or retrying after failed attempts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FailingNode {
    /// The failing node's id, as listed in the consumer.
    pub id: String,
    /// Its ordinal in the consumer.
    pub ordinal: u32,
    /// Its state in the deployment: `failed`, or any state but `succeeded` after a failed attempt.
    pub state: NodePhase,
    /// Failed attempts so far.
    pub failures: u32,
    /// The newest failure's reason (the node's error, at most 100 bytes quoted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When that failure was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Timestamp>,
}

/// `GET /v1/deployments/{id}/summary`: what a watcher draws, of a size independent of the node count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SummaryView {
    /// The deployment's id (`d-N`).
    pub id: DeploymentId,
    /// The consumer whose nodes it moves.
    pub consumer: String,
    /// The resource it moves them to a version of.
    pub resource: String,
    /// The version each node is moved to.
    pub version: u64,
    /// Its status (`ROLLING_FORWARD`, `ROLL_FORWARD_PAUSED`, `ROLLED_FORWARD`, ...).
    pub status: Status,
    /// Why it is held (user, pulse timeout, batch autopause); absent unless paused or awaiting a
    /// pulse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<PausedBy>,
    /// Every reason it waits, in rank order (`paused_by` is the first that pauses): a person (who), a gate,
    /// the analysis, the autopause, a window (which), the pulse, a budget, a fleet limit, its start jitter.
    /// Empty while it moves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<WaitView>,
    /// Creation (leader-stamped ms).
    pub created_at: Timestamp,
    /// When it became terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<Timestamp>,
    /// The answering server's clock when the summary was made (ms).
    pub now: Timestamp,
    /// The deployment's own age: from creation to its end, or to `now` while active.
    pub age_ms: u64,
    /// Nodes in the deployment.
    pub nodes: u32,
    /// Nodes per state.
    pub counts: PhaseCounts,
    /// Slots taken in its install, download and rollback windows, and its current batch.
    pub windows: Windows,
    /// Pulse countdown (coordinated deployments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pulse: Option<PulseView>,
    /// A bake under way, a confirmation gate it waits at, its progress deadline (DEPLOYMENTS.md §14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<PaceView>,
    /// The first failing nodes in the deployment's order.
    pub failing: Vec<FailingNode>,
    /// All failing nodes.
    pub failing_total: u32,
    /// The newest events, oldest first.
    pub events: Vec<EventView>,
    /// How many events the deployment has in all; `events` carries only the newest
    /// [`SUMMARY_EVENTS`].
    pub events_total: u32,
    /// Changes whenever the deployment's progress does (see [`fingerprint`]).
    pub fingerprint: u64,
    /// Its metric analysis: verdict, counts and newest measurement per metric (DEPLOYMENTS.md §15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<crate::views::analysis::AnalysisSummary>,
    /// What policy holds it without pausing it: `"budget"` when its own windows would admit its next
    /// node and a consumer's disruption budget does not; `"fleet_limit"` when a fleet-wide limit on
    /// installs or downloads does not; `"start_jitter"` when its next node's start jitter has not passed;
    /// `"analysis"` when every node is done and its background analysis has no successful measurement yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<String>,
    /// Which consumers' budgets and which deployments hold the slots it waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_on: Option<Waiting>,
}

/// A cheap value that changes whenever a deployment's status, counters, pulse or events do: O(1), so a
/// watcher can compare it after every applied entry. (A node going from downloading to downloaded changes
/// no counter; it shows in the next summary sent for another change.)
pub fn fingerprint(d: &Deployment) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (d.status as u8).hash(&mut h);
    d.waits().bits().hash(&mut h);
    d.last_pulse_at.hash(&mut h);
    d.pace.waiting.hash(&mut h);
    d.pace.bake.hash(&mut h);
    d.events.len().hash(&mut h);
    (
        d.tally.succeeded,
        d.tally.failed,
        d.tally.skipped,
        d.forward.install_used,
        d.forward.download_used,
        d.forward.batch_open,
    )
        .hash(&mut h);
    (
        d.forward.install_cursor,
        d.forward.download_cursor,
        d.rollback.cursor,
        d.rollback.used,
        d.rollback.failed,
    )
        .hash(&mut h);
    crate::views::analysis::analysis_fingerprint(d).hash(&mut h);
    h.finish()
}

/// Which nodes of a deployment to show: those in `state` (all when `None`), from `offset`, at most `limit`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NodePage {
    /// Matching nodes to skip.
    pub offset: u32,
    /// Matching nodes to show (1..=[`MAX_PAGE_LIMIT`]).
    pub limit: u32,
    /// Only nodes in this state.
    pub state: Option<NodePhase>,
}

/// Where a page sits among the deployment's nodes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PageInfo {
    /// Matching nodes skipped.
    pub offset: u32,
    /// Page size asked for.
    pub limit: u32,
    /// Nodes matching the state filter.
    pub matched: u32,
    /// Nodes in the deployment.
    pub total: u32,
    /// All events (the page view carries only the newest).
    pub events_total: u32,
}

fn windows(d: &Deployment) -> Windows {
    let (install, download) = match &d.settings.strategy {
        Strategy::Rolling {
            install_window,
            download_window,
        } => (Some(*install_window), Some(*download_window)),
        Strategy::AllAtOnce { .. } | Strategy::Batch { .. } => (None, None),
    };
    let batch = match &d.settings.strategy {
        Strategy::Batch { sizes, .. } => {
            let number = d.batches.len() as u32;
            let index = (number.max(1) - 1) as usize;
            let size = sizes
                .get(index.min(sizes.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0);
            Some(BatchUse {
                number,
                size,
                open: d.forward.batch_open,
            })
        }
        Strategy::AllAtOnce { .. } | Strategy::Rolling { .. } => None,
    };
    Windows {
        install: WindowUse {
            used: d.forward.install_used,
            size: install,
        },
        download: WindowUse {
            used: d.forward.download_used,
            size: download,
        },
        batch,
        rollback: (!d.status.is_forward() || d.rollback.used > 0).then_some(d.rollback.used),
    }
}

fn pulse(d: &Deployment, now: Timestamp) -> Option<PulseView> {
    let interval_ms = d.settings.pulse_interval_ms?;
    let deadline = d.last_pulse_at.map(|t| t.saturating_add(interval_ms));
    let counting = d.status.is_rolling();
    Some(PulseView {
        interval_ms,
        last_pulse_at: d.last_pulse_at,
        deadline,
        left_ms: deadline
            .filter(|_| counting)
            .map(|at| at as i64 - now as i64),
        blocked: d.status.is_awaiting(),
    })
}

impl ClusterState {
    /// The summary of deployment `id` as seen at `now` (ms; the caller's clock: the core reads none).
    pub fn deployment_summary(&self, id: DeploymentId, now: Timestamp) -> Option<SummaryView> {
        let d = self.deployment_map().get(&id)?;
        let mut counts = PhaseCounts::default();
        let mut failing_total = 0u32;
        let mut failing = Vec::new();
        for (p, n) in d.nodes.iter().enumerate() {
            counts.add(n.phase);
            if n.phase == NodePhase::Failed || (n.failures > 0 && n.phase != NodePhase::Succeeded) {
                failing_total += 1;
                if failing.len() < SUMMARY_FAILING {
                    failing.push(p);
                }
            }
        }
        let failing = self.failing_nodes(d, &failing);
        let start = d.events.len().saturating_sub(SUMMARY_EVENTS);
        let end = d.ended_at.unwrap_or(now);
        let waiting = self.budget_wait(d);
        Some(SummaryView {
            id,
            consumer: d.consumer.clone(),
            resource: d.resource.clone(),
            version: d.version,
            status: d.status,
            paused_by: d.paused_by(),
            waits: d.waits().view(),
            created_at: d.created_at,
            ended_at: d.ended_at,
            now,
            age_ms: end.saturating_sub(d.created_at),
            nodes: d.nodes.len() as u32,
            counts,
            windows: windows(d),
            pulse: pulse(d, now),
            pace: d.pace_view(now),
            failing,
            failing_total,
            events: d
                .events
                .iter_from(start)
                .map(|e| event_view(d, e))
                .collect(),
            events_total: d.events.len() as u32,
            fingerprint: fingerprint(d),
            analysis: crate::views::analysis::analysis_summary(d),
            waiting_for: if waiting.is_some() {
                Some("budget".to_string())
            } else if self.fleet_wait(d) {
                Some("fleet_limit".to_string())
            } else if self.jitter_wait(d, now) {
                Some("start_jitter".to_string())
            } else if d.analysis_awaited().is_some() {
                Some("analysis".to_string())
            } else {
                None
            },
            waiting_on: waiting,
        })
    }

    /// The fingerprint of deployment `id` (see [`fingerprint`]), `None` if it does not exist.
    pub fn deployment_fingerprint(&self, id: DeploymentId) -> Option<u64> {
        self.deployment_map().get(&id).map(fingerprint)
    }

    /// Failing nodes at `positions` with the reason of their newest failure: the message of their newest
    /// retry/failed event (one backward scan that stops once every node is found), else the error the node
    /// reports for the deployment's version.
    fn failing_nodes(&self, d: &Deployment, positions: &[usize]) -> Vec<FailingNode> {
        use crate::deployment::EventKind;
        let mut reasons: Vec<Option<(Option<String>, Timestamp)>> = vec![None; positions.len()];
        let mut left = positions.len();
        for e in d.events.iter().rev() {
            if left == 0 {
                break;
            }
            let (Some(p), EventKind::Retry | EventKind::Failed) = (e.node, e.kind) else {
                continue;
            };
            if let Ok(i) = positions.binary_search(&(p as usize)) {
                if reasons[i].is_none() {
                    reasons[i] = Some((e.message.clone(), e.at));
                    left -= 1;
                }
            }
        }
        positions
            .iter()
            .zip(reasons)
            .map(|(&p, found)| {
                let n = &d.nodes[p];
                let (message, at) = found.unwrap_or((None, 0));
                let reason = message.or_else(|| {
                    let nr = self.node_table().get(&n.id)?.resources.get(&d.resource);
                    crate::deployment::progress::failure_reason(d.version, n.from_version, nr)
                });
                FailingNode {
                    id: n.id.clone(),
                    ordinal: n.ordinal,
                    state: n.phase,
                    failures: n.failures,
                    reason: reason.map(|r| clip(&r)),
                    at: (at > 0).then_some(at),
                }
            })
            .collect()
    }

    /// Deployment `id` with only the nodes of `page` and its newest [`SUMMARY_EVENTS`] events.
    pub fn deployment_page(
        &self,
        id: DeploymentId,
        page: &NodePage,
    ) -> Option<(DeploymentView, PageInfo)> {
        let d = self.deployment_map().get(&id)?;
        let matching = d
            .nodes
            .iter()
            .filter(|n| page.state.is_none_or(|s| s == n.phase));
        let matched = matching.clone().count() as u32;
        let nodes = matching
            .skip(page.offset as usize)
            .take(page.limit as usize)
            .map(|n| DeploymentNodeView {
                id: n.id.clone(),
                ordinal: n.ordinal,
                from_version: n.from_version,
                state: n.phase,
                failures: n.failures,
            })
            .collect();
        let start = d.events.len().saturating_sub(SUMMARY_EVENTS);
        let view = DeploymentView {
            id,
            consumer: d.consumer.clone(),
            resource: d.resource.clone(),
            version: d.version,
            status: d.status,
            paused_by: d.paused_by(),
            waits: d.waits().view(),
            last_pulse_at: d.last_pulse_at,
            settings: d.settings.clone(),
            nodes,
            events: d
                .events
                .iter_from(start)
                .map(|e| event_view(d, e))
                .collect(),
            pruned: crate::families::retention::is_pruned(d),
            analysis: d.analysis.clone(),
        };
        let info = PageInfo {
            offset: page.offset,
            limit: page.limit,
            matched,
            total: d.nodes.len() as u32,
            events_total: d.events.len() as u32,
        };
        Some((view, info))
    }
}

#[cfg(test)]
#[path = "summary_test.rs"]
mod tests;
