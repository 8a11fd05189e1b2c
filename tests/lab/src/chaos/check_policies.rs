//! The policies' checkers over one server's state (issue 35 §3, §4, §6): a version held back by a rollback has
//! evidence against it; a pin selects its version unless it is retracted; a weak node is told to install a version
//! it does not run, while its consumer has a budget or a fleet-wide limit is set, only when it holds a slot for
//! that version: what a node is told (`views/targets.rs`) and the slots the apply granted
//! (`state/weak_pass.rs`) never disagree. (How many slots a budget's nodes hold is not checked from one
//! state: a budget set while a deployment or a limit had more nodes out is legitimately over-full.) A rollback
//! revokes a dependency at once (issue 36 §6): no selection needs a version of a resource whose deployment on
//! its holder rolls back. (That a stale node coming back never revokes one is a rule over time, of two states
//! and the commands between them, which no checker of one state can see: the domain's and the e2e tests
//! check it.)

use convoy_actors::domain::analysis::run::Verdict;
use convoy_actors::domain::{
    weak_jitter_offset, ClusterState, ConsumerView, DeploymentId, GroupView, Mode, ResourceView,
    Status,
};

use super::check::Violation;

/// The weak moves of `c`'s weak subscriptions outside a deployment: per node told to install a version it
/// does not run, the resource, the node, the version and what it runs.
fn weak_moves<'a>(
    state: &'a ClusterState,
    c: &'a ConsumerView,
) -> impl Iterator<Item = (&'a str, &'a str, u64, Option<u64>)> + 'a {
    c.subscriptions
        .iter()
        .filter(|(_, sub)| sub.mode == Mode::Weak)
        .flat_map(move |(r, _)| {
            c.nodes.iter().filter_map(move |id| {
                let node = state.node(id)?;
                let t = node.targets.get(r)?;
                let current = node.resources.get(r).and_then(|e| e.current);
                let moves = t.install && !t.uninstall && current != Some(t.version);
                let deployed = node
                    .deployments
                    .iter()
                    .any(|d| state.deployment(*d).is_some_and(|v| v.resource == *r));
                (moves && !deployed).then_some((r.as_str(), id.as_str(), t.version, current))
            })
        })
}

/// Every weak move under a budget or a limit holds a slot.
pub fn weak_moves_hold_slots(state: &ClusterState) -> Vec<Violation> {
    let limits = !state.fleet_limits().is_off();
    let mut out = Vec::new();
    for c in state.consumers() {
        if c.budget.is_none() && !limits {
            continue;
        }
        for (r, id, version, _) in weak_moves(state, &c) {
            if state.weak_slots().grant(id, r) != Some(version) {
                out.push(Violation {
                    rule: "weak-move-without-slot",
                    detail: format!(
                        "{id} is told to install {r} {version} under {}'s policies with no slot",
                        c.name
                    ),
                });
            }
        }
    }
    out
}

/// A weak node is told to move forward to the version its subscription's start jitter spreads only once the
/// spread was judged at or after the node's own time (`policy/weak_jitter.rs`).
pub fn weak_moves_wait_their_jitter(state: &ClusterState) -> Vec<Violation> {
    let mut out = Vec::new();
    for c in state.consumers() {
        for (r, id, version, current) in weak_moves(state, &c) {
            let (Some(jitter), Some(spread)) = (
                c.subscriptions.get(r).and_then(|s| s.start_jitter_ms),
                state.weak_jitter().spread(&c.name, r),
            ) else {
                continue;
            };
            let forward = version == spread.version && current.is_none_or(|v| v < version);
            let time = spread.since + weak_jitter_offset(&c.name, r, version, id, jitter);
            if forward && time > spread.judged {
                out.push(Violation {
                    rule: "weak-move-before-its-jitter",
                    detail: format!(
                        "{id} is told to install {r} {version} at {}, its time under {}'s start jitter is {time}",
                        spread.judged, c.name
                    ),
                });
            }
        }
    }
    out
}

