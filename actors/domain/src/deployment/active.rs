//! Active time: the one clock every deadline of a deployment counts in (DEPLOYMENTS.md §6 "One clock"). It
//! runs only while the deployment rolls forward with nothing in its set of waits (`waits.rs`), so a pause, a
//! window, a gate, a pulse block, a budget or a start jitter never uses up a completion timeout, a progress
//! deadline, a node's healthy or download deadline, a bake or the spacing of analysis measurements. Replicated
//! (leader-stamped times), so a new leader converts the same active deadlines to the same wall times.

use crate::deployment::Deployment;
use crate::values::ids::Timestamp;
use crate::values::status::Status;

impl Deployment {
    /// Active ms at `at`.
    pub fn active_at(&self, at: Timestamp) -> u64 {
        self.active.at(at)
    }

    /// The wall time an active deadline falls on, while the clock runs.
    pub fn active_wall(&self, active: u64) -> Option<Timestamp> {
        self.active.wall(active)
    }

    /// Whether it moves: rolling forward with nothing holding it (the active clock runs).
    pub fn moving(&self) -> bool {
        self.status == Status::RollingForward && self.waits.is_empty()
    }

    /// Starts or stops the active clock at `at` to match [`Deployment::moving`]; called by every writer of
    /// the status and the waits.
    pub(crate) fn sync_active(&mut self, at: Timestamp) {
        if self.moving() {
            self.active.start(at);
        } else {
            self.active.stop(at);
        }
    }
}
