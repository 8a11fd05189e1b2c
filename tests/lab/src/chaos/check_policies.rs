//! The fleet policies' checkers over one server's state (issue 35 §6): a weak node is told to install a version
//! it does not run, while its consumer has a budget or a fleet-wide limit is set, only when it holds a slot for
//! that version: what a node is told (`views/targets.rs`) and the slots the apply granted
//! (`state/weak_pass.rs`) never disagree. (How many slots a budget's nodes hold is not checked from one
//! state: a budget set while a deployment or a limit had more nodes out is legitimately over-full.)

use convoy_actors::domain::{ClusterState, Mode};

use super::check::Violation;

/// Every weak move under a budget or a limit holds a slot.
pub fn weak_moves_hold_slots(state: &ClusterState) -> Vec<Violation> {
    let mut out = Vec::new();
    let limits = !state.fleet_limits().is_off();
    for c in state.consumers() {
        if c.budget.is_none() && !limits {
            continue;
        }
        for (r, sub) in &c.subscriptions {
            if sub.mode != Mode::Weak {
                continue;
            }
            for id in &c.nodes {
                let Some(node) = state.node(id) else {
                    continue;
                };
                let Some(t) = node.targets.get(r) else {
                    continue;
                };
                let current = node.resources.get(r).and_then(|e| e.current);
                let moves = t.install && !t.uninstall && current != Some(t.version);
                let deployed = node
                    .deployments
                    .iter()
                    .any(|d| state.deployment(*d).is_some_and(|v| v.resource == *r));
                if moves && !deployed && state.weak_slots().grant(id, r) != Some(t.version) {
                    out.push(Violation {
                        rule: "weak-move-without-slot",
                        detail: format!(
                            "{id} is told to install {r} {} under {}'s policies with no slot",
                            t.version, c.name
                        ),
                    });
                }
            }
        }
    }
    out
}
