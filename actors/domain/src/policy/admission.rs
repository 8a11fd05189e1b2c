//! The policies' pass: at the end of every apply while a policy is in force, the handlers having admitted no
//! install themselves (`HandlerGate::Deferred`), each active deployment is looked at in id order. Maintenance
//! windows first: a deployment a window holds gets the window's wait (`paused_by: window`; in-flight nodes
//! finish) and loses it once none holds it (only this pass puts or lifts it: a person's pause stays); its next window change becomes part of its
//! deadline (`policy_check_at`), so the leader ticks it then. Then each deployment rolling forward is
//! advanced through one [`Ledger`] over the whole state, so every admission of every deployment of every
//! resource is checked against the budgets of every consumer its node is in. Earlier deployments take free
//! slots first; a deployment held by a budget is not paused, it waits (`views`: `waiting_for: "budget"`).
//! The same gate holds every install and download to the fleet-wide limits (`limits.rs`), counted from the
//! state at the start of the pass (`waiting_for: "fleet_limit"`).

use crate::deployment::progress::HandlerGate;
use crate::deployment::reasons::Wait;
use crate::deployment::seen::Fact;
use crate::deployment::{Deployment, DeploymentNode, NodePhase};
use crate::entities::model::Consumer;
use crate::entities::nodes::NodeTable;
use crate::policy::budget::Budget;
use crate::policy::gate::Policies;
use crate::policy::ledger::Ledger;
use crate::policy::limits::{Fleet, FleetLimits};
use crate::policy::weak_slots::WeakSlots;
use crate::policy::window_clock::WindowClock;
use crate::policy::windows::{Overrun, Window, WindowKind};
use crate::values::ids::{Actor, DeploymentId, Timestamp};
use crate::values::status::Status;
use crate::values::strategy::Plan;
use convoy_collections::CowMap;
use std::collections::BTreeSet;

/// The policies' pass over the maps it reads and the deployments it advances.
pub(crate) struct Admission<'a> {
    /// Disruption budgets by consumer.
    pub budgets: &'a CowMap<String, Budget>,
    /// Maintenance windows by name.
    pub windows: &'a CowMap<String, Window>,
    /// The windows' clock, brought to the pass's time (`WindowClock::refresh`).
    pub clock: &'a WindowClock,
    /// The consumers (their node lists).
    pub consumers: &'a CowMap<String, Consumer>,
    /// The nodes (activity, consumers, deployments).
    pub nodes: &'a NodeTable,
    /// The deployments advanced.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
    /// The active deployments.
    pub active: &'a BTreeSet<DeploymentId>,
    /// The fleet-wide limits in force.
    pub limits: FleetLimits,
    /// The weak subscriptions' slots: their nodes count against the budgets and the limits.
    pub weak: &'a WeakSlots,
}

/// Whether a policy is in force: then the handlers defer installs (and with a fleet download limit,
/// downloads) to [`Admission::admit`].
pub(crate) fn hold(
    budgets: &CowMap<String, Budget>,
    windows: &CowMap<String, Window>,
    limits: FleetLimits,
) -> HandlerGate {
    if limits.max_concurrent_downloads.is_some() {
        HandlerGate::DeferredAll
    } else if budgets.is_empty() && windows.is_empty() && limits.is_off() {
        HandlerGate::Open
    } else {
        HandlerGate::Deferred
    }
}

/// A window at one time (defined beside the windows' clock, which answers it).
pub use crate::policy::window_clock::WindowNow;

/// Every window at `at` (a schedule that no longer parses, which validation prevents, never holds), each
/// parsed and searched afresh: O(windows) cron searches. The state's [`crate::ClusterState::windows_now`]
/// answers the same from the windows' clock.
pub fn windows_at(windows: &CowMap<String, Window>, at: Timestamp) -> Vec<WindowNow<'_>> {
    windows
        .iter()
        .filter_map(|(_, w)| {
            let s = w.schedule().ok()?;
            Some(WindowNow {
                window: w,
                open: s.in_force(at),
                next: s.next_change(at),
            })
        })
        .collect()
}

/// What the windows say of a deployment of `resource` on `consumer`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// No node may be admitted: a deny window is in force, or allow windows apply and none is.
    pub closed: bool,
    /// Rollbacks wait too (a window holding it does not allow them).
    pub hold_rollback: bool,
    /// A window holding it says `overrun: pause`: the nodes admitted that have not started are taken back.
    pub recall: bool,
    /// The windows holding it.
    pub by: Vec<String>,
    /// When one of the windows that apply next opens or closes.
    pub next: Option<Timestamp>,
}

