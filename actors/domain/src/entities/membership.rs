//! A node in several consumers (DEPLOYMENTS.md §1, §3, §10, §12, §13): every rule that spans a node and the
//! consumers it is in, read-only, one method for each question of ARCHITECTURE's cross-entity table.
//!
//! [`Membership`] reads the consumers; the questions about deployments also read what [`Deployed`] says of
//! the node's active deployments (implemented over the deployment map in `deployment/`, which uses this
//! layer, so this module does not use it back).

use crate::entities::model::{Consumer, Hold, NodeState};
use crate::values::ids::DeploymentId;
use convoy_collections::CowMap;

/// What the rules read of a deployment that contains a node (`NodeState::deployments` lists the active
/// ones): the consumer and resource it rolls out.
pub(crate) trait Deployed {
    /// Deployment `id`'s consumer and resource; `None` for an unknown id.
    fn rollout(&self, id: DeploymentId) -> Option<(&str, &str)>;
}

/// Why a deployment on one of a node's consumers leaves the node out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LeftOut<'a> {
    /// It does not report (silent, or never reported).
    Inactive,
    /// It said it no longer wants the resource.
    NotInterested,
    /// Another consumer of it holds the version back: the strictest wins (§10).
    Held {
        /// The consumer that holds it.
        consumer: &'a str,
        /// Its hold.
        hold: &'a Hold,
    },
    /// An active deployment of the resource already takes it: a node follows one deployment of a resource
    /// at a time (§3).
    Taken {
        /// That deployment.
        deployment: DeploymentId,
        /// Its consumer.
        consumer: &'a str,
    },
}

impl LeftOut<'_> {
    /// Why, as a plan says it (`views/plan.rs`), for a deployment of `version` of `resource`.
    pub(crate) fn why(&self, resource: &str, version: u64) -> String {
        match self {
            LeftOut::Inactive => "inactive (silent, or never reported)".into(),
            LeftOut::NotInterested => format!("not interested in {resource}"),
            LeftOut::Held { consumer, hold } => hold.reason(consumer, resource, version),
            LeftOut::Taken {
                deployment,
                consumer,
            } => format!(
                "in {deployment}, an active deployment of {resource} on consumer {consumer:?}"
            ),
        }
    }
}

/// The rules of a node in several consumers, over the consumers.
#[derive(Clone, Copy)]
pub(crate) struct Membership<'a> {
    /// The consumers: their subscriptions and holds.
    pub consumers: &'a CowMap<String, Consumer>,
}

