//! Why a deployment waits (DEPLOYMENTS.md §6 "Why a deployment waits"): the only writers of its set of reasons
//! (`reasons.rs`). [`Deployment::hold`] puts a reason, [`Deployment::release`] lifts it, each called only by the
//! reason's owner (a person's pause and resume, a gate and its confirm, the analysis, the autopause, the windows'
//! pass, the pulse countdown and a pulse, the policies' pass, admission's jitter), and both move the status the
//! set implies (PAUSED while a pausing reason is in it, AWAITING_PULSE while only the pulse is, ROLLING_*
//! otherwise). The active clock (`active.rs`) runs only while the set is empty.

use crate::deployment::reasons::{Wait, Waits};
use crate::deployment::Deployment;
use crate::values::ids::{Actor, Timestamp};
use crate::values::status::{PausedBy, Status};

impl Deployment {
    /// Why it waits now.
    pub fn waits(&self) -> &Waits {
        &self.waits
    }

    /// The reason that ranks first, while it is paused or awaiting a pulse (the API's `paused_by`).
    pub fn paused_by(&self) -> Option<PausedBy> {
        self.waits.paused_by()
    }

    /// Puts `w` in the set (`by` is its owner: the person, the pulse service, `system`, a timer) and moves the
    /// status it implies, recording the event with `message`. A person's pause put on a deployment already
    /// paused for another reason is recorded too. Answers whether anything changed.
    pub(crate) fn hold(
        &mut self,
        w: Wait,
        at: Timestamp,
        by: Actor,
        message: Option<String>,
    ) -> bool {
        if self.status.is_terminal() || (w.forward_only() && !self.status.is_forward()) {
            return false;
        }
        let new = self.waits.insert(w);
        if w == Wait::User {
            self.waits.set_person(by.clone());
        }
        let moved = self.settle(at, by.clone(), message.clone());
        if new && !moved && w.pauses() {
            self.push_event(at, crate::deployment::EventKind::Status, None, by, message);
        }
        self.sync_active(at);
        new || moved
    }

    /// Names the windows holding it (with [`Wait::Window`]).
    pub(crate) fn hold_by_window(&mut self, names: String, at: Timestamp, message: String) -> bool {
        self.waits.set_windows(names);
        self.hold(Wait::Window, at, Actor::System, Some(message))
    }

    /// Lifts `w` (by its owner `by`) and moves the status the rest implies. A coordinated deployment whose
    /// pulses ran out meanwhile waits for a pulse instead of rolling. Answers whether it was in the set.
    pub(crate) fn release(
        &mut self,
        w: Wait,
        at: Timestamp,
        by: Actor,
        message: Option<String>,
    ) -> bool {
        if !self.waits.remove(w) {
            return false;
        }
        let was_moving = self.moving();
        self.block_if_pulse_expired(at);
        self.settle(at, by, message);
        self.sync_active(at);
        if !was_moving && self.moving() {
            self.rejudge_held(at);
        }
        true
    }

    /// A coordinated deployment about to move with its pulse countdown run out waits for a pulse instead.
    fn block_if_pulse_expired(&mut self, at: Timestamp) {
        if !self.waits.pausing() && self.coordinated() && self.pulse_expired(at) {
            self.waits.insert(Wait::Pulse);
        }
    }

    /// Every reason that stands only before the forward roll goes (the deployment turns back); the person's and
    /// a window's stay (the policies' pass lifts the window's when it lets rollbacks go on).
    pub(crate) fn drop_forward_waits(&mut self) {
        for w in Wait::ALL {
            if w.forward_only() {
                self.waits.remove(w);
            }
        }
    }

    /// Empties the set (the deployment ended).
    pub(crate) fn clear_waits(&mut self) {
        self.waits = Waits::default();
    }

    /// Moves the status to what the set implies; answers whether it moved.
    fn settle(&mut self, at: Timestamp, by: Actor, message: Option<String>) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        let to = self.waits.status(self.status.is_forward());
        self.transition(to, at, by, message).unwrap_or(false)
    }

    /// Puts or lifts one of the policies' waits (budget, fleet limit, start jitter), which do not pause and
    /// record no event: they stop the active clock while nothing of the deployment's own is in flight.
    pub(crate) fn set_policy_wait(&mut self, w: Wait, on: bool, at: Timestamp) {
        debug_assert!(!w.pauses() && w != Wait::Pulse);
        let changed = if on && self.status == Status::RollingForward {
            self.waits.insert(w)
        } else {
            self.waits.remove(w)
        };
        if changed {
            self.sync_active(at);
        }
    }
}

#[cfg(test)]
impl Deployment {
    /// A deployment standing in `status` with the reason that puts it there (the transition table's tests).
    pub(crate) fn standing_in(mut self, status: Status) -> Self {
        self.waits = Waits::default();
        if status.is_paused() {
            self.waits.insert(Wait::User);
        } else if status.is_awaiting() {
            self.waits.insert(Wait::Pulse);
        }
        self.status = status;
        self
    }
}

#[cfg(test)]
#[path = "waits_test.rs"]
mod tests;