/// A version is held back by a rollback only on evidence (DEPLOYMENTS.md §10): the deployment that rolled it
/// back had a node fail it past its retries, or its analysis failed it. (A deployment pruned by retention is
/// not judged.)
pub fn holds_have_evidence(state: &ClusterState) -> Vec<Violation> {
    let summaries: std::collections::BTreeMap<_, _> = state
        .deployments(&Default::default())
        .into_iter()
        .map(|d| (d.id, d.failed))
        .collect();
    let mut out = Vec::new();
    for c in state.consumers() {
        for h in c.holds.iter().filter(|h| h.by == "rollback") {
            let Some(id) = h.deployment else {
                continue;
            };
            let Some(failed) = summaries.get(&id) else {
                continue;
            };
            let analysis_failed = state
                .deployment(id)
                .and_then(|v| v.analysis)
                .is_some_and(|a| a.verdict == Verdict::Failed);
            if *failed == 0 && !analysis_failed {
                out.push(Violation {
                    rule: "hold-without-evidence",
                    detail: format!(
                        "{}: {} {} held by {id}, in which no node and no analysis failed it",
                        c.name, h.resource, h.version
                    ),
                });
            }
        }
    }
    out
}

/// A pin selects its version unless that version is retracted (a pin beats every automatic hold,
/// DEPLOYMENTS.md §3).
pub fn pins_select_their_version(state: &ClusterState) -> Vec<Violation> {
    let mut out = Vec::new();
    for c in state.consumers() {
        for (r, sub) in &c.subscriptions {
            let Some(pin) = sub.pin else {
                continue;
            };
            let Some(res) = state.resource(r) else {
                continue;
            };
            let standing = res
                .versions
                .iter()
                .any(|v| v.version == pin && v.retracted.is_none());
            if standing && sub.selected != Some(pin) {
                out.push(Violation {
                    rule: "pin-selects",
                    detail: format!(
                        "{}: {r} pinned to {pin} (not retracted) selects {:?}",
                        c.name, sub.selected
                    ),
                });
            }
        }
    }
    out
}

/// No selection needs a version of a resource whose deployment on the consumer that holds it rolls back
/// (unless that consumer converged on the version): a rollback revokes a dependency at once (DEPLOYMENTS.md §3).
pub fn rollbacks_revoke_dependencies(state: &ClusterState) -> Vec<Violation> {
    let status = |id: DeploymentId| state.deployment(id).map(|d| d.status);
    dependencies_through_rollbacks(
        &state.consumers(),
        &state.resources(),
        &state.groups(),
        status,
    )
}

/// [`rollbacks_revoke_dependencies`] over the views it reads; `status` answers a deployment's status.
pub fn dependencies_through_rollbacks(
    consumers: &[ConsumerView],
    resources: &[ResourceView],
    groups: &[GroupView],
    status: impl Fn(DeploymentId) -> Option<Status>,
) -> Vec<Violation> {
    let holder = |consumer: &str, resource: &str, dep: &str| -> String {
        groups
            .iter()
            .filter(|g| {
                g.members
                    .iter()
                    .any(|m| m.consumer == consumer && m.resource == resource)
            })
            .find_map(|g| g.members.iter().find(|m| m.resource == dep))
            .map_or_else(|| consumer.to_string(), |m| m.consumer.clone())
    };
    let mut out = Vec::new();
    for c in consumers {
        for (r, sub) in &c.subscriptions {
            let Some(selected) = sub.selected.filter(|v| sub.pin != Some(*v)) else {
                continue;
            };
            let Some(version) = resources
                .iter()
                .find(|x| x.name == *r)
                .and_then(|x| x.versions.iter().find(|v| v.version == selected))
            else {
                continue;
            };
            for dep in &version.depends_on {
                let h = holder(&c.name, r, &dep.resource);
                let Some(hs) = consumers
                    .iter()
                    .find(|x| x.name == h)
                    .and_then(|x| x.subscriptions.get(&dep.resource))
                else {
                    continue;
                };
                let Some(id) = hs.deployment else {
                    continue;
                };
                let back = status(id).is_some_and(|s| s.is_active() && !s.is_forward());
                if back && hs.version.is_none_or(|v| v < dep.version) {
                    out.push(Violation {
                        rule: "dependency-through-a-rollback",
                        detail: format!(
                            "{}: {r} selects {selected}, which needs {} {} on {h}, while {id} rolls it back there",
                            c.name, dep.resource, dep.version
                        ),
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "check_policies_test.rs"]
mod tests;