/// The windows' verdict for a deployment of `resource` on `consumer` (DEPLOYMENTS.md §16).
pub fn verdict(now: &[WindowNow<'_>], consumer: &str, resource: &str) -> Verdict {
    let applying: Vec<&WindowNow<'_>> = now
        .iter()
        .filter(|w| w.window.applies_to.covers(consumer, resource))
        .collect();
    let next = applying.iter().filter_map(|w| w.next).min();
    let deny: Vec<&&WindowNow<'_>> = applying
        .iter()
        .filter(|w| w.window.kind == WindowKind::Deny && w.open)
        .collect();
    let allows: Vec<&&WindowNow<'_>> = applying
        .iter()
        .filter(|w| w.window.kind == WindowKind::Allow)
        .collect();
    let holding: Vec<&&WindowNow<'_>> = if !deny.is_empty() {
        deny
    } else if !allows.is_empty() && !allows.iter().any(|w| w.open) {
        allows
    } else {
        Vec::new()
    };
    Verdict {
        closed: !holding.is_empty(),
        hold_rollback: holding.iter().any(|w| !w.window.allow_rollback),
        recall: holding.iter().any(|w| w.window.overrun == Overrun::Pause),
        by: holding.iter().map(|w| w.window.name.clone()).collect(),
        next,
    }
}

/// Whether `d` has a free install slot (or may form its next batch) and a node waiting at its cursor,
/// which `would` lets in (its id, and whether it must fetch the version): only then is it written to (a
/// write copies it out of a shared snapshot).
pub(crate) fn may_admit(d: &Deployment, would: impl Fn(&str, bool) -> bool) -> bool {
    if d.status != Status::RollingForward {
        return false;
    }
    let free = match d.settings.strategy.admission().plan {
        Plan::Batches { .. } => d.forward.batch_open == 0,
        Plan::Windows { install, .. } => d.forward.install_used < install,
    };
    free && next_waiting(d).is_some_and(|n| {
        would(
            &n.id,
            n.phase == NodePhase::Pending && !n.seen.has(Fact::Have),
        )
    })
}

/// The policy `d` waits for now (DEPLOYMENTS.md §6 "Why a deployment waits"): rolling forward with nothing of
/// its own in flight, a free slot of its own and a node waiting, which the fleet's limits or a budget refuse.
/// While it does, its active clock stands still; with its own nodes in flight it is moving, not waiting.
pub(crate) fn policy_wait(d: &Deployment, gate: &Policies<'_>) -> Option<Wait> {
    if d.status != Status::RollingForward || d.in_flight() || d.pacing_holds() {
        return None;
    }
    let free = match d.settings.strategy.admission().plan {
        Plan::Batches { .. } => d.forward.batch_open == 0,
        Plan::Windows { install, .. } => d.forward.install_used < install,
    };
    let n = next_waiting(d).filter(|_| free)?;
    let fetch = n.phase == NodePhase::Pending && !n.seen.has(Fact::Have);
    if !gate.fleet.would_install(fetch) {
        Some(Wait::FleetLimit)
    } else if !gate.ledger.would_admit(&n.id) {
        Some(Wait::Budget)
    } else {
        None
    }
}

/// Whether `d` has a free download slot and a node to tell to download, which the fleet lets in (asked only
/// under a fleet download limit: otherwise the handlers tell nodes to download themselves).
pub(crate) fn may_download(d: &Deployment, fleet: &Fleet) -> bool {
    if fleet.limits.max_concurrent_downloads.is_none()
        || d.status != Status::RollingForward
        || !fleet.would_download()
    {
        return false;
    }
    let Plan::Windows { download, .. } = d.settings.strategy.admission().plan else {
        return false;
    };
    let from = d.forward.download_cursor.max(d.forward.install_cursor) as usize;
    d.forward.download_used < download
        && (from..d.nodes.len())
            .filter_map(|p| d.nodes.get(p))
            .find(|n| n.phase == NodePhase::Pending)
            .is_some()
}

/// The next node `d` would admit to install, going forward (none left: `None`).
pub(crate) fn next_waiting(d: &Deployment) -> Option<&DeploymentNode> {
    (d.forward.install_cursor as usize..d.nodes.len())
        .filter_map(|p| d.nodes.get(p))
        .find(|n| {
            matches!(
                n.phase,
                NodePhase::Pending | NodePhase::Downloading | NodePhase::Downloaded
            )
        })
}

