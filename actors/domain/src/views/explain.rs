//! "Why is this node where it is?" (`GET /v1/deployments/{id}/nodes/{node}`): every decision the replicated
//! events record about one node of a deployment — its own events, and the deployment's status changes that
//! held it or moved it — each with its reason in words.

use crate::deployment::reasons::Wait;
use crate::deployment::{Deployment, Event, EventKind, NodePhase};
use crate::state::ClusterState;
use crate::values::ids::{Actor, DeploymentId, Timestamp};
use crate::values::status::Status;
use crate::views::EventView;
use serde::{Deserialize, Serialize};

/// One decision about the node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Decision {
    /// When (leader-stamped ms).
    pub at: Timestamp,
    /// The event as `GET /v1/deployments/{id}` shows it.
    pub event: EventView,
    /// The decision in words: `admitted to the install window`, `failed attempt 2: exit 3`, ...
    pub why: String,
}

/// `GET /v1/deployments/{id}/nodes/{node}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NodeHistory {
    /// The deployment asked about.
    pub deployment: DeploymentId,
    /// The node asked about, by id.
    pub node: String,
    /// Its ordinal in the consumer.
    pub ordinal: u32,
    /// Its position in the deployment's order (0-based).
    pub position: u32,
    /// The version it ran before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_version: Option<u64>,
    /// The deployment's version.
    pub version: u64,
    /// Its state now.
    pub state: NodePhase,
    /// Failed attempts so far.
    pub failures: u32,
    /// Every decision, oldest first.
    pub decisions: Vec<Decision>,
    /// Where it stands now, in words.
    pub now: String,
    /// The deployment's metric analysis (verdict, counts, last measurements), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<crate::analysis::run::AnalysisRun>,
}

fn node_why(kind: EventKind, failures_so_far: u32, message: Option<&str>) -> String {
    let with = |what: &str| match message {
        Some(m) => format!("{what}: {m}"),
        None => what.to_string(),
    };
    match kind {
        EventKind::Download => "admitted to the download window: may fetch the version".into(),
        EventKind::Install => "admitted to the install window: may install the version".into(),
        EventKind::Watch => "installed and healthy: watching it for min_healthy".into(),
        EventKind::Succeeded => "succeeded: stayed healthy for min_healthy".into(),
        EventKind::Retry => with(&format!(
            "failed attempt {failures_so_far}, retries left: it may try again"
        )),
        EventKind::Failed => with(&format!("failed after {failures_so_far} attempt(s)")),
        EventKind::Skipped => with("skipped"),
        EventKind::Rollback => with("re-targeted at its from-version (rollback)"),
        EventKind::RolledBack => with("back on its from-version"),
        EventKind::Retracted => with("its version was retracted"),
        EventKind::Pruned => with("its node detail was pruned by retention"),
        EventKind::Recalled => with("install permission taken back by a hard pause"),
        EventKind::Held
        | EventKind::NotHeld
        | EventKind::Released
        | EventKind::Bake
        | EventKind::Status
        | EventKind::Analysis => with("recorded"),
    }
}

fn status_why(e: &Event) -> String {
    let status = e.status.map(screaming).unwrap_or_default();
    let by = match &e.by {
        Actor::Timer => "the pulse timer".to_string(),
        other => other.name().to_string(),
    };
    let what = match e.status {
        Some(Status::RollForwardAwaitingPulse | Status::RollBackAwaitingPulse) => {
            "held: the deployment awaits a pulse".to_string()
        }
        Some(Status::RollForwardPaused | Status::RollBackPaused) => "held: paused".to_string(),
        Some(Status::RollingBack) => "the deployment rolls back".to_string(),
        Some(s) if s.is_terminal() => format!("the deployment ended {}", screaming(s)),
        Some(_) => "the deployment moves".to_string(),
        None => status,
    };
    match &e.message {
        Some(m) => format!("{what} (by {by}: {m})"),
        None => format!("{what} (by {by})"),
    }
}

/// `ROLLED_FORWARD` etc. as the API writes it.
fn screaming(s: Status) -> String {
    s.as_str().to_string()
}

