//! What each node may do now (`targets`), for weak subscriptions, strong ones, and nodes inside a deployment.

use crate::deployment::{Deployment, NodePhase};
use crate::entities::model::{Mode, NodeState, Subscription};
use crate::policy::weak::{WeakGate, WeakWait};
use crate::state::ClusterState;
use crate::values::status::Status;
use crate::views::Target;
use std::collections::BTreeMap;

impl ClusterState {
    /// Per resource, the version a node should have and whether it may download or install it now.
    ///
    /// - inside an active deployment: by its state there (download window → `download`, install window or
    ///   rollback window → `install`; anything else holds still at the deployment's or its from-version);
    /// - weak subscription: the selected version, download and install at once, unless a maintenance
    ///   window holds it (`policy/weak.rs`: then it keeps what it runs);
    /// - strong subscription, no deployment: stay on the current version (a node that has none, or is behind the
    ///   version the consumer converged on, gets it through a follow-up deployment). Nodes never move outside a
    ///   deployment.
    ///
    /// A node in several consumers subscribed to one resource follows the first (by name), unless another has a
    /// deployment containing it; whichever it follows, a version held back on any of its consumers is never
    /// selected for it (the strictest wins, DEPLOYMENTS.md §10). A resource the node holds and must remove (`NodeState::removing`: it left the
    /// consumer, the subscription or the consumer was deleted) or is no longer interested in gets an `uninstall`
    /// target; so does a node that a rollback returns to "no version".
    pub fn targets(&self, node_id: &str) -> BTreeMap<String, Target> {
        let mut out = BTreeMap::new();
        let Some(ns) = self.node_table().get(node_id) else {
            return out;
        };
        for (id, p) in &ns.deployments {
            if let Some(d) = self.deployment_map().get(id) {
                if let Some(t) = deployment_target(d, *p as usize, ns) {
                    out.insert(d.resource.clone(), t);
                }
            }
        }
        for (cname, c) in self.selection().membership().subscribers_of(ns) {
            for (r, sub) in &c.subscriptions {
                if out.contains_key(r) || !ns.interested(r) {
                    continue;
                }
                let t = match sub.mode {
                    // Held by a maintenance window (policy/weak.rs), moving only with a slot under a budget or
                    // a fleet limit (policy/weak_slots.rs).
                    Mode::Weak => self.slot_gated(
                        cname,
                        r,
                        node_id,
                        ns,
                        self.weak_move(cname, r, sub, node_id, ns),
                    ),
                    // Outside a deployment a node stays where it is; one behind the converged
                    // version (or holding none) gets it through a follow-up deployment
                    // (reconverge.rs), never on its own.
                    Mode::Strong => ns.current(r).map(|v| Target {
                        version: v,
                        download: false,
                        install: false,
                        uninstall: false,
                    }),
                };
                if let Some(t) = t {
                    out.insert(r.clone(), t);
                }
            }
        }
        // What it holds and lost interest in, or must remove (it left the consumer, the subscription went):
        // remove it, unless a consumer of it still targets it.
        for (r, _) in &ns.resources {
            if out.contains_key(r) || (ns.interested(r) && !ns.removing.contains(r)) {
                continue;
            }
            if let Some(v) = ns.installed(r) {
                out.insert(r.clone(), Target::uninstall(v));
            }
        }
        out
    }
}

impl ClusterState {
    /// A weak subscription's target as the windows let it (what it would do with a slot).
    pub(crate) fn weak_move(
        &self,
        cname: &str,
        r: &str,
        sub: &Subscription,
        node_id: &str,
        ns: &NodeState,
    ) -> Option<Target> {
        let t = weak_gated(
            self.weak_gate(),
            cname,
            r,
            ns,
            self.weak_target(cname, r, sub, node_id, ns),
        )?;
        // Start jitter spreads the moves forward (policy/weak_jitter.rs); a move back is never jittered.
        let current = ns.current(r);
        let forward = t.install && !t.uninstall && current.is_none_or(|c| c < t.version);
        if forward && self.jitter_holds(cname, r, sub, node_id, t.version) {
            return current.map(Target::stay);
        }
        Some(t)
    }

    /// `target` as the weak subscriptions' slots let it: a node that would install a version it does not run
    /// keeps what it runs unless it holds a slot for that version (`policy/weak_slots.rs`).
    fn slot_gated(
        &self,
        cname: &str,
        r: &str,
        node_id: &str,
        ns: &NodeState,
        target: Option<Target>,
    ) -> Option<Target> {
        let t = target?;
        let current = ns.current(r);
        let moves = t.install && !t.uninstall && current != Some(t.version);
        if !moves
            || !self.weak_slotted(cname)
            || self.weak_slots().grant(node_id, r) == Some(t.version)
        {
            return Some(t);
        }
        current.map(Target::stay)
    }

