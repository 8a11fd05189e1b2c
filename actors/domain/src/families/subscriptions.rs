//! Commands on subscriptions (full replace, field-by-field patch) and on held-back versions: a version
//! rolled back by a deployment is held back on its consumer until a person deploys it or clears the hold.
//!
//! [`Subscriptions`] is the family's handler: it borrows the consumers (subscriptions and holds), the nodes
//! (a subscribed resource is no longer to be removed) and the deployments (the events of holds) mutably,
//! and the resources to check against. Every command that succeeds may change selections, so `apply`
//! reconciles after it; `Holds::release_hold` answers whether it released one (then `apply` reconciles too).

use crate::analysis::run::Verdict;
use crate::deployment::{Deployment, EventKind};
use crate::entities::brake::{Named, Trip};
use crate::entities::model::{
    Consumer, ConsumerEventKind, Hold, HoldOrigin, Mode, Resource, Subscription,
};
use crate::entities::nodes::NodeTable;
use crate::entities::policy::{Change, Policy, PolicyPatch};
use crate::errors::{DomainError, Entity};
use crate::families::reached::Reached;
use crate::families::removal::unmark_removal;
use crate::values::ids::{Actor, DeploymentId, Timestamp};
use crate::values::status::Status;
use convoy_collections::CowMap;

/// `Subscribe`, `PatchSubscription` and `ClearHold`, and holding back a rolled-back version, over the maps
/// they touch.
pub(crate) struct Subscriptions<'a> {
    /// The consumers whose subscriptions and holds change.
    pub consumers: &'a mut CowMap<String, Consumer>,
    /// The nodes: a resource subscribed again is no longer to be removed there.
    pub nodes: &'a mut NodeTable,
    /// The deployments whose events record a hold put or released.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
    /// The resources a subscription and its pin must name.
    pub resources: &'a CowMap<String, Resource>,
}