/// Why the deployment holds its nodes, every reason of its waits named with its owner (DEPLOYMENTS.md §6): " (held:
/// paused by ops, a confirmation gate)"; empty while it moves.
fn held_words(d: &Deployment) -> String {
    let words: Vec<String> = d
        .waits()
        .iter()
        .map(|w| match w {
            Wait::User => match d.waits().person() {
                Some(by) => format!("paused by {by}, until a person resumes it"),
                None => "paused by a person, until a person resumes it".into(),
            },
            Wait::Confirm => "a confirmation gate, until it is confirmed".into(),
            Wait::Analysis => "its analysis paused it, until a resume".into(),
            Wait::Auto => "the batch autopause, until a resume".into(),
            Wait::Window => format!(
                "maintenance window {}, until one lets it go on by itself",
                d.waits().windows().unwrap_or("?")
            ),
            Wait::Pulse => "awaiting a pulse".into(),
            Wait::Budget => "a disruption budget spent by other deployments".into(),
            Wait::FleetLimit => "a fleet-wide limit reached by other deployments".into(),
            Wait::StartJitter => "its start jitter".into(),
        })
        .collect();
    if words.is_empty() {
        String::new()
    } else {
        format!(" (held: {})", words.join("; "))
    }
}

fn now_words(d: &Deployment, phase: NodePhase) -> String {
    let held = held_words(d);
    let waiting = match phase {
        NodePhase::Pending => "pending: waiting for a slot in the windows or its batch",
        NodePhase::Downloading => "downloading: may fetch, waiting for an install slot",
        NodePhase::Downloaded => "downloaded: waiting for an install slot",
        NodePhase::Installing => "installing: waiting for its report of a healthy install",
        NodePhase::Watching => "watching: healthy, waiting out min_healthy",
        NodePhase::Succeeded => "succeeded",
        NodePhase::Failed => "failed",
        NodePhase::Skipped => "skipped",
        NodePhase::RollingBack => "rolling back: waiting for its report of the from-version",
        NodePhase::RolledBack => "rolled back",
        NodePhase::TimedOut => "timed out: not done at the completion timeout, left where it was",
    };
    let finished = matches!(
        phase,
        NodePhase::Succeeded
            | NodePhase::Failed
            | NodePhase::Skipped
            | NodePhase::RolledBack
            | NodePhase::TimedOut
    );
    if d.status.is_terminal() || finished {
        format!("{waiting}; the deployment is {}", screaming(d.status))
    } else {
        format!("{waiting}{held}")
    }
}

impl ClusterState {
    /// Every decision about `node` in deployment `id`; `None` if either is unknown.
    pub fn node_history(&self, id: DeploymentId, node: &str) -> Option<NodeHistory> {
        let d = self.deployment_map().get(&id)?;
        let indexed = self
            .node_table()
            .get(node)
            .and_then(|ns| ns.deployments.get(&id).copied());
        let position = indexed.or_else(|| {
            // A finished deployment no longer indexes its nodes: find it by scanning.
            d.nodes.iter().position(|n| n.id == node).map(|p| p as u32)
        })?;
        let n = d.nodes.get(position as usize).filter(|n| n.id == node)?;
        let mut failures = 0;
        let mut decisions = Vec::new();
        for e in &d.events {
            let why = match (e.kind, e.node) {
                (EventKind::Status, None) => status_why(e),
                (
                    EventKind::Held | EventKind::NotHeld | EventKind::Released | EventKind::Bake,
                    None,
                ) => continue,
                (EventKind::Analysis, None) => e.message.clone().unwrap_or_default(),
                (kind, Some(p)) if p == position => {
                    if matches!(kind, EventKind::Retry | EventKind::Failed) {
                        failures += 1;
                    }
                    node_why(kind, failures.max(1), e.message.as_deref())
                }
                _ => continue,
            };
            decisions.push(Decision {
                at: e.at,
                event: crate::views::event_view(d, e),
                why,
            });
        }
        Some(NodeHistory {
            deployment: id,
            node: node.to_string(),
            ordinal: n.ordinal,
            position,
            from_version: n.from_version,
            version: d.version,
            state: n.phase,
            failures: n.failures,
            decisions,
            now: match self
                .budget_hold(d, node)
                .or_else(|| self.limit_hold(d, node))
            {
                Some(why) => format!("{} ({why})", now_words(d, n.phase)),
                None => now_words(d, n.phase),
            },
            analysis: d.analysis.clone(),
        })
    }
}

#[cfg(test)]
#[path = "explain_test.rs"]
mod tests;
