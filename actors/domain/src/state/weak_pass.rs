//! The weak subscriptions' passes (`policy/weak.rs`, `policy/weak_jitter.rs`, `policy/weak_slots.rs`) and their read-only accessors: the windows' hold, the start jitter's spreads and the slots under budgets and fleet-wide limits, judged at the end of every apply.

use super::ClusterState;
use crate::deployment::progress::Gate;
use crate::entities::model::Subscription;
use crate::entities::model::{Mode, NodeState};
use crate::policy::admission;
use crate::policy::gate::Policies;
use crate::policy::ledger::Ledger;
use crate::policy::limits::Fleet;
use crate::policy::weak::WeakGate;
use crate::policy::weak_jitter::{offset, Spread, WeakJitter};
use crate::policy::weak_slots::{judge, Slot, WeakSlots};
use crate::values::ids::Timestamp;
use std::collections::BTreeSet;

impl ClusterState {
    /// The weak subscriptions the windows hold (read-only).
    pub fn weak_gate(&self) -> &WeakGate {
        &self.weak_gate
    }

    /// For the leader, with its own clock: whether a window change that a weak subscription waits for
    /// has come, so a `Tick` is due (`policy/weak.rs`).
    pub fn weak_tick_due(&self, now: Timestamp) -> bool {
        self.weak_gate.due(now) || self.weak_jitter.due(now)
    }

