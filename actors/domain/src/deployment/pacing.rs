//! How a deployment's pace (`pace.rs`) moves with time (DEPLOYMENTS.md §14): the bake, progress and node
//! deadlines are points in active time (`active.rs`), so they stand still while the deployment waits for any
//! reason and go on with the time they had left; time reaches the rules through `Deployment::deadline` and
//! `tick` (`pulse.rs`), so the leader's deployment actor arms them like any other deadline and a new leader
//! re-arms them from the replicated state.

use crate::deployment::pace::PaceView;
use crate::deployment::Deployment;
use crate::values::ids::Timestamp;
use crate::values::status::Status;

impl Deployment {
    /// The summary's view of its pace at `at`; `None` when no bake, gate or progress deadline is under way.
    pub fn pace_view(&self, at: Timestamp) -> Option<PaceView> {
        if self.status.is_terminal() {
            return None;
        }
        let now = self.active_at(at);
        let view = PaceView {
            baking_until: self.pace.bake.and_then(|b| self.active_wall(b)),
            bake_left_ms: self
                .pace
                .bake
                .filter(|_| !self.moving())
                .map(|b| b.saturating_sub(now)),
            awaiting_confirm_before: self
                .awaiting_confirm()
                .then(|| self.pace.waiting.map(|i| i + 1))
                .flatten(),
            progress_deadline: self.pace.progress.and_then(|p| self.active_wall(p)),
        };
        let empty = view.baking_until.is_none()
            && view.bake_left_ms.is_none()
            && view.awaiting_confirm_before.is_none()
            && view.progress_deadline.is_none();
        (!empty).then_some(view)
    }

    /// Starts the progress deadline of a new deployment (at active time 0: it counts only once it moves).
    pub(crate) fn paced(mut self, _at: Timestamp) -> Self {
        self.pace.progress = self.settings.pacing.progress_deadline_ms;
        self
    }

    /// Called by `transition` after the status moved from `from`: going back or ending drops every pacing
    /// clock (they bound the forward roll only). Waiting needs nothing here: the clocks are in active time.
    pub(crate) fn pace_on_transition(&mut self, _from: Status, _at: Timestamp) {
        if !self.status.is_forward() {
            self.pace.bake = None;
            self.pace.progress = None;
            self.pace.waiting = None;
            self.clear_node_clocks();
        }
    }

    /// The earliest pacing rule due, while it moves (waiting, the clocks stand still and no node deadline is
    /// judged): the end of the bake, the progress deadline, the first node deadline.
    pub fn pace_deadline(&self) -> Option<Timestamp> {
        if !self.moving() {
            return None;
        }
        let node = self.pace.due.first_key_value().map(|((t, _), _)| *t);
        [self.pace.bake, self.pace.progress, node]
            .into_iter()
            .flatten()
            .min()
            .and_then(|t| self.active_wall(t))
    }

    /// Evaluates the pacing rules due at `at` (node deadlines, the progress deadline); the end of a bake
    /// is seen by admission (`advance`).
    pub(crate) fn tick_pace(&mut self, at: Timestamp) {
        if !self.moving() {
            return;
        }
        self.expire_node_clocks(at);
        self.expire_progress(at);
    }
}

#[cfg(test)]
#[path = "pacing_test.rs"]
mod tests;