impl Subscriptions<'_> {
    /// Creates or replaces a subscription: every field is the given one (PUT).
    pub(crate) fn subscribe(
        &mut self,
        consumer: String,
        resource: String,
        mode: Mode,
        pin: Option<u64>,
        policy: Policy,
    ) -> Result<(), DomainError> {
        self.check_subscription(&consumer, &resource, pin, &policy)?;
        let c = self.consumers.get_mut(&consumer).expect("checked");
        let was = c.subscriptions.get(&resource).and_then(|s| s.pin);
        self.check_new_pin(&resource, was, pin)?;
        let c = self.consumers.get_mut(&consumer).expect("checked");
        let old = c.subscriptions.remove(&resource).unwrap_or_default();
        let sub = Subscription {
            mode,
            pin,
            policy,
            last_started: old.last_started,
            // A change of mode starts over: a strong subscription deploys what differs from its last start.
            last_selected: old.last_selected.filter(|_| old.mode == mode),
            version: old.version,
            kept: None,
            reached: None,
            brake_record: Default::default(),
        };
        let nodes = c.nodes.clone();
        for n in &nodes {
            unmark_removal(self.nodes, n, &resource);
        }
        let c = self.consumers.get_mut(&consumer).expect("checked");
        c.subscriptions.insert(resource.clone(), sub);
        self.start_over(&consumer, &resource);
        Ok(())
    }

    /// Changes the given fields of an existing subscription and leaves the others (PATCH).
    pub(crate) fn patch(
        &mut self,
        consumer: String,
        resource: String,
        mode: Option<Mode>,
        pin: Change<u64>,
        patch: PolicyPatch,
    ) -> Result<(), DomainError> {
        let c = self
            .consumers
            .get(&consumer)
            .ok_or_else(|| DomainError::not_found(Entity::Consumer, &consumer))?;
        let old = c.subscriptions.get(&resource).ok_or_else(|| {
            DomainError::not_found(Entity::Subscription, format!("{consumer}/{resource}"))
        })?;
        let mut new = old.clone();
        if let Some(m) = mode {
            new.mode = m;
        }
        pin.apply(&mut new.pin);
        if new.mode != old.mode {
            // A change of mode starts over: a strong subscription deploys what differs from its last start.
            new.last_selected = None;
        }
        new.policy.patch(patch);
        // An edit of the subscription is a new decision: what a deployment by hand left stops counting.
        new.kept = None;
        new.reached = None;
        new.brake_record = Default::default();
        self.check_subscription(&consumer, &resource, new.pin, &new.policy)?;
        self.check_new_pin(&resource, old.pin, new.pin)?;
        let c = self.consumers.get_mut(&consumer).expect("checked");
        c.subscriptions.insert(resource.clone(), new);
        self.start_over(&consumer, &resource);
        Ok(())
    }

    /// A new or edited subscription is a new decision: what its nodes reached starts over from what they
    /// run now (`reached.rs`), so a dependency on it holds again only as they stand.
    fn start_over(&mut self, consumer: &str, resource: &str) {
        Reached {
            consumers: self.consumers,
            nodes: self.nodes,
            resources: self.resources,
            deployments: self.deployments,
        }
        .revoke(consumer, resource);
    }

    fn check_subscription(
        &self,
        consumer: &str,
        resource: &str,
        pin: Option<u64>,
        policy: &Policy,
    ) -> Result<(), DomainError> {
        if !self.consumers.contains_key(consumer) {
            return Err(DomainError::not_found(Entity::Consumer, consumer));
        }
        let res = self
            .resources
            .get(resource)
            .ok_or_else(|| DomainError::not_found(Entity::Resource, resource))?;
        policy.validate()?;
        if let Some(v) = pin {
            if !res.versions.contains_key(&v) {
                return Err(DomainError::UnknownVersion {
                    resource: resource.into(),
                    version: v,
                });
            }
        }
        Ok(())
    }

    /// A pin may not newly name a retracted version (one retracted after it was pinned stays pinned, and
    /// selection takes the newest allowed version below it).
    fn check_new_pin(
        &self,
        resource: &str,
        was: Option<u64>,
        now: Option<u64>,
    ) -> Result<(), DomainError> {
        let retracted = |v: u64| self.resources.get(resource).is_some_and(|r| r.retracted(v));
        match now {
            Some(v) if was != Some(v) && retracted(v) => Err(DomainError::Retracted {
                resource: resource.into(),
                version: v,
            }),
            _ => Ok(()),
        }
    }

    /// A person (`by`) lifts a hold at `at`: the version may be selected (and deployed automatically)
    /// again. Answers the message recorded on the deployment that put the hold.
    pub(crate) fn clear_hold(
        &mut self,
        consumer: &str,
        resource: &str,
        version: u64,
        by: &Actor,
        at: Timestamp,
    ) -> Result<String, DomainError> {
        let c = self
            .consumers
            .get(consumer)
            .ok_or_else(|| DomainError::not_found(Entity::Consumer, consumer))?;
        if !c.held(resource, version) {
            return Err(DomainError::not_found(
                Entity::Hold,
                format!("{consumer}/{resource}@{version}"),
            ));
        }
        Holds {
            consumers: self.consumers,
            deployments: self.deployments,
        }
        .release_hold(
            consumer,
            resource,
            version,
            &format!("cleared by {}", by.name()),
            by,
            at,
        )
        .ok_or_else(|| {
            DomainError::not_found(Entity::Hold, format!("{consumer}/{resource}@{version}"))
        })
    }
}

/// Why a rolled-back deployment is no evidence against its version (`None`: it is): a version is held only
/// when nodes failed it past their retries or its analysis failed it (DEPLOYMENTS.md §10). A deployment
/// rolled back by its completion timeout or progress deadline, by a person, or that never admitted a node
/// holds nothing.
fn no_evidence(d: &Deployment) -> Option<&'static str> {
    let analysis_failed = d
        .analysis
        .as_ref()
        .is_some_and(|a| a.verdict == Verdict::Failed);
    if d.tally.failed > 0 || analysis_failed {
        return None;
    }
    if d.touched.is_empty() {
        return Some("it never admitted a node, so no node failed it");
    }
    Some("no node failed it and no analysis failed it (a timer or a person rolled it back)")
}

/// Holding back a rolled-back version and releasing a hold, over the consumers (their holds) and the
/// deployments (whose events say so). Ending a deployment (`settle.rs`) and starting one by hand use it too.
pub(crate) struct Holds<'a> {
    /// The consumers whose holds change.
    pub consumers: &'a mut CowMap<String, Consumer>,
    /// The deployments whose events record a hold put or released.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
}