impl<'a> Membership<'a> {
    /// Which consumers node `ns` is in, by name (kept equal to the consumers' node lists). A budget of each
    /// counts it (`policy/ledger.rs`), once however many.
    pub(crate) fn consumers_of(ns: &NodeState) -> impl Iterator<Item = &str> + '_ {
        ns.consumers.iter().map(String::as_str)
    }

    /// The active deployment of `resource` that node `ns` follows: a node follows one deployment of a
    /// resource at a time, whichever consumer it belongs to.
    pub(crate) fn deployment_of(
        ns: &NodeState,
        resource: &str,
        deployments: &dyn Deployed,
    ) -> Option<DeploymentId> {
        Self::taken_by(ns, resource, deployments).map(|(id, _)| id)
    }

    /// The active deployment of `resource` that contains node `ns`, and its consumer.
    fn taken_by<'d>(
        ns: &NodeState,
        resource: &str,
        deployments: &'d dyn Deployed,
    ) -> Option<(DeploymentId, &'d str)> {
        ns.deployments.iter().find_map(|(id, _)| {
            let (consumer, r) = deployments.rollout(*id)?;
            (r == resource).then_some((*id, consumer))
        })
    }

    /// Whether a deployment of `version` of `resource` on `consumer` takes node `ns` of it, and if not why:
    /// it takes its active, interested nodes but those on which another of their consumers holds the
    /// version back and those another active deployment of the resource already takes.
    pub(crate) fn takes(
        &self,
        ns: &'a NodeState,
        consumer: &'a str,
        resource: &'a str,
        version: u64,
        deployments: &'a dyn Deployed,
    ) -> Result<(), LeftOut<'a>> {
        if !ns.active {
            return Err(LeftOut::Inactive);
        }
        if !ns.interested(resource) {
            return Err(LeftOut::NotInterested);
        }
        let mut held = self.holds_on(ns, consumer, resource, version);
        // Its own consumer's hold is the start's to refuse (without `force`), not the node's.
        if let Some((consumer, hold)) = held.find(|(c, _)| *c != consumer) {
            return Err(LeftOut::Held { consumer, hold });
        }
        match Self::taken_by(ns, resource, deployments) {
            Some((deployment, consumer)) => Err(LeftOut::Taken {
                deployment,
                consumer,
            }),
            None => Ok(()),
        }
    }

    /// The consumers whose subscriptions node `ns` may follow outside a deployment, in the order it tries
    /// them: by name. For a resource, the first whose subscription gives it a target is the one it follows
    /// (`views/targets.rs`).
    pub(crate) fn subscribers_of(
        &self,
        ns: &'a NodeState,
    ) -> impl Iterator<Item = (&'a str, &'a Consumer)> + 'a {
        let consumers = self.consumers;
        Self::consumers_of(ns).filter_map(move |name| Some((name, consumers.get(name)?)))
    }

    /// The consumer whose subscription to `resource` node `ns` follows: none while an active deployment of
    /// the resource takes it, else the first of its consumers (by name) that subscribes to it.
    pub(crate) fn follows<'n>(
        &self,
        ns: &'n NodeState,
        resource: &str,
        deployments: &dyn Deployed,
    ) -> Option<&'n str> {
        if Self::deployment_of(ns, resource, deployments).is_some() {
            return None;
        }
        Self::consumers_of(ns).find(|c| {
            self.consumers
                .get(*c)
                .is_some_and(|c| c.subscriptions.contains_key(resource))
        })
    }

    /// The holds that keep `version` of `resource` off node `ns` as a node of `consumer`: `consumer`'s first
    /// (it may not list the node yet), then those of the node's other consumers by name. Whichever consumer
    /// it follows, a version held on any of them is not selected for it (the strictest wins, §10).
    pub(crate) fn holds_on(
        &self,
        ns: &'a NodeState,
        consumer: &'a str,
        resource: &'a str,
        version: u64,
    ) -> impl Iterator<Item = (&'a str, &'a Hold)> + 'a {
        let consumers = self.consumers;
        let others = Self::consumers_of(ns).filter(move |c| *c != consumer);
        std::iter::once(consumer)
            .chain(others)
            .filter_map(move |c| Some((c, consumers.get(c)?.holds.get(resource)?.get(&version)?)))
    }

    /// The consumer whose actor takes node `ns`'s reports: its first by name; for a node in none that
    /// still removes what it held, the first consumer of the state (the removal names the node, not the
    /// consumer); `None` when it has nothing to record.
    pub(crate) fn report_consumer(&self, ns: &'a NodeState) -> Option<&'a str> {
        match Self::consumers_of(ns).next() {
            Some(c) => Some(c),
            None if !ns.removing.is_empty() => self.consumers.keys().next().map(String::as_str),
            None => None,
        }
    }

    /// Whether the leader expects reports from node `ns`: once per node, however many consumers it is in;
    /// an active node of some consumer (one silent longer than the node timeout is marked inactive).
    pub(crate) fn expects_reports(ns: &NodeState) -> bool {
        ns.active && !ns.consumers.is_empty()
    }

    /// Whether a consumer of node `ns` still subscribes to `resource`: what it holds of a resource none
    /// subscribes to any more (it left a consumer, a subscription or a consumer went) it must remove.
    pub(crate) fn wanted(&self, ns: &NodeState, resource: &str) -> bool {
        Self::consumers_of(ns).any(|c| {
            self.consumers
                .get(c)
                .is_some_and(|c| c.subscriptions.contains_key(resource))
        })
    }

    /// Whether node `ns` left every consumer and every active deployment: the state no longer needs it
    /// (forgotten once silent for `forget_nodes_after`).
    pub(crate) fn forgettable(ns: &NodeState) -> bool {
        ns.consumers.is_empty() && ns.deployments.is_empty()
    }
}

#[cfg(test)]
#[path = "membership_test.rs"]
mod tests;
