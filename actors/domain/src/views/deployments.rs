//! The deployment views: a deployment with its nodes and events, the list of deployments and its filter.

use crate::deployment::{Deployment, EventKind, NodePhase};
use crate::state::ClusterState;
use crate::values::ids::{Actor, DeploymentId, Timestamp};
use crate::values::status::{PausedBy, Status};
use crate::values::strategy::Settings;
use serde::{Deserialize, Serialize};

/// A node of a deployment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeploymentNodeView {
    /// The node's id.
    pub id: String,
    /// Its position in the consumer's node list when the deployment was created.
    pub ordinal: u32,
    /// The version it ran when the deployment was created: what a rollback restores (absent: uninstall).
    pub from_version: Option<u64>,
    /// Where it is in the deployment (`pending` ... `rolled_back`).
    pub state: NodePhase,
    /// Failed attempts counted so far (retries used, plus the final failure).
    pub failures: u32,
}

/// An event of a deployment, as the API shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EventView {
    /// When it happened (leader-stamped ms).
    pub at: Timestamp,
    /// The status entered, on status events (and on creation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// The node's id, on node events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// What happened to the node, on node events (`install`, `failed`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<EventKind>,
    /// Who caused it: a token's name, `user`, `pulse`, `timer` or `system`.
    pub by: Actor,
    /// Why, in words: the user's message, a failure's error, a rule that fired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `GET /v1/deployments/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeploymentView {
    /// The deployment's id (`d-N`).
    pub id: DeploymentId,
    /// The consumer whose nodes it deploys to.
    pub consumer: String,
    /// The resource it deploys.
    pub resource: String,
    /// The version it deploys.
    pub version: u64,
    /// Its status (DEPLOYMENTS.md §6).
    pub status: Status,
    /// Why it is held, while paused or awaiting a pulse: the reason of `waits` that ranks first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<PausedBy>,
    /// Every reason it waits, in rank order (DEPLOYMENTS.md §6 "Why a deployment waits"); empty while it moves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<crate::deployment::reasons::WaitView>,
    /// When the last pulse was recorded (leader-stamped ms); the countdown runs from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pulse_at: Option<Timestamp>,
    /// Its settings, fixed at creation (start → subscription → defaults).
    pub settings: Settings,
    /// Its nodes in the fixed admission order (empty once pruned).
    pub nodes: Vec<DeploymentNodeView>,
    /// Status and node events, oldest first (node events gone once pruned).
    pub events: Vec<EventView>,
    /// Retention dropped its node list and node events (shown only when true).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pruned: bool,
    /// Its metric analysis: the phase measured, the verdict and why, per metric the counts and the last 10
    /// measurements (DEPLOYMENTS.md "Analysis"); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<crate::analysis::run::AnalysisRun>,
}

/// A line of `GET /v1/deployments`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeploymentSummary {
    /// The deployment's id (`d-N`).
    pub id: DeploymentId,
    /// The consumer whose nodes it deploys to.
    pub consumer: String,
    /// The resource it deploys.
    pub resource: String,
    /// The version it deploys.
    pub version: u64,
    /// Its status (DEPLOYMENTS.md §6).
    pub status: Status,
    /// Why it is held, while paused or awaiting a pulse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<PausedBy>,
    /// Every reason it waits, in rank order; empty while it moves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<crate::deployment::reasons::WaitView>,
    /// Nodes in its node set (0 once pruned).
    pub nodes: usize,
    /// Nodes that succeeded so far.
    pub succeeded: u32,
    /// Nodes that failed for good so far (going forward).
    pub failed: u32,
    /// Nodes skipped: they became inactive, lost interest or left the consumer.
    pub skipped: u32,
}

/// Active or terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusFilter {
    /// Still able to change: rolling, paused or awaiting a pulse.
    Active,
    /// Finished for good: ROLLED_FORWARD, ROLLED_BACK, ABORTED or FAILED.
    Terminal,
}

/// `GET /v1/deployments?consumer=&resource=&status=`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeploymentFilter {
    /// Only deployments to this consumer.
    pub consumer: Option<String>,
    /// Only deployments of this resource.
    pub resource: Option<String>,
    /// Only active, or only terminal, deployments.
    pub status: Option<StatusFilter>,
}

/// An event as the API shows it: the node's id instead of its position.
pub(crate) fn event_view(d: &Deployment, e: &crate::deployment::Event) -> EventView {
    EventView {
        at: e.at,
        status: e.status,
        node: e
            .node
            .and_then(|p| d.nodes.get(p as usize).map(|n| n.id.clone())),
        action: (e.kind != EventKind::Status).then_some(e.kind),
        by: e.by.clone(),
        message: e.message.clone(),
    }
}

/// A deployment's line in the list.
pub(crate) fn summary(d: &Deployment) -> DeploymentSummary {
    DeploymentSummary {
        id: d.id,
        consumer: d.consumer.clone(),
        resource: d.resource.clone(),
        version: d.version,
        status: d.status,
        paused_by: d.paused_by(),
        waits: d.waits().view(),
        nodes: d.nodes.len(),
        succeeded: d.tally.succeeded,
        failed: d.tally.failed,
        skipped: d.tally.skipped,
    }
}

impl ClusterState {
    /// A deployment with its nodes and events.
    pub fn deployment(&self, id: DeploymentId) -> Option<DeploymentView> {
        let d = self.deployment_map().get(&id)?;
        let nodes = d
            .nodes
            .iter()
            .map(|n| DeploymentNodeView {
                id: n.id.clone(),
                ordinal: n.ordinal,
                from_version: n.from_version,
                state: n.phase,
                failures: n.failures,
            })
            .collect();
        let events = d.events.iter().map(|e| event_view(d, e)).collect();
        Some(DeploymentView {
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
            events,
            pruned: crate::families::retention::is_pruned(d),
            analysis: d.analysis.clone(),
        })
    }

    /// Deployments matching `filter`, oldest first.
    pub fn deployments(&self, filter: &DeploymentFilter) -> Vec<DeploymentSummary> {
        self.deployment_map()
            .values()
            .filter(|d| filter.consumer.as_ref().is_none_or(|c| *c == d.consumer))
            .filter(|d| filter.resource.as_ref().is_none_or(|r| *r == d.resource))
            .filter(|d| match filter.status {
                None => true,
                Some(StatusFilter::Active) => d.status.is_active(),
                Some(StatusFilter::Terminal) => d.status.is_terminal(),
            })
            .map(summary)
            .collect()
    }
}
