//! The supervisor's children: one deployment actor per active deployment, one group-deployment
//! actor per running group deployment and one consumer actor per consumer. Built from the applied
//! state when leadership begins (the pulse countdowns re-armed from the replicated last-pulse time
//! by `rearm_pulses`), then started, stopped and re-armed only as the outcome of the applies names
//! them (matched against the whole state when the outcome gave up its detail), and all stopped when
//! leadership ends.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use actix::prelude::*;

use super::consumer_actor::ConsumerActor;
use super::deployment_actor::DeploymentActor;
use super::group_actor::GroupDeploymentActor;
use super::host::{read_with, Host};
use super::messages::{Rearm, StepStarted, Stop};
use crate::domain::{ClusterState, DeploymentId, GroupDeploymentId, Outcome, Timestamp};

/// The leader's child actors, by what they follow.
pub(crate) struct Children {
    host: Arc<dyn Host>,
    deployments: BTreeMap<DeploymentId, Addr<DeploymentActor>>,
    groups: BTreeMap<GroupDeploymentId, Addr<GroupDeploymentActor>>,
    consumers: BTreeMap<String, Addr<ConsumerActor>>,
}

impl Children {
    /// No children yet.
    pub fn new(host: Arc<dyn Host>) -> Self {
        Self {
            host,
            deployments: BTreeMap::new(),
            groups: BTreeMap::new(),
            consumers: BTreeMap::new(),
        }
    }

    /// Builds every child from the applied state: the outcomes applied so far are in it, so they
    /// are dropped; pulse countdowns that ran out while no leader watched fire at once.
    pub fn start_all(&mut self) {
        drop(self.host.take_outcome());
        let now = self.host.now_ms();
        let (expired, next) = read_with(&self.host, |s| (s.rearm_pulses(now), s.next_deadline()));
        for id in &expired {
            // Their countdown ran out while no leader watched: their actor ticks at once, which blocks them.
            tracing::info!(deployment = %id, "pulse countdown expired across the failover");
        }
        self.sync();
        tracing::info!(
            deployments = self.deployments.len(),
            groups = self.groups.len(),
            consumers = self.consumers.len(),
            next_deadline_in_ms = next.map(|d| d.saturating_sub(now)),
            "leader actors started"
        );
    }

    /// Stops every child.
    pub fn stop_all(&mut self) {
        for (_, addr) in std::mem::take(&mut self.deployments) {
            addr.do_send(Stop);
        }
        for (_, addr) in std::mem::take(&mut self.groups) {
            addr.do_send(Stop);
        }
        for (_, addr) in std::mem::take(&mut self.consumers) {
            addr.do_send(Stop);
        }
        tracing::info!("leader actors stopped");
    }

    /// The applied state changed: takes the outcome of the applies since the last change and
    /// follows it.
    pub fn state_changed(&mut self) {
        let outcome = self.host.take_outcome();
        self.follow(outcome);
    }

    /// The actor of consumer `name`, which the applied state knows: started now when the state
    /// change that created the consumer has not reached [`Children::state_changed`] yet (it is
    /// notified asynchronously), so a report that follows the consumer's creation at once is not
    /// dropped.
    pub fn consumer_actor(&mut self, name: &str) -> Addr<ConsumerActor> {
        if let Some(addr) = self.consumers.get(name) {
            return addr.clone();
        }
        tracing::debug!(consumer = %name, "report before the consumer's actor: started now");
        let addr = ConsumerActor::new(name.to_string(), self.host.clone()).start();
        self.consumers.insert(name.to_string(), addr.clone());
        addr
    }

    /// The deployment and group-deployment children, in id order (tests).
    #[cfg(test)]
    pub fn list(&self) -> super::messages::ChildList {
        super::messages::ChildList {
            deployments: self
                .deployments
                .iter()
                .map(|(id, a)| (*id, a.clone()))
                .collect(),
            groups: self.groups.iter().map(|(id, a)| (*id, a.clone())).collect(),
        }
    }

