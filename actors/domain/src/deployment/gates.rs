//! Confirmation gates and the hard pause (DEPLOYMENTS.md §14). A gate (`pacing.confirm`: before the start,
//! before each batch or wave after the first, before the second one) holds the deployment in
//! ROLL_FORWARD_PAUSED with `paused_by = confirm` until `Confirm`; a resume does not pass it. A hard pause is a
//! pause that also takes back install permission from the nodes admitted but not yet installing.

use crate::deployment::reasons::Wait;
use crate::deployment::seen::Fact;
use crate::deployment::{Deployment, EventKind, NodePhase};
use crate::errors::DomainError;
use crate::values::ids::{Actor, Timestamp};

impl Deployment {
    /// Whether a confirmation gate holds group `index` (0: the first batch or wave) back; the first time,
    /// it pauses the deployment (`paused_by = confirm`) with an event saying where it waits.
    pub(crate) fn gate_holds(&mut self, index: u32, at: Timestamp) -> bool {
        if !self.settings.pacing.gate_before(index)
            || self.pace.confirmed.is_some_and(|c| c >= index)
        {
            return false;
        }
        self.pace.waiting = Some(index);
        let msg = if index == 0 {
            "waiting for a confirmation before the start".to_string()
        } else {
            format!(
                "waiting for a confirmation before {} {}",
                self.group_word(),
                index + 1
            )
        };
        self.hold(Wait::Confirm, at, Actor::System, Some(msg));
        true
    }

    /// Waits at a confirmation gate (the gate's reason is in its waits).
    pub fn awaiting_confirm(&self) -> bool {
        self.waits().has(Wait::Confirm)
    }

    /// Confirm: lifts the gate's reason, and only it (a person's pause stays: the deployment goes on only
    /// once nothing else holds it; AWAITING_PULSE if its pulse expired). Refused unless it waits for a
    /// confirmation.
    pub(crate) fn confirm(
        &mut self,
        at: Timestamp,
        by: Actor,
        message: Option<String>,
    ) -> Result<bool, DomainError> {
        if !self.awaiting_confirm() {
            return Err(DomainError::Transition {
                id: self.id.to_string(),
                from: self.status,
                op: "confirm a deployment that is not waiting for a confirmation".into(),
            });
        }
        self.pace.confirmed = self.pace.waiting.take().max(self.pace.confirmed);
        Ok(self.release(Wait::Confirm, at, by, message))
    }

    /// Hard pause: a pause (as `pause`) that, going forward, also takes back install permission from the
    /// nodes admitted to install that have not started (they do not hold the version and reported
    /// nothing done): they are pending again, their slots free, and are admitted again after the resume.
    pub(crate) fn hard_pause(
        &mut self,
        at: Timestamp,
        by: Actor,
        message: Option<String>,
    ) -> Result<bool, DomainError> {
        let mut changed = self.pause(at, by.clone(), message)?;
        if self.status.is_forward() {
            changed |=
                self.recall_unstarted(at, &by, "install permission taken back by a hard pause");
        }
        Ok(changed)
    }

    /// Takes back install permission from the nodes admitted to install that have not started (they hold
    /// nothing of the version and reported nothing done): they are pending again (event `recalled`, with
    /// `why`), their slots free, and they are admitted again when the deployment goes on. The hard pause
    /// and a window closing with `overrun: pause` (DEPLOYMENTS.md §14, §16). Answers whether any was.
    pub(crate) fn recall_unstarted(&mut self, at: Timestamp, by: &Actor, why: &str) -> bool {
        let recalled: Vec<usize> = self
            .touched
            .iter()
            .map(|p| *p as usize)
            .filter(|p| {
                let node = &self.nodes[*p];
                node.phase == NodePhase::Installing
                    && !node
                        .seen
                        .any(&[Fact::Have, Fact::Done, Fact::Fail, Fact::Current])
            })
            .collect();
        for &p in &recalled {
            self.fetching(p, |d| {
                d.nodes[p].phase = NodePhase::Pending;
                d.forward.release_install();
            });
            self.sync_node_clock(p, at);
            self.forward.install_cursor = self.forward.install_cursor.min(p as u32);
            self.node_event(at, EventKind::Recalled, p, by, Some(why.to_string()));
        }
        if recalled.is_empty() {
            return false;
        }
        let gone: std::collections::BTreeSet<u32> = recalled.iter().map(|p| *p as u32).collect();
        self.touched.retain(|p| !gone.contains(p));
        // The open batch (or wave) loses its recalled nodes; one left empty forms again.
        if let Some(last) = self.batches.last_mut() {
            *last = last.saturating_sub(recalled.len() as u32);
            if *last == 0 {
                self.batches.pop();
            }
        }
        if self.settings.waves() && self.forward.batch_open == 0 {
            self.pace.waves = self.pace.waves.saturating_sub(1);
        }
        true
    }
}

#[cfg(test)]
#[path = "gates_test.rs"]
mod tests;
