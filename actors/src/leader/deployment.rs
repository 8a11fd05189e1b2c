//! One deployment's timer rule on the leader, without actix: it owns the deployment's deadline
//! (pulse deadline, end of a healthy watch, completion timeout), says where its one timer must be
//! armed, and gives the `TickDeployment` for its deployment alone when the timer fires (one in
//! flight at a time). Time is passed in; the actix shell (`deployment_actor.rs`) and convoy-lab's
//! simulation run the timer it asks for.

use std::time::Duration;

use crate::domain::{ClusterState, Command, DeploymentId, Timestamp};

/// After a tick that left the same deadline in place, wait this long before the next one; and
/// after a tick that did not commit, before it is tried again.
pub const RETRY: Duration = Duration::from_millis(100);

/// What to do with the one timer after [`DeploymentCore::arm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// It is armed at that deadline already (or stays unarmed): leave it.
    Keep,
    /// No deadline: cancel it.
    Cancel,
    /// Cancel it and arm it to fire after `delay`, for `deadline`.
    Arm {
        /// The deadline it fires for (handed back to [`DeploymentCore::fire`]).
        deadline: Timestamp,
        /// How long from now.
        delay: Duration,
    },
}

/// What to do once a tick was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ticked {
    /// Committed: re-read the deadline from the applied state ([`DeploymentCore::reread`]).
    Reread,
    /// Not committed: fire again for `deadline` after `delay`.
    Retry {
        /// The deadline to fire for again.
        deadline: Timestamp,
        /// How long from now.
        delay: Duration,
    },
}

/// Drives one deployment's time-based rules on the leader.
#[derive(Debug)]
pub struct DeploymentCore {
    id: DeploymentId,
    armed: Option<Timestamp>,
    ticking: bool,
    last_fired: Option<Timestamp>,
    /// Deadlines it was told since it started (the first one included; tests).
    #[cfg(test)]
    told: u64,
}

impl DeploymentCore {
    /// The rule of deployment `id`, its timer not armed yet.
    pub fn new(id: DeploymentId) -> Self {
        Self {
            id,
            armed: None,
            ticking: false,
            last_fired: None,
            #[cfg(test)]
            told: 0,
        }
    }

    /// The deployment it follows.
    pub fn id(&self) -> DeploymentId {
        self.id
    }

    /// The deadline its timer is armed for.
    pub fn armed(&self) -> Option<Timestamp> {
        self.armed
    }

    /// Deadlines it was told (tests).
    #[cfg(test)]
    pub fn told(&self) -> u64 {
        self.told
    }

    /// The deployment's deadline is `deadline` at `now_ms` (leader wall clock): where the one
    /// timer goes. A deadline already past fires at once.
    pub fn arm(&mut self, deadline: Option<Timestamp>, now_ms: Timestamp) -> Timer {
        #[cfg(test)]
        {
            self.told += 1;
        }
        if self.armed == deadline {
            return Timer::Keep;
        }
        self.armed = deadline;
        let Some(deadline) = deadline else {
            return Timer::Cancel;
        };
        let mut delay = Duration::from_millis(deadline.saturating_sub(now_ms));
        if self.last_fired == Some(deadline) {
            // A tick at this deadline already went through and left it in place: don't spin.
            delay = delay.max(RETRY);
        }
        Timer::Arm { deadline, delay }
    }

    /// Re-reads the deadline from the applied `state` (after its own tick committed) at `now_ms`.
    pub fn reread(&mut self, state: &ClusterState, now_ms: Timestamp) -> Timer {
        let deadline = state.deployment_deadline(self.id);
        self.arm(deadline, now_ms)
    }

    /// The timer armed for `deadline` fired: the `TickDeployment` to propose, unless one is in
    /// flight already.
    pub fn fire(&mut self, deadline: Timestamp) -> Option<Command> {
        if self.armed == Some(deadline) {
            self.armed = None;
        }
        if self.ticking {
            return None;
        }
        self.ticking = true;
        self.last_fired = Some(deadline);
        tracing::debug!(deployment = %self.id, deadline, "deadline reached: proposing TickDeployment");
        Some(Command::TickDeployment { id: self.id })
    }

    /// The tick for `deadline` was committed (`Ok`) or not (`Err`, its reason).
    pub fn ticked(&mut self, deadline: Timestamp, result: Result<(), String>) -> Ticked {
        self.ticking = false;
        match result {
            Ok(()) => Ticked::Reread,
            Err(e) => {
                tracing::warn!(deployment = %self.id, error = %e, "TickDeployment not committed; retrying");
                Ticked::Retry {
                    deadline,
                    delay: RETRY,
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "deployment_core_test.rs"]
mod tests;