    /// Matches every child to the whole applied state and tells every deployment actor its deadline
    /// (leadership began, or an outcome gave up its detail).
    fn sync(&mut self) {
        type Deadlines = Vec<(DeploymentId, Option<Timestamp>)>;
        let (active, groups, consumers): (Deadlines, Vec<GroupDeploymentId>, BTreeSet<String>) =
            read_with(&self.host, |s| {
                (
                    s.active_deployments()
                        .into_iter()
                        .map(|id| (id, s.deployment_deadline(id)))
                        .collect(),
                    s.running_group_deployments(),
                    s.consumer_names().cloned().collect(),
                )
            });
        let ids: BTreeSet<DeploymentId> = active.iter().map(|(id, _)| *id).collect();
        let gone: Vec<DeploymentId> = self
            .deployments
            .keys()
            .filter(|id| !ids.contains(id))
            .copied()
            .collect();
        for id in gone {
            self.end_deployment(id);
        }
        for (id, deadline) in active {
            self.deployment_changed(id, deadline);
        }
        let running: BTreeSet<GroupDeploymentId> = groups.iter().copied().collect();
        let ended: Vec<GroupDeploymentId> = self
            .groups
            .keys()
            .filter(|id| !running.contains(id))
            .copied()
            .collect();
        for id in ended {
            self.end_group(id);
        }
        for id in groups {
            self.start_group(id);
        }
        let names: Vec<String> = self
            .consumers
            .keys()
            .filter(|n| !consumers.contains(*n))
            .cloned()
            .collect();
        for name in names.into_iter().chain(consumers) {
            self.consumer_changed(&name, |s| s.has_consumer(&name));
        }
    }

    /// Acts on what the applies since the last state change changed, and on nothing else: an
    /// unrelated batch (reports of nodes in no deployment) leaves every child untouched.
    fn follow(&mut self, outcome: Outcome) {
        if outcome.needs_resync() {
            self.sync();
            return;
        }
        for id in outcome.ended() {
            self.end_deployment(id);
        }
        for (id, deadline) in outcome.deadlines() {
            let active = read_with(&self.host, |s| s.is_active(id));
            if active {
                self.deployment_changed(id, deadline);
            } else {
                self.end_deployment(id);
            }
        }
        for id in outcome.groups_started() {
            self.start_group(id);
        }
        for (id, step) in outcome.steps() {
            if let Some(addr) = self.groups.get(&id) {
                addr.do_send(StepStarted(step));
            }
        }
        for id in outcome.groups_ended() {
            self.end_group(id);
        }
        for name in outcome.consumers() {
            self.consumer_changed(name, |s| s.has_consumer(name));
        }
    }

    /// Deployment `id` is active with `deadline`: its actor is told, or started armed there.
    fn deployment_changed(&mut self, id: DeploymentId, deadline: Option<Timestamp>) {
        if let Some(addr) = self.deployments.get(&id) {
            addr.do_send(Rearm(deadline));
            return;
        }
        let what = read_with(&self.host, |s| {
            let (consumer, resource, version) = s.rollout_of(id)?;
            let status = s.deployment_status(id)?;
            Some((consumer.to_string(), resource.to_string(), version, status))
        });
        if let Some((consumer, resource, version, status)) = what {
            tracing::info!(deployment = %id, %consumer, %resource, version, status = status.as_str(), "deployment active: its timer runs on this leader");
        }
        let addr = DeploymentActor::with_deadline(id, self.host.clone(), deadline).start();
        self.deployments.insert(id, addr);
    }

    fn end_deployment(&mut self, id: DeploymentId) {
        if let Some(addr) = self.deployments.remove(&id) {
            addr.do_send(Stop);
            let status = read_with(&self.host, |s| s.deployment_status(id));
            tracing::info!(deployment = %id, status = status.map_or("FORGOTTEN", |s| s.as_str()), "deployment no longer active");
        }
    }

    fn start_group(&mut self, id: GroupDeploymentId) {
        if self.groups.contains_key(&id) || read_with(&self.host, |s| s.group_step(id)).is_none() {
            return;
        }
        let addr = GroupDeploymentActor::new(id, self.host.clone()).start();
        self.groups.insert(id, addr);
    }

    fn end_group(&mut self, id: GroupDeploymentId) {
        if let Some(addr) = self.groups.remove(&id) {
            addr.do_send(Stop);
        }
    }

    /// Consumer `name` was created or deleted: start or stop its actor to match `exists`.
    fn consumer_changed(&mut self, name: &str, exists: impl FnOnce(&ClusterState) -> bool) {
        let exists = read_with(&self.host, exists);
        match (exists, self.consumers.contains_key(name)) {
            (true, false) => {
                let addr = ConsumerActor::new(name.to_string(), self.host.clone()).start();
                self.consumers.insert(name.to_string(), addr);
            }
            (false, true) => {
                if let Some(addr) = self.consumers.remove(name) {
                    addr.do_send(Stop);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "children_test.rs"]
mod tests;
