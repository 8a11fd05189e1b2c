//! Coordinated deployments (DEPLOYMENTS.md §7) and every time-based rule: pulse deadline, healthy watch, timeout,
//! and the pacing rules of `pace.rs` (bake, node and progress deadlines).
//!
//! How a leader uses this: after `apply`, its per-deployment actor arms one timer at
//! [`ClusterState::deployment_deadline`](crate::ClusterState::deployment_deadline) and proposes
//! `Command::TickDeployment` for its deployment when it fires. A NEW leader first calls
//! [`ClusterState::rearm_pulses`](crate::ClusterState::rearm_pulses) with its own clock: every id returned has a
//! pulse deadline (computed from the replicated `last_pulse_at`) that has already passed, so their actors tick at
//! once, which blocks them (AWAITING_PULSE,
//! `paused_by = pulse_timeout`: the pulse's wait, `waits.rs`); the others get a timer at their deadline as usual. A whole-cluster restart thus
//! finds coordinated deployments blocked, waiting for a fresh pulse.

use crate::deployment::progress::Gate;
use crate::deployment::reasons::Wait;
use crate::deployment::Deployment;
use crate::values::ids::{Actor, Timestamp};
use serde::{Deserialize, Serialize};

/// Answer to a pulse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PulseAnswer {
    /// Keep pulsing: the pulse is recorded (and unblocks the deployment if it awaited one).
    Ok,
    /// Stop: finished, unknown, or held by a person.
    Stop,
}

impl Deployment {
    /// When the pulse countdown runs out ([`Deployment::pulse_due`]); only while ROLLING_* (held deployments
    /// have no countdown).
    pub fn pulse_deadline(&self) -> Option<Timestamp> {
        self.pulse_due().filter(|_| self.status.is_rolling())
    }

    /// When the completion timeout fires: `timeout_ms` of active time (waiting uses none of it), so only
    /// while it moves.
    pub fn timeout_deadline(&self) -> Option<Timestamp> {
        let timeout = self.settings.completion.timeout_ms?;
        self.active_wall(timeout).filter(|_| self.moving())
    }

    /// The earliest time-based rule: pulse deadline, end of a healthy watch, completion timeout, a maintenance
    /// window opening or closing.
    pub fn deadline(&self) -> Option<Timestamp> {
        if self.status.is_terminal() {
            return None;
        }
        // No node outcome is judged while it waits: a watch that ends then is judged once it moves.
        let watch = self.watches.next_end().filter(|_| self.moving());
        [
            self.pulse_deadline(),
            watch,
            self.timeout_deadline(),
            self.pace_deadline(),
            self.policy_check_at,
            self.jitter_at
                .filter(|_| self.status == crate::values::status::Status::RollingForward),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Evaluates every time-based rule due at `at`.
    pub(crate) fn tick(&mut self, at: Timestamp, gate: &mut dyn Gate) {
        if self.pulse_deadline().is_some_and(|d| d <= at) {
            self.block_on_pulse(at);
        }
        self.finish_watches(at);
        if self.timeout_deadline().is_some_and(|d| d <= at) {
            self.complete_on_timeout(at);
        }
        self.tick_pace(at);
        self.advance(at, &Actor::System, gate);
    }

    /// A pulse: records the time and lifts the pulse's wait (only that one); answers STOP when terminal or
    /// while a person's pause is in its waits, whatever else holds it (seed 000, case 5).
    pub(crate) fn pulse(&mut self, at: Timestamp, by: Actor, gate: &mut dyn Gate) -> PulseAnswer {
        if self.status.is_terminal() {
            return PulseAnswer::Stop;
        }
        self.last_pulse_at = Some(at);
        if self.release(Wait::Pulse, at, by, Some("pulse received".into())) {
            self.advance(at, &Actor::System, gate);
        }
        if self.waits().has(Wait::User) {
            return PulseAnswer::Stop;
        }
        PulseAnswer::Ok
    }
}

#[cfg(test)]
#[path = "pulse_test.rs"]
mod tests;
