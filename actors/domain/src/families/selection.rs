//! Version selection (DEPLOYMENTS.md §3): manual pin, then the dependency invariant, then the newest version;
//! never a version held back on the consumer (rolled back there, see `subscriptions`) unless it is pinned,
//! never a retracted one (see `retract`; a pin on a retracted version selects the newest allowed version
//! below it).
//!
//! A dependency "R @ v needs R2 @ v2" must hold where R2 lives: inside a group containing (consumer, R), on the
//! member consumer that holds R2; otherwise on the same consumer. It holds when that consumer converged on
//! R2 ≥ v2, or its nodes reached R2 ≥ v2 (`reached.rs`), or when every active, interested node of it that
//! runs R2 runs ≥ v2 (and there is at least one): nodes holding nothing, and nodes that come back or join on
//! an older version, never revoke it, and a retracted version does not count.

//!
//! [`Selection`] answers these over borrowed maps (the resources, consumers, nodes and groups), so a handler
//! that changes other maps can still ask; `ClusterState::selection` builds one over the whole state.

use crate::deployment::Deployment;
use crate::entities::membership::Membership;
use crate::entities::model::{Consumer, Dependency, Group, HoldOrigin, NodeState, Resource};
use crate::entities::nodes::NodeTable;
use crate::families::reached::rolling_back;
use crate::values::ids::DeploymentId;
use convoy_collections::CowMap;

/// The selection rules, reading the maps they depend on.
#[derive(Clone, Copy)]
pub(crate) struct Selection<'a> {
    /// The resources and their versions (retractions, dependencies).
    pub resources: &'a CowMap<String, Resource>,
    /// The consumers: subscriptions, pins, holds, node lists, converged versions.
    pub consumers: &'a CowMap<String, Consumer>,
    /// The nodes: whether they are active, interested, and what they run.
    pub nodes: &'a NodeTable,
    /// The groups: where a dependency of a member must hold.
    pub groups: &'a CowMap<String, Group>,
    /// The deployments: a dependency on a resource a deployment rolls back does not hold.
    pub deployments: &'a CowMap<DeploymentId, Deployment>,
}

