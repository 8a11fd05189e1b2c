//! Building each command family's handler from disjoint borrows of `ClusterState`'s fields, and settling
//! what the handlers report (`touch`, a group's step or end, reconciliation). The fields stay private to
//! `state/`; these builders are visible to `apply` only.

use super::ClusterState;
use crate::command::Response;
use crate::deployment::progress::HandlerGate;
use crate::entities::group_deployment::GroupStatus;
use crate::errors::DomainError;
use crate::families::brakes::{self, Brakes};
use crate::families::forget::Forget;
use crate::families::group::Groups;
use crate::families::group_abort::GroupAbort;
use crate::families::lifecycle::{Lifecycle, Op};
use crate::families::registry::Registry;
use crate::families::removal::Removal;
use crate::families::reports::Reports;
use crate::families::retention::Retention;
use crate::families::retract::{Retracted, Retractions};
use crate::families::selection::Selection;
use crate::families::settle::{Cx, Ending};
use crate::families::starts::Starts;
use crate::families::subscriptions::Subscriptions;
use crate::policy::admission::Admission;
use crate::values::ids::{Actor, DeploymentId, GroupDeploymentId};

impl ClusterState {
    /// The handler of retractions, borrowing the maps it changes.
    pub(super) fn retractions(&mut self) -> Retractions<'_> {
        Retractions {
            resources: &mut self.resources,
            deployments: &mut self.deployments,
            active: &self.active,
        }
    }

    /// The handler of retention, borrowing the deployments.
    pub(super) fn retention(&mut self) -> Retention<'_> {
        Retention {
            deployments: &mut self.deployments,
        }
    }

    /// The handler of deployment operations, pulses and ticks, borrowing the deployments.
    pub(super) fn lifecycle(&mut self) -> Lifecycle<'_> {
        Lifecycle {
            deployments: &mut self.deployments,
            active: &self.active,
        }
    }

    /// A user operation on deployment `id`, settled (`touch`).
    pub(super) fn operate(
        &mut self,
        id: DeploymentId,
        message: Option<String>,
        by: Actor,
        op: Op,
        cx: &mut Cx,
    ) -> Result<Response, DomainError> {
        let done = self
            .lifecycle()
            .operate(id, message, by, op, cx.at, cx.hold)?;
        self.touch(id, cx);
        Ok(Response::Deployment {
            id,
            status: done.status,
            changed: done.changed,
        })
    }

    /// The handler of aborting group deployments, borrowing them and the deployments.
    pub(super) fn group_abort(&mut self) -> GroupAbort<'_> {
        GroupAbort {
            group_deployments: &mut self.group_deployments,
            deployments: &mut self.deployments,
        }
    }

    /// The handler of the catalogue (resources, versions, consumers, groups).
    pub(super) fn registry(&mut self) -> Registry<'_> {
        Registry {
            resources: &mut self.resources,
            consumers: &mut self.consumers,
            nodes: &mut self.nodes,
            groups: &mut self.groups,
        }
    }

    /// The handler of deletions, borrowing the consumers, nodes and groups.
    pub(super) fn removal(&mut self) -> Removal<'_> {
        Removal {
            consumers: &mut self.consumers,
            nodes: &mut self.nodes,
            groups: &mut self.groups,
            group_deployments: &self.group_deployments,
        }
    }

    /// The handler of subscriptions and holds, borrowing the consumers, nodes and deployments.
    pub(super) fn subscriptions(&mut self) -> Subscriptions<'_> {
        Subscriptions {
            consumers: &mut self.consumers,
            nodes: &mut self.nodes,
            deployments: &mut self.deployments,
            resources: &self.resources,
        }
    }

    /// The handler of `ForgetNodes`, borrowing the node table.
    pub(super) fn forget(&mut self) -> Forget<'_> {
        Forget {
            nodes: &mut self.nodes,
        }
    }

    /// Unregisters what a retraction stopped and asks for reconciliation when a selection may change.
    pub(super) fn settle_retracted(&mut self, done: Retracted, cx: &mut Cx) -> Response {
        for id in done.stopped {
            self.touch(id, cx);
        }
        cx.reconcile |= done.changed;
        Response::Done
    }

    /// Settles deployment `id` after a change (see [`Ending::touch`]).
    pub(super) fn touch(&mut self, id: DeploymentId, cx: &mut Cx) {
        self.ending().touch(id, cx);
    }

    /// Ending a deployment, over the maps that register it.
    pub(super) fn ending(&mut self) -> Ending<'_> {
        Ending {
            deployments: &mut self.deployments,
            active: &mut self.active,
            nodes: &mut self.nodes,
            consumers: &mut self.consumers,
        }
    }

    /// The handler of starting and driving group deployments, borrowing what starting a step needs too.
    pub(super) fn group_runs(&mut self) -> Groups<'_> {
        Groups {
            group_deployments: &mut self.group_deployments,
            next_group_deployment: &mut self.next_group_deployment,
            resources: &self.resources,
            groups: &self.groups,
            consumers: &mut self.consumers,
            nodes: &mut self.nodes,
            deployments: &mut self.deployments,
            active: &mut self.active,
            next_deployment: &mut self.next_deployment,
        }
    }

    /// The handler of starting deployments, borrowing the maps a start reads and changes.
    pub(super) fn starts(&mut self) -> Starts<'_> {
        Starts {
            resources: &self.resources,
            groups: &self.groups,
            group_deployments: &self.group_deployments,
            consumers: &mut self.consumers,
            nodes: &mut self.nodes,
            deployments: &mut self.deployments,
            active: &mut self.active,
            next_deployment: &mut self.next_deployment,
        }
    }

    /// The policies' pass (`policy/admission.rs`) over the whole state.
    pub(super) fn admission(&mut self) -> Admission<'_> {
        let limits = self.fleet_limits();
        Admission {
            budgets: &self.budgets,
            windows: &self.windows,
            clock: &self.clock,
            consumers: &self.consumers,
            nodes: &self.nodes,
            deployments: &mut self.deployments,
            active: &self.active,
            limits,
            weak: &self.weak_slots,
        }
    }

    /// Runs the policies' pass and settles what it changed; answers whether a deployment ended.
    pub(super) fn admit_by_policies(&mut self, cx: &mut Cx) -> bool {
        let ended = cx.ended.len();
        self.clock.refresh(&self.windows, cx.at);
        for id in self.admission().admit(cx.at) {
            self.touch(id, cx);
        }
        cx.ended.len() > ended
    }

    /// The last policy went: one pass with nothing in force admits what they held back.
    pub(super) fn release_all(&mut self, cx: &mut Cx) {
        self.admit_by_policies(cx);
    }

    /// The selection rules (selection.rs) over the whole state.
    pub(crate) fn selection(&self) -> Selection<'_> {
        Selection {
            resources: &self.resources,
            consumers: &self.consumers,
            nodes: &self.nodes,
            groups: &self.groups,
            deployments: &self.deployments,
        }
    }

    /// Counts on the weak subscriptions' brakes the failures node reports showed for the first time
    /// (`cx.failed`), holds back what trips one, and says so in the outcome (the log).
    pub(super) fn brake(&mut self, cx: &mut Cx) {
        if cx.failed.is_empty() {
            return;
        }
        let failed = std::mem::take(&mut cx.failed);
        let counted = brakes::counted(self.selection(), &self.deployments, failed);
        let held = Brakes {
            consumers: &mut self.consumers,
            deployments: &mut self.deployments,
        }
        .count(counted, cx.at);
        if !held.is_empty() {
            cx.reconcile = true;
        }
        for message in held {
            cx.outcome.notice(message);
        }
    }

    /// The handler of node reports and node-list changes, borrowing the maps they change.
    pub(super) fn reports(&mut self) -> Reports<'_> {
        Reports {
            consumers: &mut self.consumers,
            nodes: &mut self.nodes,
            deployments: &mut self.deployments,
            active: &mut self.active,
            resources: &self.resources,
        }
    }

    /// A group deployment's status and running step, before a change (`None`: no such group deployment).
    pub(super) fn group_progress(&self, id: GroupDeploymentId) -> Option<(GroupStatus, u32)> {
        self.group_deployments
            .get(&id)
            .map(|gd| (gd.status, gd.current_step))
    }

    /// Records in the outcome how group deployment `id` moved since `before` (`None`: it was just
    /// created): started, a step further, ended.
    pub(super) fn note_group(
        &self,
        id: GroupDeploymentId,
        before: Option<(GroupStatus, u32)>,
        cx: &mut Cx,
    ) {
        let Some(gd) = self.group_deployments.get(&id) else {
            return;
        };
        let was_running = match before {
            None => {
                cx.outcome.group_started(id);
                true
            }
            Some((status, step)) => {
                if step != gd.current_step {
                    cx.outcome.group_step(id, gd.current_step);
                }
                status == GroupStatus::Running
            }
        };
        if was_running && gd.status != GroupStatus::Running {
            cx.outcome.group_ended(id);
        }
    }

    /// Drives group deployments of ended deployments and starts automatic deployments, until quiet.
    pub(super) fn settle(&mut self, cx: &mut Cx) {
        // Ends for good: a deployment is queued in `cx.ended` once (when `touch` takes it out of `active`), a
        // group moves only forward through its fixed steps, and a reconcile starts at most one deployment per
        // subscription, which leaves it quiet unless that deployment ends at once. The cap only guards against
        // a bug looping forever; like everything here it is deterministic, so every replica stops alike.
        for _ in 0..1024 {
            let mut worked = false;
            while let Some(id) = cx.ended.pop() {
                worked = true;
                cx.reconcile = true;
                if let Some(g) = self.deployments.get(&id).and_then(|d| d.group) {
                    let before = self.group_progress(g);
                    self.group_runs().drive_group(g, cx);
                    self.note_group(g, before, cx);
                }
            }
            if cx.reconcile {
                worked = true;
                cx.reconcile = false;
                self.starts().reconcile(cx);
            }
            if cx.hold != HandlerGate::Open {
                // What ended frees slots for the others (and may start more): settle it and pass again.
                worked |= self.admit_by_policies(cx);
            }
            if !worked {
                return;
            }
        }
    }
}