    /// A weak subscription's target: the selected version, download and install at once; but a node that
    /// the last deployment by hand moved keeps what it runs while the consumer's selection is still the
    /// one that deployment started under and what it runs is not retracted, and a node that runs healthy
    /// a version a brake holds back stays on it (DEPLOYMENTS.md §4).
    fn weak_target(
        &self,
        cname: &str,
        r: &str,
        sub: &Subscription,
        node_id: &str,
        ns: &NodeState,
    ) -> Option<Target> {
        let selection = self.selection();
        if let (Some(kept), Some(current)) = (&sub.kept, ns.current(r)) {
            if kept.keeps(node_id, selection.selected_version(cname, r))
                && !selection.is_retracted(r, current)
            {
                return Some(Target {
                    version: current,
                    download: false,
                    install: false,
                    uninstall: false,
                });
            }
        }
        let selected = selection.selected_for_node(cname, r, ns);
        if let Some(v) = selection.frozen_by_brake(cname, r, ns, selected) {
            // The brake freezes its version: a node that runs it healthy stays (DEPLOYMENTS.md §4).
            return Some(Target {
                version: v,
                download: false,
                install: false,
                uninstall: false,
            });
        }
        selected.map(|v| Target {
            version: v,
            download: true,
            install: true,
            uninstall: false,
        })
    }
}

fn deployment_target(d: &Deployment, p: usize, ns: &NodeState) -> Option<Target> {
    let node = d.nodes.get(p)?;
    let hold = |v: u64| {
        Some(Target {
            version: v,
            download: false,
            install: false,
            uninstall: false,
        })
    };
    let forward = d.status.is_forward();
    let back = matches!(
        d.status,
        Status::RollingBack | Status::RollBackPaused | Status::RollBackAwaitingPulse
    );
    match node.phase {
        NodePhase::Downloading | NodePhase::Downloaded if forward => Some(Target {
            version: d.version,
            download: true,
            install: false,
            uninstall: false,
        }),
        NodePhase::Installing | NodePhase::Watching if forward => Some(Target {
            version: d.version,
            download: false,
            install: true,
            uninstall: false,
        }),
        // No version to restore: the rollback removes the resource.
        NodePhase::RollingBack if back && node.from_version.is_none() => {
            Some(Target::uninstall(d.version))
        }
        NodePhase::RollingBack if back => node.from_version.map(|v| Target {
            version: v,
            download: false,
            install: true,
            uninstall: false,
        }),
        NodePhase::Succeeded | NodePhase::Installing | NodePhase::Watching | NodePhase::Failed => {
            hold(d.version)
        }
        NodePhase::RolledBack if node.from_version.is_none() => ns
            .installed(&d.resource)
            .map(Target::uninstall)
            .or_else(|| hold(d.version)),
        NodePhase::RolledBack | NodePhase::RollingBack => {
            node.from_version.map_or_else(|| hold(d.version), hold)
        }
        NodePhase::Pending
        | NodePhase::Downloading
        | NodePhase::Downloaded
        | NodePhase::Skipped
        | NodePhase::TimedOut => {
            let _ = ns;
            node.from_version.map_or_else(|| hold(d.version), hold)
        }
    }
}

/// The weak target `target` of node `ns` for `resource` as a node of `consumer`, held as the windows say
/// (`policy/weak.rs`).
fn weak_gated(
    gate: &WeakGate,
    consumer: &str,
    resource: &str,
    ns: &NodeState,
    target: Option<Target>,
) -> Option<Target> {
    match gate.wait(consumer, resource) {
        None => target,
        Some(w) => held_target(w, ns, resource, target),
    }
}

/// What node `ns` may do of `resource` while `wait` holds its weak subscription, `target` being what it
/// would do otherwise.
pub fn held_target(
    wait: &WeakWait,
    ns: &NodeState,
    resource: &str,
    target: Option<Target>,
) -> Option<Target> {
    let t = target?;
    let current = ns.current(resource);
    let in_flight = ns
        .resources
        .get(resource)
        .and_then(|r| r.versions.get(&t.version))
        .is_some_and(|p| !p.done);
    let back = current.is_some_and(|c| t.version < c) && wait.rollback;
    if t.uninstall || !(t.download || t.install) || current == Some(t.version) || in_flight || back
    {
        return Some(t);
    }
    current.map(|v| Target {
        version: v,
        download: false,
        install: false,
        uninstall: false,
    })
}

#[cfg(test)]
#[path = "targets_test.rs"]
mod tests;