impl<'a> Selection<'a> {
    /// The rules of a node in several consumers over the same consumers.
    pub(crate) fn membership(&self) -> Membership<'a> {
        Membership {
            consumers: self.consumers,
        }
    }

    /// `version` of `resource` is published and retracted.
    pub(crate) fn is_retracted(&self, resource: &str, version: u64) -> bool {
        self.resources
            .get(resource)
            .is_some_and(|r| r.retracted(version))
    }

    /// The version `consumer` should run of `resource`: pin, else the newest version whose dependencies hold.
    /// A held-back version is never selected, unless it is pinned (explicit intent beats an automatic
    /// hold: the pin still selects it). A retracted version is never selected: a pin on one selects the
    /// newest allowed version below it.
    pub(crate) fn selected_version(&self, consumer: &str, resource: &str) -> Option<u64> {
        let c = self.consumers.get(consumer)?;
        self.select(consumer, resource, |v| c.held(resource, v))
    }

    /// The version node `ns` should run of `resource` as a node of `consumer`: the consumer's selection,
    /// but also never a version held back on any other consumer of the node (the strictest wins: a hold
    /// keeps a known-bad version off those machines, DEPLOYMENTS.md §10).
    pub(crate) fn selected_for_node(
        &self,
        consumer: &str,
        resource: &str,
        ns: &NodeState,
    ) -> Option<u64> {
        let membership = self.membership();
        self.select(consumer, resource, |v| {
            membership
                .holds_on(ns, consumer, resource, v)
                .next()
                .is_some()
        })
    }

    /// The brake freezes, it never downgrades the healthy (DEPLOYMENTS.md §4): the version node `ns` runs
    /// of `resource`, when a brake (and nothing else) holds it back on a consumer of the node, the node
    /// runs it done and healthy, it is not retracted, and `selected` (what the node would be sent) is
    /// older or nothing. The node then stays on it; a node that failed it goes to `selected`.
    pub(crate) fn frozen_by_brake(
        &self,
        consumer: &str,
        resource: &str,
        ns: &NodeState,
        selected: Option<u64>,
    ) -> Option<u64> {
        let nr = ns.resources.get(resource)?;
        let current = nr.current?;
        if selected.is_some_and(|s| s >= current) || self.is_retracted(resource, current) {
            return None;
        }
        if !nr
            .versions
            .get(&current)
            .is_some_and(crate::entities::model::VersionProgress::is_ok)
        {
            return None;
        }
        let mut by_brake = false;
        for (_, h) in self.membership().holds_on(ns, consumer, resource, current) {
            match h.origin {
                HoldOrigin::Brake(_) => by_brake = true,
                HoldOrigin::Rollback(_) => return None,
            }
        }
        by_brake.then_some(current)
    }

    /// The selection rules with `held` saying which versions are held back.
    fn select(&self, consumer: &str, resource: &str, held: impl Fn(u64) -> bool) -> Option<u64> {
        let res = self.resources.get(resource)?;
        let c = self.consumers.get(consumer)?;
        let sub = c.subscriptions.get(resource);
        let mut ceiling = u64::MAX;
        if let Some(pin) = sub.and_then(|s| s.pin) {
            // A pin is a person's decision: it selects its version even when an automatic rule (a
            // rollback, a brake) holds it back; the consumer view and `deploy plan` say it is held.
            if !res.retracted(pin) {
                return Some(pin);
            }
            // A pin on a retracted version: the newest allowed version below it.
            ceiling = pin;
        }
        res.versions
            .range(..=ceiling)
            .map(|(_, v)| v)
            .rev()
            .filter(|v| v.retracted.is_none() && !held(v.version))
            .find(|v| {
                v.depends_on
                    .iter()
                    .all(|d| self.dependency_holds(consumer, resource, d))
            })
            .map(|v| v.version)
    }

    /// The consumer where `dep` must be installed for `(consumer, resource)`.
    pub(crate) fn holder<'b>(&self, consumer: &'b str, resource: &str, dep: &str) -> &'b str
    where
        'a: 'b,
    {
        for g in self.groups.values() {
            if g.members
                .iter()
                .any(|m| m.consumer == consumer && m.resource == resource)
            {
                if let Some(m) = g.members.iter().find(|m| m.resource == dep) {
                    return &m.consumer;
                }
            }
        }
        consumer
    }

    /// Whether `dep` holds for `(consumer, resource)`.
    pub(crate) fn dependency_holds(
        &self,
        consumer: &str,
        resource: &str,
        dep: &Dependency,
    ) -> bool {
        self.installed_at_least(
            self.holder(consumer, resource, &dep.resource),
            &dep.resource,
            dep.version,
        )
    }

    /// `consumer` runs `resource` at `version` or newer: it converged on such a version, or its nodes
    /// reached one (`Subscription::reached`, see `reached.rs`), or every active, interested node of it that
    /// runs a version runs such a version (and at least one does). A node that holds nothing (a blank
    /// joiner, a re-imaged node) or comes back stale or joins on an older version never revokes what its
    /// nodes reached, so a dependency that holds does not flap while such nodes catch up; only a rollback, a
    /// retraction (a retracted version does not count), an edit of the subscription or a node that moves
    /// back revokes it (DEPLOYMENTS.md §3).
    pub(crate) fn installed_at_least(&self, consumer: &str, resource: &str, version: u64) -> bool {
        let Some(c) = self.consumers.get(consumer) else {
            return false;
        };
        let counts = |v: u64| v >= version && !self.is_retracted(resource, v);
        let sub = c.subscriptions.get(resource);
        if sub.and_then(|s| s.version).is_some_and(counts)
            || sub.and_then(|s| s.reached).is_some_and(counts)
        {
            return true;
        }
        if rolling_back(c, self.deployments, resource) {
            // A rollback of it revokes the dependency at once, before its nodes move back.
            return false;
        }
        let mut any = false;
        for n in &c.nodes {
            let Some(ns) = self.nodes.get(n) else {
                continue;
            };
            if !ns.active || !ns.interested(resource) {
                continue;
            }
            let Some(current) = ns.current(resource) else {
                continue;
            };
            if !counts(current) {
                return false;
            }
            any = true;
        }
        any
    }
}

#[cfg(test)]
#[path = "selection_test.rs"]
mod tests;