    /// When the leader next ticks for the weak subscriptions: a window change they wait for, or the next
    /// node's time of a start jitter's spread (`policy/weak_jitter.rs`).
    pub fn weak_tick_at(&self) -> Option<Timestamp> {
        match (self.weak_gate.check_at, self.weak_jitter.next_at()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The spreads of the weak subscriptions with a start jitter (read-only).
    pub fn weak_jitter(&self) -> &WeakJitter {
        &self.weak_jitter
    }

    /// Judges the weak subscriptions under the windows at `at` when `rejudge` or a recorded window
    /// change has come (`policy/weak.rs`).
    pub(super) fn judge_weak(&mut self, at: Timestamp, rejudge: bool) {
        if !self.weak_gate.in_use(self.windows.len()) || !(rejudge || self.weak_gate.due(at)) {
            return;
        }
        let now = admission::windows_at(&self.windows, at);
        self.weak_gate.refresh(&self.consumers, &now, at);
    }

    /// Whether weak subscriptions of consumer `consumer` move only with a slot: it has a budget, or a
    /// fleet-wide limit is set.
    pub(crate) fn weak_slotted(&self, consumer: &str) -> bool {
        !self.fleet_limits().is_off() || self.budgets.contains_key(consumer)
    }

    /// The weak subscriptions' slots (read-only).
    pub fn weak_slots(&self) -> &WeakSlots {
        &self.weak_slots
    }

    /// Keeps and frees the weak nodes' slots, and with `grant` grants what the budgets and limits leave
    /// (module doc): O(nodes of slotted weak subscriptions).
    pub(super) fn judge_weak_slots(&mut self, grant: bool) {
        if self.fleet_limits().is_off() && self.budgets.is_empty() {
            if !self.weak_slots.is_empty() {
                self.weak_slots = WeakSlots::default();
            }
            return;
        }
        let mut slots = WeakSlots::default();
        let mut wants = Vec::new();
        for (cname, c) in self.consumers.iter() {
            if !self.weak_slotted(cname) {
                continue;
            }
            for (r, sub) in &c.subscriptions {
                if sub.mode != Mode::Weak {
                    continue;
                }
                for id in c.nodes.iter() {
                    let Some(ns) = self.nodes.get(id) else {
                        continue;
                    };
                    if !ns.active || self.weak_follows(ns, r) != Some(cname.as_str()) {
                        continue;
                    }
                    let current = ns.current(r);
                    let moves_to = self
                        .weak_move(cname, r, sub, id, ns)
                        .filter(|t| t.install && !t.uninstall && current != Some(t.version))
                        .map(|t| t.version);
                    let entry = ns.resources.get(r);
                    let at_rest = entry
                        .and_then(|e| e.ok_since)
                        .is_some_and(|o| Some(o.version) == current);
                    let fetch = moves_to.is_some_and(|v| {
                        !entry
                            .and_then(|e| e.versions.get(&v))
                            .is_some_and(|p| p.downloaded)
                    });
                    match judge(moves_to, self.weak_slots.grant(id, r), at_rest, fetch) {
                        Slot::Keep(v) => {
                            slots
                                .grants
                                .entry(id.clone())
                                .or_default()
                                .insert(r.clone(), v);
                        }
                        Slot::Wants { version, fetch } => {
                            wants.push((id.clone(), r.clone(), version, fetch))
                        }
                        Slot::Free => {}
                    }
                }
            }
        }
        if !grant {
            slots.waiting = wants.len() as u32;
        } else if !wants.is_empty() {
            let in_flight = slots.in_flight(&self.nodes);
            let mut gate = Policies {
                ledger: Ledger::build(
                    &self.budgets,
                    &self.consumers,
                    &self.nodes,
                    &self.deployments,
                    &slots,
                ),
                fleet: Fleet::build(
                    self.fleet_limits(),
                    &self.deployments,
                    &self.active,
                    in_flight,
                ),
            };
            let mut granted = Vec::new();
            for (id, r, v, fetch) in wants {
                if gate.admit(&id, fetch) {
                    granted.push((id, r, v));
                } else {
                    slots.waiting += 1;
                }
            }
            for (id, r, v) in granted {
                slots.grants.entry(id).or_default().insert(r, v);
            }
        }
        if slots != self.weak_slots {
            self.weak_slots = slots;
        }
    }

    /// Records and moves forward the spreads of the weak subscriptions with a start jitter (module doc of
    /// `policy/weak_jitter.rs`): a new one when the selection changed, `judged` moved to `at` when a node's
    /// time came. O(jittered subscriptions) per apply, O(their nodes) when one is judged.
    pub(super) fn judge_weak_jitter(&mut self, at: Timestamp) {
        let mut keep = BTreeSet::new();
        let mut changes = Vec::new();
        for (cname, c) in self.consumers.iter() {
            for (r, sub) in &c.subscriptions {
                let jitter = sub.policy.start_jitter_ms.unwrap_or(0);
                if sub.mode != Mode::Weak || jitter == 0 {
                    continue;
                }
                let Some(version) = self.selection().selected_version(cname, r) else {
                    continue;
                };
                let key = (cname.clone(), r.clone());
                let old = self.weak_jitter.spreads.get(&key);
                let spread = match old {
                    Some(s) if s.version == version => {
                        let due = s.next.is_some_and(|n| n <= at);
                        if !due && s.nodes as usize == c.nodes.len() {
                            keep.insert(key);
                            continue;
                        }
                        Spread {
                            judged: if due { at } else { s.judged },
                            ..s.clone()
                        }
                    }
                    _ => Spread {
                        version,
                        since: at,
                        judged: at,
                        next: None,
                        nodes: 0,
                    },
                };
                let next = c
                    .nodes
                    .iter()
                    .map(|n| spread.since + offset(cname, r, version, n, jitter))
                    .filter(|t| *t > spread.judged)
                    .min();
                keep.insert(key.clone());
                let nodes = c.nodes.len() as u32;
                changes.push((
                    key,
                    Spread {
                        next,
                        nodes,
                        ..spread
                    },
                ));
            }
        }
        if changes.is_empty() && keep.len() == self.weak_jitter.spreads.len() {
            return;
        }
        self.weak_jitter.spreads.retain(|k, _| keep.contains(k));
        self.weak_jitter.spreads.extend(changes);
    }

    /// Whether start jitter holds node `node_id`'s move to `version` of `consumer`'s weak subscription to
    /// `resource` (a move forward, not yet released by its spread).
    pub(crate) fn jitter_holds(
        &self,
        consumer: &str,
        resource: &str,
        sub: &Subscription,
        node_id: &str,
        version: u64,
    ) -> bool {
        let Some(s) = self.weak_jitter.spread(consumer, resource) else {
            return false;
        };
        let jitter = sub.policy.start_jitter_ms.unwrap_or(0);
        s.version == version && !s.releases(offset(consumer, resource, version, node_id, jitter))
    }

    /// The consumer whose weak subscription to `resource` node `ns` follows: the first of its consumers (by
    /// name) that subscribes to it, when no active deployment of it contains the node (`views/targets.rs`).
    pub(crate) fn weak_follows<'a>(&self, ns: &'a NodeState, resource: &str) -> Option<&'a str> {
        self.selection()
            .membership()
            .follows(ns, resource, self.deployment_map())
    }
}
