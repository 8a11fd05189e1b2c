//! Named read-only queries over [`ClusterState`] for the leader's actors and the server: which
//! deployments, group deployments and consumers exist and run, their deadlines, what a report changes.
//! `ClusterState`'s fields are private to state.rs; the domain reads them through its read-only accessors
//! (`deployment_map`, `node_table`...), and everything outside the domain asks one of these (or a view).

use crate::deployment::Deployment;
use crate::entities::group_deployment::{GroupStatus, StepItem};
use crate::entities::membership::Membership;
use crate::entities::model::NodeReport;
use crate::errors::DomainError;
use crate::families::group::plan_group;
use crate::families::reports::holds_nothing;
use crate::families::retention::is_pruned;
use crate::state::ClusterState;
use crate::values::ids::{DeploymentId, GroupDeploymentId, Timestamp};
use crate::values::status::Status;
use std::collections::BTreeMap;

impl ClusterState {
    /// The version `consumer` should run of `resource` (selection.rs, DEPLOYMENTS.md §3); `None`: none
    /// selectable (unknown names, a pin on a held-back version, no version whose dependencies hold).
    pub fn selected_version(&self, consumer: &str, resource: &str) -> Option<u64> {
        self.selection().selected_version(consumer, resource)
    }

    /// Plans the steps of a group deployment of `group` without changing anything (group.rs).
    pub fn plan_group(
        &self,
        group: &str,
        versions: Option<&BTreeMap<String, u64>>,
    ) -> Result<Vec<Vec<StepItem>>, DomainError> {
        plan_group(self.selection(), self.deployment_map(), group, versions)
    }

