//! The checkers of a chaos run, pure functions over the recorded history: no acknowledged write lost,
//! replicas byte-identical, windows never exceeded and terminal statuses never left in any observed
//! state, a consumer's disruption budget never exceeded going forward, linearizable reads, rollback in reverse order, and no coordinated progress without a pulse.

use std::collections::{BTreeMap, BTreeSet};

use convoy_actors::domain::{
    DeploymentView, EventKind, GroupDeploymentView, NodePhase, Status, Strategy,
};

use super::check_waits;
use super::history::{Acked, Observation, Pulse, TargetSample};

/// A broken rule, with enough context to find it in the logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Which checker.
    pub rule: &'static str,
    /// What it saw.
    pub detail: String,
}

fn violation(rule: &'static str, detail: String) -> Violation {
    Violation { rule, detail }
}

/// Every acknowledged write is in `resources` (name → versions) as one server finally holds it.
pub fn no_lost_writes(
    acked: &[Acked],
    server: &str,
    resources: &BTreeMap<String, BTreeSet<u64>>,
) -> Vec<Violation> {
    acked
        .iter()
        .filter_map(|a| match a {
            Acked::Resource { name, .. } if !resources.contains_key(name) => Some(violation(
                "lost-write",
                format!("server {server} lacks acknowledged resource {name}"),
            )),
            Acked::Version {
                resource, version, ..
            } if !resources.get(resource).is_some_and(|v| v.contains(version)) => Some(violation(
                "lost-write",
                format!("server {server} lacks acknowledged version {resource}@{version}"),
            )),
            _ => None,
        })
        .collect()
}

/// All servers' digests `(server, last_applied, sha256)` are equal and at one index.
pub fn replicas_identical(digests: &[(String, u64, String)]) -> Vec<Violation> {
    let distinct: BTreeSet<(u64, &str)> = digests
        .iter()
        .map(|(_, index, sha)| (*index, sha.as_str()))
        .collect();
    if distinct.len() <= 1 {
        return Vec::new();
    }
    vec![violation(
        "replicas-differ",
        format!("final states differ: {digests:?}"),
    )]
}

fn count(view: &DeploymentView, phases: &[NodePhase]) -> usize {
    view.nodes
        .iter()
        .filter(|n| phases.contains(&n.state))
        .count()
}

/// Nodes admitted to rollback more than once (counted back mid-install, then back on the new
/// version): the one deliberate exception to the rollback window.
fn readmitted(view: &DeploymentView) -> BTreeSet<&str> {
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    for e in &view.events {
        if let (Some(EventKind::Rollback), Some(node)) = (e.action, e.node.as_deref()) {
            *seen.entry(node).or_default() += 1;
        }
    }
    seen.into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(node, _)| node)
        .collect()
}

/// The windows of one observed state: install and download windows (rolling), batch sizes (batch),
/// and the same sizes while rolling back.
pub fn windows(view: &DeploymentView) -> Vec<Violation> {
    let (install, download) = match &view.settings.strategy {
        Strategy::AllAtOnce { .. } => return Vec::new(),
        Strategy::Rolling {
            install_window,
            download_window,
        } => (*install_window as usize, Some(*download_window as usize)),
        Strategy::Batch { sizes, .. } => (
            sizes.iter().copied().max().unwrap_or(u32::MAX) as usize,
            None,
        ),
    };
    let mut out = Vec::new();
    let installing = count(view, &[NodePhase::Installing, NodePhase::Watching]);
    if installing > install {
        out.push(violation(
            "install-window",
            format!(
                "{} has {installing} nodes installing, window {install}",
                view.id
            ),
        ));
    }
    if let Some(download) = download {
        let fetching = count(view, &[NodePhase::Downloading, NodePhase::Downloaded]);
        if fetching > download {
            out.push(violation(
                "download-window",
                format!(
                    "{} has {fetching} nodes prefetching, window {download}",
                    view.id
                ),
            ));
        }
    }
    let again = readmitted(view);
    let back = view
        .nodes
        .iter()
        .filter(|n| n.state == NodePhase::RollingBack && !again.contains(n.id.as_str()))
        .count();
    if back > install {
        out.push(violation(
            "rollback-window",
            format!(
                "{} has {back} nodes rolling back, window {install}",
                view.id
            ),
        ));
    }
    out
}

