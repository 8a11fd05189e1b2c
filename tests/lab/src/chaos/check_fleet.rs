//! The fleet checkers of a chaos run: no node is sent a retracted or held-back version after the event
//! that banned it, and no node that keeps reporting is ever marked inactive.

use super::check::Violation;
use super::history::{Ban, LivenessRead, NodeTarget, ReportAck};

/// No target read outside a deployment moves a node to a banned version: for a retraction, on any
/// consumer, from its acknowledgement until an unretract was sent; for a hold, on every node of the
/// consumer that holds it, whichever of the node's consumers decides its target (the strictest wins,
/// DEPLOYMENTS.md §3), from the hold's time on (a hold outlives a deleted subscription, §10). Targets that keep a node on what it runs are allowed
/// (a node keeps reporting a retracted version it runs), and so are deployments' targets (a rollback
/// restores even a retracted version; `deployment_targets` checks those).
pub fn no_banned_targets(targets: &[NodeTarget], bans: &[Ban]) -> Vec<Violation> {
    let mut out = Vec::new();
    for t in targets.iter().filter(|t| t.moving) {
        let banned = bans.iter().find(|b| {
            b.resource == t.resource
                && b.version == t.version
                && b.consumer.as_ref().is_none_or(|c| t.consumers.contains(c))
                && t.start_ms > b.from_ms
                && b.until_ms.is_none_or(|until| t.start_ms < until)
        });
        if let Some(b) = banned {
            let what = match &b.consumer {
                Some(c) => format!("held back on {c}"),
                None => "retracted".to_string(),
            };
            out.push(Violation {
                rule: "banned-target",
                detail: format!(
                    "{} was sent {}@{} at {} ({what} since {})",
                    t.node, t.resource, t.version, t.start_ms, b.from_ms
                ),
            });
        }
    }
    out
}

/// How many acknowledged reports, in the `node_timeout - grace` before a read (and at least `grace`
/// before it), make a node "reporting": then the read must say active. One acknowledged report is not
/// enough (its change may be in a batch lost with a leader change; the next one carries it again).
pub const REPORTS_FOR_LIVENESS: usize = 3;

/// No linearizable read finds a reporting node inactive: a node with at least
/// [`REPORTS_FOR_LIVENESS`] acknowledged reports whose answers arrived in
/// `[start - node_timeout + grace, start - grace]` must read active at `start`. `grace` covers the
/// commit of a report's change (a reactivation) and the leader's liveness tick.
pub fn reporting_nodes_stay_active(
    reads: &[LivenessRead],
    reports: &[ReportAck],
    node_timeout_ms: u64,
    grace_ms: u64,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for r in reads.iter().filter(|r| !r.active) {
        let from = r.start_ms.saturating_sub(node_timeout_ms) + grace_ms;
        let to = r.start_ms.saturating_sub(grace_ms);
        let recent = reports
            .iter()
            .filter(|a| a.node == r.node && a.acked_ms >= from && a.acked_ms <= to)
            .count();
        if recent >= REPORTS_FOR_LIVENESS {
            out.push(Violation {
                rule: "reporting-inactive",
                detail: format!(
                    "{} read inactive at {} after {recent} acknowledged reports in {from}..{to}",
                    r.node, r.start_ms
                ),
            });
        }
    }
    out
}

#[cfg(test)]
#[path = "check_fleet_test.rs"]
mod tests;
