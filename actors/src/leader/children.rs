//! The supervisor's children: one deployment child per active deployment, one group-deployment
//! child per running group deployment and one consumer child per consumer. Built from the applied
//! state when leadership begins (the pulse countdowns re-armed from the replicated last-pulse time
//! by `rearm_pulses`), then started, stopped and re-armed only as the outcome of the applies names
//! them (matched against the whole state when the outcome gave up its detail), and all stopped when
//! leadership ends. How a child runs is its [`Kin`]'s business: an actix actor in the server
//! (`actix_kin.rs`), a plain handler driven by convoy-lab's simulation.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::host::{read_with, Host};
use crate::domain::{ClusterState, DeploymentId, GroupDeploymentId, Outcome, Timestamp};

/// How the supervisor's children are started, told and stopped.
pub trait Kin {
    /// One active deployment's child.
    type Deployment;
    /// One running group deployment's child.
    type Group;
    /// One consumer's child.
    type Consumer;
    /// Starts the child of deployment `id`, its timer armed at `deadline`.
    fn start_deployment(
        &mut self,
        id: DeploymentId,
        host: &Arc<dyn Host>,
        deadline: Option<Timestamp>,
    ) -> Self::Deployment;
    /// Tells a deployment's child its deadline now.
    fn rearm(&mut self, child: &mut Self::Deployment, deadline: Option<Timestamp>);
    /// Stops a deployment's child.
    fn stop_deployment(&mut self, child: Self::Deployment);
    /// Starts the child of group deployment `id` (it reads the running step).
    fn start_group(&mut self, id: GroupDeploymentId, host: &Arc<dyn Host>) -> Self::Group;
    /// Tells a group deployment's child that step `step` started.
    fn step_started(&mut self, child: &mut Self::Group, step: u32);
    /// Stops a group deployment's child.
    fn stop_group(&mut self, child: Self::Group);
    /// Starts the child of consumer `name`.
    fn start_consumer(&mut self, name: &str, host: &Arc<dyn Host>) -> Self::Consumer;
    /// Stops a consumer's child.
    fn stop_consumer(&mut self, child: Self::Consumer);
}

/// The leader's children, by what they follow.
pub struct Children<K: Kin> {
    host: Arc<dyn Host>,
    kin: K,
    deployments: BTreeMap<DeploymentId, K::Deployment>,
    groups: BTreeMap<GroupDeploymentId, K::Group>,
    consumers: BTreeMap<String, K::Consumer>,
}

impl<K: Kin> Children<K> {
    /// No children yet; `kin` runs them.
    pub fn new(host: Arc<dyn Host>, kin: K) -> Self {
        Self {
            host,
            kin,
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
        for (_, child) in std::mem::take(&mut self.deployments) {
            self.kin.stop_deployment(child);
        }
        for (_, child) in std::mem::take(&mut self.groups) {
            self.kin.stop_group(child);
        }
        for (_, child) in std::mem::take(&mut self.consumers) {
            self.kin.stop_consumer(child);
        }
        tracing::info!("leader actors stopped");
    }

    /// The applied state changed: takes the outcome of the applies since the last change and
    /// follows it.
    pub fn state_changed(&mut self) {
        let outcome = self.host.take_outcome();
        self.follow(outcome);
    }

    /// The child of consumer `name`, which the applied state knows: started now when the state
    /// change that created the consumer has not reached [`Children::state_changed`] yet (it is
    /// notified asynchronously), so a report that follows the consumer's creation at once is not
    /// dropped.
    pub fn consumer(&mut self, name: &str) -> &mut K::Consumer {
        if !self.consumers.contains_key(name) {
            tracing::debug!(consumer = %name, "report before the consumer's actor: started now");
            let child = self.kin.start_consumer(name, &self.host);
            self.consumers.insert(name.to_string(), child);
        }
        self.consumers
            .get_mut(name)
            .expect("the consumer's child was just started")
    }

    /// The deployment children, in id order.
    pub fn deployments(&self) -> &BTreeMap<DeploymentId, K::Deployment> {
        &self.deployments
    }

    /// The deployment children, in id order, to drive.
    pub fn deployments_mut(&mut self) -> &mut BTreeMap<DeploymentId, K::Deployment> {
        &mut self.deployments
    }

    /// The group-deployment children, in id order.
    pub fn groups(&self) -> &BTreeMap<GroupDeploymentId, K::Group> {
        &self.groups
    }

    /// The consumer children, by name, to drive.
    pub fn consumers_mut(&mut self) -> &mut BTreeMap<String, K::Consumer> {
        &mut self.consumers
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
            if let Some(child) = self.groups.get_mut(&id) {
                self.kin.step_started(child, step);
            }
        }
        for id in outcome.groups_ended() {
            self.end_group(id);
        }
        for name in outcome.consumers() {
            self.consumer_changed(name, |s| s.has_consumer(name));
        }
    }

    /// Deployment `id` is active with `deadline`: its child is told, or started armed there.
    fn deployment_changed(&mut self, id: DeploymentId, deadline: Option<Timestamp>) {
        if let Some(child) = self.deployments.get_mut(&id) {
            self.kin.rearm(child, deadline);
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
        let child = self.kin.start_deployment(id, &self.host, deadline);
        self.deployments.insert(id, child);
    }

    fn end_deployment(&mut self, id: DeploymentId) {
        if let Some(child) = self.deployments.remove(&id) {
            self.kin.stop_deployment(child);
            let status = read_with(&self.host, |s| s.deployment_status(id));
            tracing::info!(deployment = %id, status = status.map_or("FORGOTTEN", |s| s.as_str()), "deployment no longer active");
        }
    }

    fn start_group(&mut self, id: GroupDeploymentId) {
        if self.groups.contains_key(&id) || read_with(&self.host, |s| s.group_step(id)).is_none() {
            return;
        }
        let child = self.kin.start_group(id, &self.host);
        self.groups.insert(id, child);
    }

    fn end_group(&mut self, id: GroupDeploymentId) {
        if let Some(child) = self.groups.remove(&id) {
            self.kin.stop_group(child);
        }
    }

    /// Consumer `name` was created or deleted: start or stop its actor to match `exists`.
    fn consumer_changed(&mut self, name: &str, exists: impl FnOnce(&ClusterState) -> bool) {
        let exists = read_with(&self.host, exists);
        match (exists, self.consumers.contains_key(name)) {
            (true, false) => {
                let child = self.kin.start_consumer(name, &self.host);
                self.consumers.insert(name.to_string(), child);
            }
            (false, true) => {
                if let Some(child) = self.consumers.remove(name) {
                    self.kin.stop_consumer(child);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "children_test.rs"]
mod tests;
