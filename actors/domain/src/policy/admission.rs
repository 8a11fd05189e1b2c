//! The policies' pass: at the end of every apply while a policy is in force, the handlers having admitted no
//! install themselves (`HandlerGate::Deferred`), each active deployment is looked at in id order. Maintenance
//! windows first: a deployment a window holds is paused (`paused_by: window`; in-flight nodes finish) and one
//! a window paused goes on by itself once none holds it; its next window change becomes part of its
//! deadline (`policy_check_at`), so the leader ticks it then. Then each deployment rolling forward is
//! advanced through one [`Ledger`] over the whole state, so every admission of every deployment of every
//! resource is checked against the budgets of every consumer its node is in. Earlier deployments take free
//! slots first; a deployment held by a budget is not paused, it waits (`views`: `waiting_for: "budget"`).
//! The same gate holds every install and download to the fleet-wide limits (`limits.rs`), counted from the
//! state at the start of the pass (`waiting_for: "fleet_limit"`).

use crate::deployment::progress::HandlerGate;
use crate::deployment::seen::Fact;
use crate::deployment::{Deployment, DeploymentNode, NodePhase};
use crate::entities::model::Consumer;
use crate::entities::nodes::NodeTable;
use crate::policy::budget::Budget;
use crate::policy::gate::Policies;
use crate::policy::ledger::Ledger;
use crate::policy::limits::{Fleet, FleetLimits};
use crate::policy::window_clock::WindowClock;
use crate::policy::windows::{Overrun, Window, WindowKind};
use crate::values::ids::{Actor, DeploymentId, Timestamp};
use crate::values::status::{PausedBy, Status};
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
        Status::RollingForward | Status::RollingBack if held_here(d.status.is_forward()) => {
            Move::Hold
        }
        Status::RollForwardPaused | Status::RollBackPaused
            if d.paused_by == Some(PausedBy::Window) && !held_here(d.status.is_forward()) =>
        {
            Move::Release
        }
        _ => Move::Stay,
    }
}

impl Admission<'_> {
    /// Applies the windows and admits what the policies allow at `at`; answers the deployments it changed,
    /// in id order.
    pub(crate) fn admit(&mut self, at: Timestamp) -> Vec<DeploymentId> {
        let now = self.clock.now(self.windows, at);
        let mut gate = Policies {
            ledger: Ledger::build(self.budgets, self.consumers, self.nodes, self.deployments),
            fleet: Fleet::build(self.limits, self.deployments, self.active),
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
            if step == Move::Stay && !check && !open {
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
                    let msg = format!("held by window {}", v.by.join(", "));
                    if d.transition(Status::paused(forward), at, Actor::System, Some(msg))
                        .unwrap_or(false)
                    {
                        d.paused_by = Some(PausedBy::Window);
                        if forward && v.recall {
                            let why = format!(
                                "install permission taken back: window {} closed (overrun: pause)",
                                v.by.join(", ")
                            );
                            d.recall_unstarted(at, &Actor::System, &why);
                        }
                    }
                }
                Move::Release => {
                    let forward = d.status == Status::RollForwardPaused;
                    let msg = Some("no window holds it any more".to_string());
                    let _ = d.enter_rolling(forward, at, Actor::System, msg);
                }
                Move::Stay => {}
            }
            d.advance(at, &Actor::System, &mut gate);
            if (d.events.len(), d.status, d.jitter_at) != before || check {
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
