//! The policies' checkers over one server's state (issue 35 §3, §4, §6): a version held back by a rollback has
//! evidence against it; a pin selects its version unless it is retracted; a weak node is told to install a version
//! it does not run, while its consumer has a budget or a fleet-wide limit is set, only when it holds a slot for
//! that version: what a node is told (`views/targets.rs`) and the slots the apply granted
//! (`state/weak_pass.rs`) never disagree. (How many slots a budget's nodes hold is not checked from one
//! state: a budget set while a deployment or a limit had more nodes out is legitimately over-full.)

use convoy_actors::domain::analysis::run::Verdict;
use convoy_actors::domain::{weak_jitter_offset, ClusterState, ConsumerView, Mode};

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
