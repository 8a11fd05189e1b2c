//! What a consumer's nodes reached of a resource (`Subscription::reached`, DEPLOYMENTS.md §3, "it does not
//! flap"): a dependency on the resource, once it holds, is revoked only by a rollback of a deployment of it on
//! the consumer, a retraction of the version, an edit of the subscription, or a node that moves back to an
//! older version — never by a node that comes back (stale, joining, re-imaged) on an older version or on
//! nothing.
//!
//! The mark rises to the lowest version the consumer's active, interested nodes that run the resource run,
//! whenever that rises; it never falls, except when it is revoked ([`Reached::revoke`]), and then it starts
//! over from what the nodes run. The commands that change what nodes run, or which nodes count, name the
//! (consumer, resource) pairs they touched ([`Touched`]) and [`Reached::raise`] reads each pair once, so a
//! batch of reports costs one pass over each consumer it touched.

use crate::deployment::Deployment;
use crate::entities::model::{Consumer, Resource};
use crate::entities::nodes::NodeTable;
use crate::values::ids::DeploymentId;
use convoy_collections::CowMap;
use std::collections::BTreeMap;

/// The (consumer, resource) pairs a command touched, each with whether it revokes the mark (a node of the
/// consumer moved back to an older version of the resource).
#[derive(Default)]
pub(crate) struct Touched(BTreeMap<(String, String), bool>);

impl Touched {
    /// `consumer`'s nodes of `resource` changed; `revoke` when one moved back to an older version.
    pub(crate) fn note(&mut self, consumer: &str, resource: &str, revoke: bool) {
        *self
            .0
            .entry((consumer.to_string(), resource.to_string()))
            .or_default() |= revoke;
    }

    /// Nothing was touched.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The marks, over the maps they read: the consumers (whose subscriptions hold them), the nodes, the
/// resources (retractions) and the deployments (a rollback under way).
pub(crate) struct Reached<'a> {
    /// The consumers whose subscriptions' marks change.
    pub consumers: &'a mut CowMap<String, Consumer>,
    /// What the nodes run.
    pub nodes: &'a NodeTable,
    /// Which versions are retracted.
    pub resources: &'a CowMap<String, Resource>,
    /// The consumers' active deployments: none rises while one of the resource rolls back.
    pub deployments: &'a CowMap<DeploymentId, Deployment>,
}

impl Reached<'_> {
    /// Raises (or, revoked, starts over) the mark of every pair `touched` names.
    pub(crate) fn raise(&mut self, touched: Touched) {
        for ((consumer, resource), revoke) in touched.0 {
            if revoke {
                self.revoke(&consumer, &resource);
            }
            self.raise_one(&consumer, &resource);
        }
    }

    /// Forgets the mark of `resource` on `consumer` and starts over from what its nodes run now.
    pub(crate) fn revoke(&mut self, consumer: &str, resource: &str) {
        if let Some(sub) = self
            .consumers
            .get_mut(consumer)
            .and_then(|c| c.subscriptions.get_mut(resource))
        {
            sub.reached = None;
        }
        self.raise_one(consumer, resource);
    }

    fn raise_one(&mut self, consumer: &str, resource: &str) {
        let Some(c) = self.consumers.get(consumer) else {
            return;
        };
        let Some(sub) = c.subscriptions.get(resource) else {
            return;
        };
        if rolling_back(c, self.deployments, resource) {
            return;
        }
        let retracted = |v: u64| self.resources.get(resource).is_some_and(|r| r.retracted(v));
        let Some(floor) = floor(c, self.nodes, resource, retracted) else {
            return;
        };
        let keep = sub.reached.filter(|r| !retracted(*r) && *r >= floor);
        if keep.is_some() {
            return;
        }
        let c = self.consumers.get_mut(consumer).expect("read above");
        if let Some(sub) = c.subscriptions.get_mut(resource) {
            sub.reached = Some(floor);
        }
    }
}

/// A deployment of `resource` on `c` is rolling back (active, not forward): what its nodes reached does not
/// count, and no dependency on it holds, until it has ended.
pub(crate) fn rolling_back(
    c: &Consumer,
    deployments: &CowMap<DeploymentId, Deployment>,
    resource: &str,
) -> bool {
    c.active
        .get(resource)
        .and_then(|id| deployments.get(id))
        .is_some_and(|d| d.status.is_active() && !d.status.is_forward())
}

/// The lowest version of `resource` the active, interested nodes of `c` that run one run (`None`: none runs
/// one, or one runs a retracted version).
fn floor(
    c: &Consumer,
    nodes: &NodeTable,
    resource: &str,
    retracted: impl Fn(u64) -> bool,
) -> Option<u64> {
    let mut low: Option<u64> = None;
    for n in &c.nodes {
        let Some(ns) = nodes.get(n) else {
            continue;
        };
        if !ns.active || !ns.interested(resource) {
            continue;
        }
        let Some(current) = ns.current(resource) else {
            continue;
        };
        if retracted(current) {
            return None;
        }
        low = Some(low.map_or(current, |l| l.min(current)));
    }
    low
}

#[cfg(test)]
#[path = "reached_test.rs"]
mod tests;
