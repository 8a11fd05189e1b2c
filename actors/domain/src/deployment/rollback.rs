//! Failure and rollback of a deployment's nodes: a failure going forward rolls back (or fails), and the walk
//! back re-targets the admitted nodes at their from-versions in reverse order, within the rollback slots.

use crate::deployment::seen::Fact;
use crate::deployment::{Deployment, EventKind, NodePhase};
use crate::errors::DomainError;
use crate::values::ids::{Actor, Timestamp};
use crate::values::status::Status;
use crate::values::strategy::Plan;

impl Deployment {
    /// Failure going forward: roll back or FAILED; failure going back: FAILED.
    pub(crate) fn fail(&mut self, at: Timestamp, message: String) {
        self.fail_by(at, Actor::System, message);
    }

    /// [`Deployment::fail`], caused by `by` (convoy itself, or the timer of a completion timeout).
    pub(crate) fn fail_by(&mut self, at: Timestamp, by: Actor, message: String) {
        if self.status.is_forward() && self.settings.rollback_on_failure {
            let _ = self.start_rollback(at, by, Some(message));
        } else {
            let _ = self.transition(Status::Failed, at, by, Some(message));
        }
    }

    /// → ROLLING_BACK: stops prefetching and prepares to re-target touched nodes in reverse order.
    pub(crate) fn start_rollback(
        &mut self,
        at: Timestamp,
        by: Actor,
        message: Option<String>,
    ) -> Result<bool, DomainError> {
        if !crate::values::status::check(self.id, self.status, Status::RollingBack)? {
            return Ok(false);
        }
        // Turning back is a person's decision or convoy's judgement: it lifts every wait of the forward roll,
        // the person's too (a window that holds rollbacks holds it again in the policies' pass; an expired
        // pulse countdown blocks it below).
        self.clear_waits();
        self.transition(Status::RollingBack, at, by, message)?;
        for p in self.forward.install_cursor..self.forward.download_cursor {
            let node = &mut self.nodes[p as usize];
            if matches!(node.phase, NodePhase::Downloading | NodePhase::Downloaded) {
                node.phase = NodePhase::Pending;
            }
        }
        self.forward.download_used = 0;
        if self.coordinated() && self.pulse_expired(at) {
            self.block_on_pulse(at);
        }
        Ok(true)
    }

    /// Node `p`, counted back, runs the deployment's version after all (an install the rollback overtook
    /// finished): it waits in `rollback.again` to be re-targeted, in the walk back's order (the reverse of
    /// the forward order, `touched` read backwards), never the order the reports came in. Only while rolling
    /// back; once. The queue is kept in that order, so `p`'s place is found in one pass over `touched` (a
    /// scan, but only for a node whose install landed after the walk back counted it).
    pub(crate) fn queue_again(&mut self, p: u32) {
        if !self.status.is_active() || self.status.is_forward() || self.rollback.again.contains(&p)
        {
            return;
        }
        let again = &self.rollback.again;
        let mut place = 0;
        for &q in self.touched.iter().rev() {
            if q == p {
                break;
            }
            if again.get(place) == Some(&q) {
                place += 1;
            }
        }
        self.rollback.again.insert(place, p);
    }

    /// Re-targets the first node waiting in `rollback.again` at its from-version.
    pub(crate) fn admit_again_one(&mut self, at: Timestamp, by: &Actor) {
        let p = self.rollback.again.remove(0) as usize;
        if self.nodes[p].phase != NodePhase::RolledBack {
            return;
        }
        self.nodes[p].phase = NodePhase::RollingBack;
        self.rollback.used += 1;
        let msg = format!("runs version {} again after counting back", self.version);
        self.node_event(at, EventKind::Rollback, p, by, Some(msg));
        self.react(p, self.nodes[p].seen, None, at, by);
    }

    pub(crate) fn admit_back_one(&mut self, at: Timestamp, by: &Actor) {
        let t = self.touched.len();
        let p = self.touched[t - 1 - self.rollback.cursor as usize] as usize;
        self.rollback.cursor += 1;
        if self.nodes[p].phase == NodePhase::Skipped {
            return;
        }
        // A node that timed out is rolled back like any other it touched (it may hold the version).
        self.unwatch(p);
        let from = self.nodes[p].from_version;
        if from.is_none() && self.nodes[p].seen.has(Fact::BackOk) {
            self.nodes[p].phase = NodePhase::RolledBack;
            self.node_event(
                at,
                EventKind::RolledBack,
                p,
                by,
                Some("no previous version to restore, nothing installed".into()),
            );
            return;
        }
        self.nodes[p].phase = NodePhase::RollingBack;
        self.rollback.used += 1;
        let msg = from
            .is_none()
            .then(|| "no previous version to restore: uninstall".to_string());
        self.node_event(at, EventKind::Rollback, p, by, msg);
        self.react(p, self.nodes[p].seen, None, at, by);
    }

    /// Re-targets touched nodes at their from-versions within the rollback slots; the events are
    /// recorded `by` (see [`Deployment::advance`]).
    pub(crate) fn admit_back(&mut self, at: Timestamp, by: &Actor) {
        let t = self.touched.len() as u32;
        match self.settings.strategy.admission().plan {
            Plan::Batches { .. } => {
                // Nodes that run the version again are rolled back together, between batches.
                if self.rollback.used == 0 && self.rollback.failed == 0 {
                    while !self.rollback.again.is_empty() {
                        self.admit_again_one(at, by);
                    }
                }
                while self.rollback.used == 0
                    && self.rollback.cursor < t
                    && self.rollback.failed == 0
                {
                    let k = self.batches.len()
                        - 1
                        - (self.rollback.batch as usize).min(self.batches.len() - 1);
                    let size = self.batches[k];
                    self.rollback.batch += 1;
                    for _ in 0..size {
                        if self.rollback.cursor < t {
                            self.admit_back_one(at, by);
                        }
                    }
                }
            }
            Plan::Windows { rollback: iw, .. } => {
                while self.rollback.used < iw
                    && !self.rollback.again.is_empty()
                    && self.rollback.failed == 0
                {
                    self.admit_again_one(at, by);
                }
                while self.rollback.used < iw
                    && self.rollback.cursor < t
                    && self.rollback.failed == 0
                {
                    self.admit_back_one(at, by);
                }
            }
        }
    }

    pub(crate) fn evaluate_back(&mut self, at: Timestamp) {
        if self.rollback.failed > 0 {
            let msg = format!(
                "{} failed to roll back",
                crate::values::count::count(self.rollback.failed, "node")
            );
            let _ = self.transition(Status::Failed, at, Actor::System, Some(msg));
        } else if self.rollback.cursor as usize >= self.touched.len()
            && self.rollback.used == 0
            && self.rollback.again.is_empty()
        {
            let _ = self.transition(Status::RolledBack, at, Actor::System, None);
        }
    }
}

#[cfg(test)]
#[path = "rollback_test.rs"]
mod tests;
