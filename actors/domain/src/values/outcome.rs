//! What one `apply` changed that the leader's actors act on: deployments started and ended, the
//! deadline of every deployment the command touched, group deployments started, advanced a step or
//! ended, and consumers created or deleted. Part of the pure apply: the same command at the same
//! time gives the same outcome on every server. Outcomes of many applies merge into one.

use crate::values::ids::{DeploymentId, GroupDeploymentId, Timestamp};
use std::collections::{BTreeMap, BTreeSet};

/// Entries a merged outcome holds before it gives up the detail and asks for a full re-sync (a
/// follower merges outcomes that no actor takes; a consumer of 100 000 nodes created at once is
/// cheaper to re-read than to list).
pub const MAX_OUTCOME_ENTRIES: usize = 10_000;

/// What changed, for the leader's actors. Empty when a command changed nothing they watch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The detail was dropped (too many entries, or a snapshot replaced the state): every actor
    /// must be matched against the whole state.
    resync: bool,
    /// Deployments created by this apply (by a person, an automatic subscription or a group step).
    started: BTreeSet<DeploymentId>,
    /// Deployments that became terminal.
    ended: BTreeSet<DeploymentId>,
    /// Every deployment the apply changed, with its earliest time-based rule now (`None`: none,
    /// or the deployment ended). Unchanged deadlines are listed too; the actor ignores them.
    deadlines: BTreeMap<DeploymentId, Option<Timestamp>>,
    /// Group deployments created by this apply.
    groups_started: BTreeSet<GroupDeploymentId>,
    /// Group deployments whose running step moved on, with the index of the step now running.
    steps: BTreeMap<GroupDeploymentId, u32>,
    /// Group deployments that stopped running (succeeded, failed or aborted).
    groups_ended: BTreeSet<GroupDeploymentId>,
    /// Consumers created or deleted.
    consumers: BTreeSet<String>,
    /// What the servers' log must say: a version a weak subscription's brake held back.
    notices: Vec<String>,
}

impl Outcome {
    /// An outcome that only says "re-read everything" (a restored snapshot, a new leader).
    pub fn resync() -> Self {
        Self {
            resync: true,
            ..Self::default()
        }
    }

    /// Nothing changed that an actor watches.
    pub fn is_empty(&self) -> bool {
        !self.resync && self.len() == 0
    }

    /// The detail was dropped: match every actor against the whole state.
    pub fn needs_resync(&self) -> bool {
        self.resync
    }

    /// Deployments started, in id order.
    pub fn started(&self) -> impl Iterator<Item = DeploymentId> + '_ {
        self.started.iter().copied()
    }

    /// Deployments ended, in id order.
    pub fn ended(&self) -> impl Iterator<Item = DeploymentId> + '_ {
        self.ended.iter().copied()
    }

    /// Deployments changed, with their deadline after the change, in id order.
    pub fn deadlines(&self) -> impl Iterator<Item = (DeploymentId, Option<Timestamp>)> + '_ {
        self.deadlines.iter().map(|(id, d)| (*id, *d))
    }

    /// Group deployments started, in id order.
    pub fn groups_started(&self) -> impl Iterator<Item = GroupDeploymentId> + '_ {
        self.groups_started.iter().copied()
    }

    /// Group deployments whose step moved on, with the step now running (0-based).
    pub fn steps(&self) -> impl Iterator<Item = (GroupDeploymentId, u32)> + '_ {
        self.steps.iter().map(|(id, s)| (*id, *s))
    }

    /// Group deployments that stopped running.
    pub fn groups_ended(&self) -> impl Iterator<Item = GroupDeploymentId> + '_ {
        self.groups_ended.iter().copied()
    }

    /// Consumers created or deleted.
    pub fn consumers(&self) -> impl Iterator<Item = &str> + '_ {
        self.consumers.iter().map(String::as_str)
    }

    /// What the servers' log must say (a brake's hold), in order.
    pub fn notices(&self) -> impl Iterator<Item = &str> + '_ {
        self.notices.iter().map(String::as_str)
    }

    /// Adds `later` (the outcome of applies after this one's): later deadlines and steps win. Past
    /// [`MAX_OUTCOME_ENTRIES`] the detail is dropped for a re-sync.
    pub fn merge(&mut self, later: Outcome) {
        if self.resync || later.resync || self.len() + later.len() > MAX_OUTCOME_ENTRIES {
            *self = Self::resync();
            return;
        }
        self.started.extend(later.started);
        self.ended.extend(later.ended);
        self.deadlines.extend(later.deadlines);
        self.groups_started.extend(later.groups_started);
        self.steps.extend(later.steps);
        self.groups_ended.extend(later.groups_ended);
        self.consumers.extend(later.consumers);
        self.notices.extend(later.notices);
    }

    fn len(&self) -> usize {
        self.started.len()
            + self.ended.len()
            + self.deadlines.len()
            + self.groups_started.len()
            + self.steps.len()
            + self.groups_ended.len()
            + self.consumers.len()
            + self.notices.len()
    }

    pub(crate) fn notice(&mut self, message: String) {
        self.notices.push(message);
    }

    pub(crate) fn deployment_started(&mut self, id: DeploymentId) {
        self.started.insert(id);
    }

    pub(crate) fn deployment_ended(&mut self, id: DeploymentId) {
        self.ended.insert(id);
    }

    pub(crate) fn deadline(&mut self, id: DeploymentId, deadline: Option<Timestamp>) {
        self.deadlines.insert(id, deadline);
    }

    pub(crate) fn group_started(&mut self, id: GroupDeploymentId) {
        self.groups_started.insert(id);
    }

    pub(crate) fn group_step(&mut self, id: GroupDeploymentId, step: u32) {
        self.steps.insert(id, step);
    }

    pub(crate) fn group_ended(&mut self, id: GroupDeploymentId) {
        self.groups_ended.insert(id);
    }

    pub(crate) fn consumer_changed(&mut self, name: &str) {
        self.consumers.insert(name.to_string());
    }
}

#[cfg(test)]
#[path = "outcome_test.rs"]
mod tests;
