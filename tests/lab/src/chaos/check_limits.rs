//! The fleet-wide limit checker of a chaos run (issue 24 §3): from every deployment's final events
//! (leader-stamped, so one clock for all), no more nodes install at once across every deployment than the
//! `max_concurrent_installs` the workload sets. A node installs from its `install` event until it succeeds,
//! fails, is skipped, recalled or rolled back, or its deployment ends; a retry goes on installing.
//! Rollbacks are repairs, admitted past the limit, so a node rolling back is not counted.

use convoy_actors::domain::{DeploymentView, EventKind};

use super::check::Violation;

/// The fleet-wide `max_concurrent_installs` the workload sets (`PUT /v1/cluster/limits`).
pub const FLEET_INSTALLS: u32 = 4;

/// Whether a node event ends the node's forward install.
fn ends_install(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::Succeeded
            | EventKind::Failed
            | EventKind::Skipped
            | EventKind::Recalled
            | EventKind::Rollback
            | EventKind::RolledBack
    )
}

/// Each deployment's forward install spans `(start, end)` in leader time (`u64::MAX`: still installing).
fn install_spans(view: &DeploymentView) -> Vec<(u64, u64)> {
    let mut open: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    let mut spans = Vec::new();
    for e in &view.events {
        match (e.node.as_deref(), e.action, e.status) {
            (Some(node), Some(EventKind::Install), _) => {
                open.entry(node).or_insert(e.at);
            }
            (Some(node), Some(kind), _) if ends_install(kind) => {
                if let Some(start) = open.remove(node) {
                    spans.push((start, e.at));
                }
            }
            (None, _, Some(status)) if status.is_terminal() => {
                spans.extend(open.values().map(|start| (*start, e.at)));
                open.clear();
            }
            _ => {}
        }
    }
    spans.extend(open.values().map(|start| (*start, u64::MAX)));
    spans
}

/// Never more than `limit` nodes installing at once over `finals` (the final views of the deployments the
/// run started: the fleet's and the group steps; a view listed twice counts once): the first instant it
/// is exceeded, with the count. Deployments it does not read (the `multi` operator's, automatic ones)
/// make the count lower, never higher, so what it finds is a real excess.
pub fn fleet_installs(finals: &[DeploymentView], limit: u32) -> Vec<Violation> {
    let mut seen = std::collections::BTreeSet::new();
    let mut edges: Vec<(u64, i64)> = finals
        .iter()
        .filter(|v| !v.pruned && seen.insert(v.id))
        .flat_map(install_spans)
        .flat_map(|(start, end)| [(start, 1), (end, -1)])
        .collect();
    // At equal instants the end sorts first: a slot freed and taken at one time is one install.
    edges.sort();
    let mut now = 0i64;
    for (at, d) in edges {
        now += d;
        if now > i64::from(limit) {
            return vec![Violation {
                rule: "fleet-limit",
                detail: format!(
                    "{now} nodes installing at {at} across every deployment, max_concurrent_installs is {limit}"
                ),
            }];
        }
    }
    Vec::new()
}

#[cfg(test)]
#[path = "check_limits_test.rs"]
mod tests;