/// The window rule over the slots a disruption budget grants (DEPLOYMENTS.md §16, issue 36): `d` rolls
/// forward, nothing of it is in flight, a node waits, and every budget that keeps that node out is spent
/// by `d`'s own failed nodes alone (no other deployment, no inactive node holds a slot that could free).
/// Then no slot can ever free while `d` is active: the failure, with the reason naming the budgets.
/// O(nodes of `d`), only once the cheap checks hold.
fn budget_stall(d: &Deployment, ledger: &Ledger<'_>, nodes: &NodeTable) -> Option<String> {
    if d.status != Status::RollingForward || d.tally.failed == 0 {
        return None;
    }
    let next = next_waiting(d)?;
    let blocking = ledger.blocking(&next.id);
    if blocking.is_empty()
        || d.nodes
            .iter()
            .any(|n| matches!(n.phase, NodePhase::Installing | NodePhase::Watching))
    {
        return None;
    }
    let mut spent = Vec::with_capacity(blocking.len());
    for c in blocking {
        let a = ledger.account(c)?;
        let failed_here = d
            .nodes
            .iter()
            .filter(|n| n.phase == NodePhase::Failed)
            .filter(|n| nodes.get(&n.id).is_some_and(|ns| ns.consumers.contains(c)))
            .count() as u32;
        let only_d = a.holders.len() == 1 && a.holders.contains(&d.id);
        if !only_d || a.unavailable != failed_here {
            return None;
        }
        spent.push(format!(
            "disruption budget of {c} ({} unavailable at most) is entirely taken by {failed_here} failed nodes of this deployment",
            a.allowed
        ));
    }
    Some(format!(
        "{}: node {} can never be admitted",
        spent.join("; "),
        next.id
    ))
}

/// What the windows change in `d`'s status: hold it, let it go on, or nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Move {
    Hold,
    Release,
    Stay,
}

fn window_move(d: &Deployment, v: &Verdict) -> Move {
    let held_here = |forward: bool| if forward { v.closed } else { v.hold_rollback };
    match d.status {
        s if s.is_active() && held_here(s.is_forward()) && !d.waits().has(Wait::Window) => {
            Move::Hold
        }
        _ if d.waits().has(Wait::Window) && !held_here(d.status.is_forward()) => Move::Release,
        _ => Move::Stay,
    }
}

impl Admission<'_> {
    /// Applies the windows and admits what the policies allow at `at`; answers the deployments it changed,
    /// in id order.
    pub(crate) fn admit(&mut self, at: Timestamp) -> Vec<DeploymentId> {
        let now = self.clock.now(self.windows, at);
        let mut gate = Policies {
            ledger: Ledger::build(
                self.budgets,
                self.consumers,
                self.nodes,
                self.deployments,
                self.weak,
            ),
            fleet: Fleet::build(
                self.limits,
                self.deployments,
                self.active,
                self.weak.in_flight(self.nodes),
            ),
        };
        let mut changed = Vec::new();
        for id in self.active {
            let Some(d) = self.deployments.get(id) else {
                continue;
            };
            let v = if now.is_empty() {
                Verdict::default()
            } else {
                verdict(&now, &d.consumer, &d.resource)
            };
            let step = window_move(d, &v);
            let check = d.policy_check_at != v.next;
            let open = step == Move::Release
                || (step == Move::Stay
                    && (may_admit(d, |n, fetch| gate.would_admit(n, fetch))
                        || may_download(d, &gate.fleet)));
            let wait_now = policy_wait(d, &gate);
            let rewait = [Wait::Budget, Wait::FleetLimit]
                .iter()
                .any(|w| d.waits().has(*w) != (wait_now == Some(*w)));
            let stalled = match (step, open) {
                (Move::Stay, false) => budget_stall(d, &gate.ledger, self.nodes),
                _ => None,
            };
            if step == Move::Stay && !check && !open && !rewait && stalled.is_none() {
                continue;
            }
            let Some(d) = self.deployments.get_mut(id) else {
                continue;
            };
            let before = (d.events.len(), d.status, d.jitter_at);
            if check {
                d.policy_check_at = v.next;
            }
            match step {
                Move::Hold => {
                    let forward = d.status.is_forward();
                    let names = v.by.join(", ");
                    let msg = format!("held by window {names}");
                    if d.hold_by_window(names, at, msg) && forward && v.recall {
                        let why = format!(
                            "install permission taken back: window {} closed (overrun: pause)",
                            v.by.join(", ")
                        );
                        d.recall_unstarted(at, &Actor::System, &why);
                    }
                }
                Move::Release => {
                    let msg = Some("no window holds it any more".to_string());
                    d.release(Wait::Window, at, Actor::System, msg);
                }
                Move::Stay => {}
            }
            match stalled {
                Some(why) => d.fail(at, why),
                None => d.advance(at, &Actor::System, &mut gate),
            }
            let wait_now = policy_wait(d, &gate);
            for w in [Wait::Budget, Wait::FleetLimit] {
                d.set_policy_wait(w, wait_now == Some(w), at);
            }
            if (d.events.len(), d.status, d.jitter_at) != before || check || rewait {
                changed.push(*id);
            }
        }
        changed
    }
}

#[cfg(test)]
#[path = "admission_test.rs"]
mod tests;

#[cfg(test)]
#[path = "admission_windows_test.rs"]
mod windows_tests;

#[cfg(test)]
#[path = "admission_overrun_test.rs"]
mod overrun_tests;