fn consistent_by_id(observations: &[Observation]) -> BTreeMap<String, Vec<&Observation>> {
    let mut by_id: BTreeMap<String, Vec<&Observation>> = BTreeMap::new();
    for o in observations.iter().filter(|o| o.consistent) {
        by_id.entry(o.view.id.to_string()).or_default().push(o);
    }
    for list in by_id.values_mut() {
        list.sort_by_key(|o| (o.start_ms, o.end_ms));
    }
    by_id
}

/// Linearizable reads of one deployment: a consistent read that began after another ended saw at
/// least as much history (its events extend the earlier read's), and never left a terminal status.
pub fn linearizable(observations: &[Observation]) -> Vec<Violation> {
    let mut out = Vec::new();
    for (id, reads) in consistent_by_id(observations) {
        for (i, a) in reads.iter().enumerate() {
            for b in reads[i + 1..].iter().filter(|b| b.start_ms > a.end_ms) {
                let (ea, eb) = (&a.view.events, &b.view.events);
                if eb.len() < ea.len() || eb[..ea.len()] != ea[..] {
                    out.push(violation(
                        "stale-read",
                        format!(
                            "{id}: a read from {} at {}..{} saw {} events, a later read from {} at \
                             {}..{} saw {} that do not extend them",
                            a.server,
                            a.start_ms,
                            a.end_ms,
                            ea.len(),
                            b.server,
                            b.start_ms,
                            b.end_ms,
                            eb.len()
                        ),
                    ));
                }
                if a.view.status.is_terminal() && b.view.status != a.view.status {
                    out.push(violation(
                        "terminal-left",
                        format!("{id} was {:?}, later {:?}", a.view.status, b.view.status),
                    ));
                }
            }
        }
    }
    out
}

/// Rollback visits the touched nodes in exactly the reverse of the order they were admitted to
/// install. A node's place is where the walk back visited it: its first re-targeting (`rollback`),
/// or, for a node counted back at once (nothing to restore as far as its reports told), its
/// `rolled_back`. Such a node whose install lands later is re-targeted again after the others (the
/// server could not know sooner): that second visit has no place in the order (DEPLOYMENTS.md §6). The
/// forward order is the order of admission to install, a node admitted again after a recall at its last.
pub fn rollback_order(view: &DeploymentView) -> Vec<Violation> {
    let of = |kind: EventKind| -> Vec<&str> {
        view.events
            .iter()
            .filter(|e| e.action == Some(kind))
            .filter_map(|e| e.node.as_deref())
            .collect()
    };
    let mut first = BTreeSet::new();
    let rolled: Vec<&str> = view
        .events
        .iter()
        .filter(|e| matches!(e.action, Some(EventKind::Rollback | EventKind::RolledBack)))
        .filter_map(|e| e.node.as_deref())
        .filter(|n| first.insert(*n))
        .collect();
    // A node recalled by a hard pause and admitted again stands where it was admitted last.
    let mut last = BTreeSet::new();
    let expected: Vec<&str> = of(EventKind::Install)
        .into_iter()
        .rev()
        .filter(|n| last.insert(*n))
        .filter(|n| first.contains(n))
        .collect();
    if rolled == expected {
        return Vec::new();
    }
    vec![violation(
        "rollback-order",
        format!("{} rolled back {rolled:?}, expected {expected:?}", view.id),
    )]
}

/// A coordinated deployment admits no node (download, install or rollback) at a time `t` unless some
/// pulse could carry a leader stamp in `[t - interval, t]`.
pub fn pulsed_progress(view: &DeploymentView, pulses: &[Pulse]) -> Vec<Violation> {
    let Some(interval) = view.settings.pulse_interval_ms else {
        return Vec::new();
    };
    let id = view.id.to_string();
    let mine: Vec<&Pulse> = pulses.iter().filter(|p| p.deployment == id).collect();
    view.events
        .iter()
        .filter(|e| {
            matches!(
                e.action,
                Some(EventKind::Download | EventKind::Install | EventKind::Rollback)
            )
        })
        .filter(|e| {
            !mine
                .iter()
                .any(|p| p.sent_ms <= e.at && p.latest_ms.saturating_add(interval) >= e.at)
        })
        .map(|e| {
            violation(
                "unpulsed-progress",
                format!(
                    "{}: {:?} of {} at {} with no pulse in the {interval} ms before",
                    view.id,
                    e.action,
                    e.node.as_deref().unwrap_or("?"),
                    e.at
                ),
            )
        })
        .collect()
}

