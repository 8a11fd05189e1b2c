//! How a deployment's pace (`pace.rs`) moves with its status and time (DEPLOYMENTS.md §14): the bake and
//! progress clocks freeze when it stops rolling forward and thaw when it goes on; time reaches the rules
//! through `Deployment::deadline` and `tick` (`pulse.rs`), so the leader's deployment actor arms them like any
//! other deadline and a new leader re-arms them from the replicated state.

use crate::deployment::pace::{Clock, PaceView};
use crate::deployment::Deployment;
use crate::values::ids::Timestamp;
use crate::values::status::Status;

impl Deployment {
    /// The summary's view of its pace; `None` when no bake, gate or progress deadline is under way.
    pub fn pace_view(&self) -> Option<PaceView> {
        if self.status.is_terminal() {
            return None;
        }
        let view = PaceView {
            baking_until: self.pace.bake.and_then(Clock::until),
            bake_left_ms: match self.pace.bake {
                Some(Clock::Frozen(left)) => Some(left),
                _ => None,
            },
            awaiting_confirm_before: self
                .awaiting_confirm()
                .then(|| self.pace.waiting.map(|i| i + 1))
                .flatten(),
            progress_deadline: self.pace.progress.and_then(Clock::until),
        };
        let empty = view.baking_until.is_none()
            && view.bake_left_ms.is_none()
            && view.awaiting_confirm_before.is_none()
            && view.progress_deadline.is_none();
        (!empty).then_some(view)
    }

    /// Starts the progress clock of a new deployment (frozen when it starts held).
    pub(crate) fn paced(mut self, at: Timestamp) -> Self {
        if let Some(ms) = self.settings.pacing.progress_deadline_ms {
            self.pace.progress = Some(if self.status == Status::RollingForward {
                Clock::Until(at.saturating_add(ms))
            } else {
                Clock::Frozen(ms)
            });
        }
        self
    }

    /// Called by `transition` after the status moved from `from`: leaving ROLLING_FORWARD freezes the bake
    /// and progress clocks; entering it again thaws them (a resume after a pause resets the progress
    /// deadline); going back or ending drops every clock (they bound the forward roll only).
    pub(crate) fn pace_on_transition(&mut self, from: Status, at: Timestamp) {
        let to = self.status;
        if !to.is_forward() {
            self.pace.bake = None;
            self.pace.progress = None;
            self.pace.waiting = None;
            self.clear_node_clocks();
            return;
        }
        if from == Status::RollingForward && to != Status::RollingForward {
            self.pace.bake = self.pace.bake.map(|c| c.freeze(at));
            self.pace.progress = self.pace.progress.map(|c| c.freeze(at));
        }
        if to == Status::RollingForward && from != Status::RollingForward {
            self.pace.bake = self.pace.bake.map(|c| c.thaw(at));
            let reset = from.is_paused();
            if let Some(ms) = self.settings.pacing.progress_deadline_ms {
                self.pace.progress = Some(match self.pace.progress {
                    Some(c) if !reset => c.thaw(at),
                    _ => Clock::Until(at.saturating_add(ms)),
                });
            }
        }
    }

    /// The earliest pacing rule due, while rolling forward (held, the clocks are frozen and no node
    /// deadline is judged): the end of the bake, the progress deadline, the first node deadline.
    pub fn pace_deadline(&self) -> Option<Timestamp> {
        if self.status != Status::RollingForward {
            return None;
        }
        let node = self.pace.due.first_key_value().map(|((t, _), _)| *t);
        [
            self.pace.bake.and_then(Clock::until),
            self.pace.progress.and_then(Clock::until),
            node,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Evaluates the pacing rules due at `at` (node deadlines, the progress deadline); the end of a bake
    /// is seen by admission (`advance`).
    pub(crate) fn tick_pace(&mut self, at: Timestamp) {
        if self.status != Status::RollingForward {
            return;
        }
        self.expire_node_clocks(at);
        self.expire_progress(at);
    }
}

#[cfg(test)]
#[path = "pacing_test.rs"]
mod tests;