    /// The earliest time-based rule over all active deployments (group deployments have none of their own:
    /// they advance when their deployments end). A new leader logs it when it builds its actors; the
    /// global `Tick` (kept for old log entries) evaluated every deployment due at that time.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.active_set()
            .iter()
            .filter_map(|id| self.deployment_map().get(id)?.deadline())
            .min()
    }

    /// One deployment's earliest rule: pulse deadline, end of a healthy watch, completion timeout.
    pub fn deployment_deadline(&self, id: DeploymentId) -> Option<Timestamp> {
        self.deployment_map().get(&id)?.deadline()
    }

    /// For a NEW leader, with its own clock: the coordinated deployments whose pulse countdown, re-armed from the
    /// replicated `last_pulse_at`, has already run out at `now`. Their actors tick at once (`TickDeployment`), which
    /// blocks them; the rest keep going and block at their deadline (see the `pulse` module).
    pub fn rearm_pulses(&self, now: Timestamp) -> Vec<DeploymentId> {
        self.active_set()
            .iter()
            .filter(|id| {
                self.deployment_map()
                    .get(id)
                    .and_then(Deployment::pulse_deadline)
                    .is_some_and(|d| d <= now)
            })
            .copied()
            .collect()
    }

    /// How many terminal deployments keep their per-node detail (for the leader's decision to
    /// propose `Prune`): the terminal ones not pruned yet.
    pub fn unpruned_terminal(&self) -> usize {
        self.deployment_map()
            .values()
            .filter(|d| d.status.is_terminal() && !is_pruned(d))
            .count()
    }

    /// Active deployment ids (for the leader's supervisor).
    pub fn active_deployments(&self) -> Vec<DeploymentId> {
        self.active_set().iter().copied().collect()
    }

    /// Running group deployments (for the leader's supervisor), in id order.
    pub fn running_group_deployments(&self) -> Vec<GroupDeploymentId> {
        self.group_deployment_map()
            .values()
            .filter(|gd| gd.status == GroupStatus::Running)
            .map(|gd| gd.id)
            .collect()
    }

    /// The running step (0-based) of a running group deployment; `None` when it is not running.
    pub fn group_step(&self, id: GroupDeploymentId) -> Option<u32> {
        let gd = self.group_deployment_map().get(&id)?;
        (gd.status == GroupStatus::Running).then_some(gd.current_step)
    }

    /// How many steps a group deployment has.
    pub fn group_step_count(&self, id: GroupDeploymentId) -> Option<u32> {
        Some(self.group_deployment_map().get(&id)?.steps.len() as u32)
    }

    /// For the leader's consumer actor: the part of `report` that would change the state, or `None` when
    /// applying it would change nothing (a heartbeat), so heartbeats never reach the log.
    pub fn report_changes(&self, report: &NodeReport) -> Option<NodeReport> {
        let ns = self.node_table().get(&report.node);
        let active_changed = ns.is_none_or(|n| n.active != report.active.unwrap_or(true));
        let mut out = NodeReport {
            node: report.node.clone(),
            active: report.active,
            resources: BTreeMap::new(),
            by: report.by.clone(),
        };
        for (r, rr) in &report.resources {
            let held = ns.and_then(|n| n.resources.get(r));
            // The log path as stored: a change carries it only when it differs, so a repeated path costs the
            // log nothing, whether or not the rest of the resource changed.
            let same_log = held.is_some_and(|c| rr.log.is_some() && c.log == rr.log);
            let changed = match held {
                None => true,
                Some(c) => {
                    rr.interested.is_some_and(|i| i != c.interested)
                        || rr.current.is_some_and(|x| Some(x) != c.current)
                        || ((rr.removed || holds_nothing(rr, || c.interested))
                            && rr.current.is_none()
                            && c.current.is_some())
                        || !rr.versions.iter().eq(c.versions.iter())
                        || (rr.log.is_some() && !same_log)
                }
            };
            if changed {
                let mut change = rr.clone();
                if same_log {
                    change.log = None;
                }
                out.resources.insert(r.clone(), change);
            }
        }
        (active_changed || !out.resources.is_empty()).then_some(out)
    }

    /// Whether consumer `name` exists (the leader runs one consumer actor per consumer).
    pub fn has_consumer(&self, name: &str) -> bool {
        self.consumer_map().contains_key(name)
    }

    /// Whether deployment `id` is active (not terminal): its actor runs on the leader.
    pub fn is_active(&self, id: DeploymentId) -> bool {
        self.active_set().contains(&id)
    }

    /// The active deployment of `resource` on `consumer` (at most one: a second start is refused);
    /// `None` when there is none or either name is unknown. The verbs by job key act on it.
    pub fn active_deployment_of(&self, consumer: &str, resource: &str) -> Option<DeploymentId> {
        self.consumer_map()
            .get(consumer)?
            .active
            .get(resource)
            .copied()
    }

    /// Deployment `id`'s status; `None` for an unknown id.
    pub fn deployment_status(&self, id: DeploymentId) -> Option<Status> {
        self.deployment_map().get(&id).map(|d| d.status)
    }

    /// What deployment `id` rolls out: its consumer, resource and version; `None` for an unknown id.
    pub fn rollout_of(&self, id: DeploymentId) -> Option<(&str, &str, u64)> {
        self.deployment_map()
            .get(&id)
            .map(|d| (d.consumer.as_str(), d.resource.as_str(), d.version))
    }

    /// How many deployments are terminal, pruned or not (O(1): all deployments less the active ones).
    pub fn terminal_deployments(&self) -> usize {
        self.deployment_map().len() - self.active_set().len()
    }

    /// The nodes the leader expects reports from, in id order: those not marked inactive that belong
    /// to a consumer (one silent longer than the node timeout is marked inactive).
    pub fn reporting_nodes(&self) -> impl Iterator<Item = &str> + '_ {
        self.node_table()
            .iter()
            .filter(|(_, n)| Membership::expects_reports(n))
            .map(|(id, _)| id.as_str())
    }

    /// The consumer whose actor takes node `node`'s reports: its first consumer; for a node in no
    /// consumer that still removes what it held, any consumer (the removal names the node, not the
    /// consumer); `None` for a node the state does not know or has nothing to record.
    pub fn report_consumer(&self, node: &str) -> Option<&str> {
        self.selection()
            .membership()
            .report_consumer(self.node_table().get(node)?)
    }

    /// The ids of nodes in no consumer and no active deployment, in id order (the leader forgets those
    /// among them that stayed silent for `forget_nodes_after`).
    pub fn forgettable_nodes(&self) -> impl Iterator<Item = &str> + '_ {
        self.node_table()
            .iter()
            .filter(|(_, n)| Membership::forgettable(n))
            .map(|(id, _)| id.as_str())
    }
}

#[cfg(test)]
#[path = "queries_test.rs"]
mod tests;