/// A group deployment moves step by step: a step's deployments start only after every deployment of
/// the step before has rolled forward (by leader-stamped times), so a failed step starts nothing after.
pub fn group_order(
    group: &GroupDeploymentView,
    deployments: &BTreeMap<String, DeploymentView>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut previous_done: Option<u64> = None;
    for (k, step) in group.steps.iter().enumerate() {
        let views: Vec<&DeploymentView> = step
            .iter()
            .filter_map(|item| item.deployment.map(|d| d.to_string()))
            .filter_map(|id| deployments.get(&id))
            .collect();
        if let (Some(done), Some(started)) = (
            previous_done,
            views
                .iter()
                .filter_map(|v| v.events.first().map(|e| e.at))
                .min(),
        ) {
            if started < done {
                out.push(violation(
                    "group-order",
                    format!(
                        "{}: step {k} started at {started} before step {} finished at {done}",
                        group.id,
                        k - 1
                    ),
                ));
            }
        }
        let finished: Option<Vec<u64>> = views
            .iter()
            .map(|v| {
                (v.status == Status::RolledForward)
                    .then(|| {
                        v.events
                            .iter()
                            .rev()
                            .find(|e| e.status == Some(Status::RolledForward))
                    })
                    .flatten()
                    .map(|e| e.at)
            })
            .collect();
        previous_done = match finished {
            Some(ats) => ats.into_iter().max().or(previous_done),
            // A step that did not roll forward: nothing may start after it.
            None => Some(u64::MAX),
        };
    }
    out
}

/// While a deployment is active, each of its nodes is targeted only at the deployment's version or at
/// its own version from before (strong consistency: no other version rolls onto the consumer).
pub fn deployment_targets(samples: &[TargetSample]) -> Vec<Violation> {
    samples
        .iter()
        .filter(|t| t.target != t.version && Some(t.target) != t.from_version)
        .map(|t| {
            violation(
                "stray-target",
                format!(
                    "{} was targeted at version {} during {} (version {}, from {:?})",
                    t.node, t.target, t.deployment, t.version, t.from_version
                ),
            )
        })
        .collect()
}

/// The disruption budget the workload sets on consumer `fleet` (`max_unavailable`, issue 24).
pub const FLEET_BUDGET: usize = 2;

/// Never more of `fleet`'s nodes installing, watching or failed in a deployment rolling forward than its
/// budget allows (rollbacks are admitted past it, so only forward statuses are checked).
pub fn budget(view: &DeploymentView) -> Vec<Violation> {
    let forward = matches!(
        view.status,
        Status::RollingForward | Status::RollForwardPaused | Status::RollForwardAwaitingPulse
    );
    if view.consumer != "fleet" || !forward {
        return Vec::new();
    }
    let down = count(
        view,
        &[
            NodePhase::Installing,
            NodePhase::Watching,
            NodePhase::Failed,
        ],
    );
    if down <= FLEET_BUDGET {
        return Vec::new();
    }
    vec![violation(
        "budget",
        format!(
            "{} has {down} nodes of fleet down, its budget allows {FLEET_BUDGET}",
            view.id
        ),
    )]
}

/// Runs every per-observation checker over all reads, and the whole-history ones over the final views.
pub fn all(
    observations: &[Observation],
    finals: &[DeploymentView],
    pulses: &[Pulse],
) -> Vec<Violation> {
    let mut out: Vec<Violation> = observations.iter().flat_map(|o| windows(&o.view)).collect();
    out.extend(observations.iter().flat_map(|o| budget(&o.view)));
    out.extend(
        observations
            .iter()
            .flat_map(|o| check_waits::waits_agree(&o.view)),
    );
    out.extend(linearizable(observations));
    for view in finals {
        out.extend(windows(view));
        out.extend(budget(view));
        out.extend(rollback_order(view));
        out.extend(pulsed_progress(view, pulses));
        out.extend(check_waits::timeout_in_active_time(view));
    }
    out
}

#[cfg(test)]
#[path = "check_test.rs"]
mod tests;