impl Holds<'_> {
    /// Holds back the version of deployment `id`, which ended ROLLED_BACK, on its consumer, and says so
    /// in its events.
    pub(crate) fn hold_rolled_back(&mut self, id: DeploymentId, at: Timestamp) {
        let Some(d) = self.deployments.get(&id) else {
            return;
        };
        if d.status != Status::RolledBack {
            return;
        }
        let (consumer, resource, version) = (d.consumer.clone(), d.resource.clone(), d.version);
        if let Some(why) = no_evidence(d) {
            // A timer, a person or an empty deployment ended it: nothing says the version is bad.
            let message =
                format!("version {version} of {resource} not held back on {consumer}: {why}");
            if let Some(d) = self.deployments.get_mut(&id) {
                d.push_event(at, EventKind::NotHeld, None, Actor::System, Some(message));
            }
            return;
        }
        let Some(c) = self.consumers.get_mut(&consumer) else {
            return;
        };
        let converged = c.subscriptions.get(&resource).and_then(|s| s.version);
        if converged == Some(version) {
            // The consumer's other nodes run it: holding it back would have a strong subscription
            // downgrade them all because of the few nodes this deployment took (a follow-up's).
            let message = format!(
                "version {version} of {resource} not held back on {consumer}: {consumer} converged on it, \
                 so the nodes that failed are the problem, not the version"
            );
            if let Some(d) = self.deployments.get_mut(&id) {
                d.push_event(at, EventKind::NotHeld, None, Actor::System, Some(message));
            }
            return;
        }
        let hold = Hold::rolled_back(id, at);
        let message = hold.reason(&consumer, &resource, version);
        c.holds.entry(resource).or_default().insert(version, hold);
        if let Some(d) = self.deployments.get_mut(&id) {
            d.push_event(at, EventKind::Held, None, Actor::System, Some(message));
        }
    }

    /// Holds back version `version` of `resource` on `consumer` because its weak subscription's brake
    /// tripped, and says so in the consumer's events, naming the failed nodes (`named`, bounded); answers
    /// the event's message (`None`: no such consumer, or the version is already held there).
    pub(crate) fn hold_by_brake(
        &mut self,
        consumer: &str,
        resource: &str,
        version: u64,
        trip: Trip,
        named: &Named,
        at: Timestamp,
    ) -> Option<String> {
        let c = self.consumers.get_mut(consumer)?;
        if c.held(resource, version) {
            return None;
        }
        let hold = Hold {
            origin: HoldOrigin::Brake(trip),
            at,
        };
        let message = format!(
            "{}; failed: {named}",
            hold.reason(consumer, resource, version)
        );
        c.holds
            .entry(resource.to_string())
            .or_default()
            .insert(version, hold);
        c.push_event(at, ConsumerEventKind::Held, Actor::System, message.clone());
        Some(message)
    }

    /// Removes a hold and records why on the deployment that put it (a brake's: on the consumer); returns
    /// that message (`None`: no such hold). A released hold may change selections: the caller reconciles.
    pub(crate) fn release_hold(
        &mut self,
        consumer: &str,
        resource: &str,
        version: u64,
        why: &str,
        by: &Actor,
        at: Timestamp,
    ) -> Option<String> {
        let c = self.consumers.get_mut(consumer)?;
        let holds = c.holds.get_mut(resource)?;
        let hold = holds.remove(&version)?;
        if holds.is_empty() {
            c.holds.remove(resource);
        }
        let message =
            format!("version {version} of {resource} no longer held back on {consumer}: {why}");
        match hold.deployment() {
            Some(id) => {
                if let Some(d) = self.deployments.get_mut(&id) {
                    d.push_event(
                        at,
                        EventKind::Released,
                        None,
                        by.clone(),
                        Some(message.clone()),
                    );
                }
            }
            None => c.push_event(at, ConsumerEventKind::Released, by.clone(), message.clone()),
        }
        Some(message)
    }
}

#[cfg(test)]
#[path = "subscriptions_test.rs"]
mod tests;
