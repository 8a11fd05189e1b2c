//! What a command that starts or ends deployments partway settles as it goes: the per-apply context
//! ([`Cx`]) and ending a deployment ([`Ending::touch`]). The families that may end or start a deployment
//! mid-command (`reports`, `starts`, `group`) and `ClusterState::apply` share them.

use crate::deployment::progress::HandlerGate;
use crate::deployment::{Deployment, NodePhase};
use crate::entities::model::Consumer;
use crate::entities::nodes::NodeTable;
use crate::families::brakes::Failure;
use crate::families::subscriptions::Holds;
use crate::values::ids::{DeploymentId, Timestamp};
use crate::values::outcome::Outcome;
use crate::values::status::Status;
use convoy_collections::CowMap;
use std::collections::BTreeSet;

/// Per-apply context: the timestamp, the follow-ups (ended deployments, reconciliation) to settle,
/// and what the leader's actors must hear of (`outcome`, completed from `touched` at the end).
pub(crate) struct Cx {
    /// The leader-stamped time of the command.
    pub at: Timestamp,
    /// Deployments that became terminal, whose group deployment `apply` drives next.
    pub ended: Vec<DeploymentId>,
    /// Whether a selection may have changed (then `apply` reconciles strong subscriptions).
    pub reconcile: bool,
    /// Deployments changed by this apply (their deadline goes into the outcome once settled).
    pub touched: BTreeSet<DeploymentId>,
    /// What the leader's actors must hear of.
    pub outcome: Outcome,
    /// Whether the handlers admit installs themselves (`Open`) or leave them to the policies' pass at the
    /// end of the apply (`Deferred`: a budget or a window is defined).
    pub hold: HandlerGate,
    /// Versions node reports showed failed for the first time, for the weak subscriptions' brakes.
    pub failed: Vec<Failure>,
}

impl Cx {
    /// A context at `at` with nothing to settle yet.
    pub(crate) fn new(at: Timestamp) -> Cx {
        Cx {
            at,
            ended: Vec::new(),
            reconcile: false,
            touched: BTreeSet::new(),
            outcome: Outcome::default(),
            hold: HandlerGate::Open,
            failed: Vec::new(),
        }
    }
}

/// Settling a changed deployment over the maps that register it: the deployments, the active set, the
/// node table (which deployments each node is in) and the consumers (their active deployment per resource,
/// their holds).
pub(crate) struct Ending<'a> {
    /// The deployments; a rolled-back one records the hold it puts.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
    /// The active deployments; an ended one leaves it.
    pub active: &'a mut BTreeSet<DeploymentId>,
    /// The nodes; an ended deployment's nodes leave it.
    pub nodes: &'a mut NodeTable,
    /// The consumers; an ended deployment is no longer their active one, and may set or hold a version.
    pub consumers: &'a mut CowMap<String, Consumer>,
}

impl Ending<'_> {
    /// Forgets what the nodes of deployment `id`'s consumer reached of its resource (`reached.rs`): it
    /// rolls back, or rolled back.
    fn revoke_reached(&mut self, id: DeploymentId) {
        let Some(d) = self.deployments.get(&id) else {
            return;
        };
        let sub = self
            .consumers
            .get_mut(&d.consumer)
            .and_then(|c| c.subscriptions.get_mut(&d.resource));
        if let Some(sub) = sub.filter(|s| s.reached.is_some()) {
            sub.reached = None;
        }
    }

    /// Notes deployment `id` as changed; when it became terminal, unregisters it, holds back its version if
    /// it rolled back, and queues its follow-ups (`cx.ended`, the outcome).
    pub(crate) fn touch(&mut self, id: DeploymentId, cx: &mut Cx) {
        let Some(d) = self.deployments.get(&id) else {
            return;
        };
        cx.touched.insert(id);
        let status = d.status;
        if status.is_active() && !status.is_forward() {
            // It rolls back: a dependency on its resource that its nodes reached is revoked (reached.rs).
            self.revoke_reached(id);
        }
        if status.is_active() || !self.active.remove(&id) {
            return;
        }
        if status == Status::RolledBack {
            self.revoke_reached(id);
        }
        let Some(d) = self.deployments.get(&id) else {
            return;
        };
        self.nodes
            .leave_deployment(id, d.nodes.iter().map(|n| n.id.as_str()));
        if let Some(c) = self.consumers.get_mut(&d.consumer) {
            if c.active.get(&d.resource) == Some(&id) {
                c.active.remove(&d.resource);
            }
            if d.status == Status::RolledForward && d.full {
                if let Some(sub) = c.subscriptions.get_mut(&d.resource) {
                    sub.version = Some(d.version);
                }
            }
            // A deployment by hand on a weak subscription: the nodes it moved keep what it left them on.
            let kept = c
                .subscriptions
                .get_mut(&d.resource)
                .and_then(|sub| sub.kept.as_mut())
                .filter(|k| k.deployment == id);
            if let Some(k) = kept {
                k.nodes = d
                    .nodes
                    .iter()
                    .filter(|n| !matches!(n.phase, NodePhase::Pending | NodePhase::Skipped))
                    .map(|n| n.id.clone())
                    .collect();
            }
        }
        Holds {
            consumers: self.consumers,
            deployments: self.deployments,
        }
        .hold_rolled_back(id, cx.at);
        cx.ended.push(id);
        cx.outcome.deployment_ended(id);
    }
}

#[cfg(test)]
#[path = "settle_test.rs"]
mod tests;
