//! Retention: the leader's `Prune { keep }` drops the per-node detail — the node list, node events
//! and progress bookkeeping — of the oldest terminal deployments beyond the newest `keep`, and keeps
//! their summary (status, counters, settings, times, status events). A pruned deployment is marked
//! by one `Pruned` event, which `GET /v1/deployments/{id}` shows as `"pruned": true`.
//!
//! Terminal deployments have left the node table already (`ClusterState::touch`), so nothing points
//! into the dropped lists. "Oldest" is by the time it ended, then by id; the command carries the
//! limit, so every replica prunes the same deployments.
//!
//! [`Retention`] is the family's handler: it borrows the deployments only, and reports how many it pruned.

use crate::deployment::{Deployment, Event, EventKind};
use crate::values::ids::{Actor, DeploymentId, Timestamp};
use convoy_collections::ChunkedVec;
use convoy_collections::CowMap;

/// Whether `d` was pruned.
pub fn is_pruned(d: &Deployment) -> bool {
    d.events.iter().any(|e| e.kind == EventKind::Pruned)
}

/// `Prune`, over the deployments (the only map it changes).
pub(crate) struct Retention<'a> {
    /// Every deployment; only terminal ones are stripped.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
}

impl Retention<'_> {
    /// Applies `Prune { keep }` at `at`; answers how many deployments it pruned.
    pub(crate) fn prune(&mut self, keep: u32, at: Timestamp) -> u32 {
        let mut terminal: Vec<(Timestamp, DeploymentId)> = self
            .deployments
            .values()
            .filter(|d| d.status.is_terminal())
            .map(|d| (d.ended_at.unwrap_or(d.created_at), d.id))
            .collect();
        terminal.sort_unstable();
        let beyond = terminal.len().saturating_sub(keep as usize);
        let mut pruned = 0u32;
        for (_, id) in &terminal[..beyond] {
            // Looked at before it is borrowed mutably: `get_mut` copies a deployment a snapshot
            // shares, and most of those beyond the limit were pruned by an earlier `Prune`.
            if self.deployments.get(id).is_none_or(is_pruned) {
                continue;
            }
            if let Some(d) = self.deployments.get_mut(id) {
                strip(d, at, keep);
                pruned += 1;
            }
        }
        pruned
    }
}

/// Drops `d`'s per-node detail and marks it pruned.
fn strip(d: &mut Deployment, at: Timestamp, keep: u32) {
    d.nodes = ChunkedVec::new();
    d.events.retain(|e| e.node.is_none());
    d.touched = Vec::new();
    d.batches = Vec::new();
    d.watches.clear();
    d.events.push(Event {
        at,
        kind: EventKind::Pruned,
        status: None,
        node: None,
        by: Actor::System,
        message: Some(format!(
            "node list and node events dropped: deployment_history keeps {keep} finished deployments"
        )),
    });
}

#[cfg(test)]
#[path = "retention_test.rs"]
mod tests;
