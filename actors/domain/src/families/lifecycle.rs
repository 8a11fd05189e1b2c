//! Deployment lifecycle after the start: user operations (pause, hard pause, resume, confirm, abort,
//! rollback), pulses and the time-based rules (`Tick`, `TickDeployment`), DEPLOYMENTS.md §5–§7. Starting deployments is in
//! `starts.rs`.
//!
//! [`Lifecycle`] is the family's handler: each of these commands changes one deployment (or each due
//! one), so it borrows the deployments and reads the active set, and reports which deployment it
//! changed; `ClusterState::apply` settles it (`touch`: unregisters it when it became terminal).

use crate::analysis::run::Measured;
use crate::deployment::progress::HandlerGate;
use crate::deployment::pulse::PulseAnswer;
use crate::deployment::Deployment;
use crate::errors::{check_message, DomainError, Entity};
use crate::values::ids::{Actor, DeploymentId, Timestamp};
use crate::values::status::Status;
use convoy_collections::CowMap;
use std::collections::BTreeSet;

/// A user operation on a deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// `Pause`: hold it where it is.
    Pause,
    /// `Resume`: go on after a pause.
    Resume,
    /// `Abort`: stop it for good where it is.
    Abort,
    /// `Rollback`: take its nodes back to their from-versions.
    Rollback,
    /// `Confirm`: let it pass the confirmation gate it waits at.
    Confirm,
    /// `HardPause`: pause, and take back install permission not yet used.
    HardPause,
}

/// `Pause`, `Resume`, `Abort`, `Rollback`, `Pulse`, `Tick` and `TickDeployment`, over the deployments.
pub(crate) struct Lifecycle<'a> {
    /// The deployments operated on, pulsed or ticked.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
    /// The active deployments: the only ones time-based rules apply to.
    pub active: &'a BTreeSet<DeploymentId>,
}

/// What a user operation did to its deployment (`apply` then settles it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Operated {
    /// Its status after the operation.
    pub status: Status,
    /// Whether the operation changed anything (pausing a paused deployment does not).
    pub changed: bool,
}

impl Lifecycle<'_> {
    /// Applies `op` to deployment `id` at `at`. Refused for an unknown id, a bad message, or an operation
    /// its status does not allow.
    pub(crate) fn operate(
        &mut self,
        id: DeploymentId,
        message: Option<String>,
        by: Actor,
        op: Op,
        at: Timestamp,
        hold: HandlerGate,
    ) -> Result<Operated, DomainError> {
        check_message(message.as_deref())?;
        let d = self
            .deployments
            .get_mut(&id)
            .ok_or_else(|| DomainError::not_found(Entity::Deployment, id))?;
        let changed = match op {
            Op::Pause => d.pause(at, by, message)?,
            Op::Resume => d.resume(at, by, message)?,
            Op::Abort => d.abort(at, by, message)?,
            Op::Rollback => d.rollback(at, by, message)?,
            Op::Confirm => d.confirm(at, by, message)?,
            Op::HardPause => d.hard_pause(at, by, message)?,
        };
        d.advance(at, &Actor::System, &mut { hold });
        Ok(Operated {
            status: d.status,
            changed,
        })
    }

    /// A pulse for deployment `id` at `at`: its answer and the deployment's status after it; `None` for
    /// an unknown id (the caller answers STOP).
    pub(crate) fn pulse(
        &mut self,
        id: DeploymentId,
        by: Actor,
        at: Timestamp,
        hold: HandlerGate,
    ) -> Option<(PulseAnswer, Status)> {
        let d = self.deployments.get_mut(&id)?;
        let answer = d.pulse(at, by, &mut { hold });
        Some((answer, d.status))
    }

    /// A measurement of deployment `id`'s analysis (`Command::RecordMeasurement`), number `seq` of `phase`;
    /// answers whether it counted.
    pub(crate) fn measure(
        &mut self,
        id: DeploymentId,
        metric: &str,
        (phase, seq): (u32, u32),
        measured: Measured,
        at: Timestamp,
        hold: HandlerGate,
    ) -> bool {
        if !self.active.contains(&id) {
            return false;
        }
        self.deployments
            .get_mut(&id)
            .is_some_and(|d| d.record_measurement(metric, phase, seq, measured, at, &mut { hold }))
    }

    /// The global `Tick`: evaluates the time-based rules of every active deployment due at `at`; answers
    /// those it ticked, in id order.
    pub(crate) fn tick_due(&mut self, at: Timestamp, hold: HandlerGate) -> Vec<DeploymentId> {
        let due: Vec<DeploymentId> = self
            .active
            .iter()
            .filter(|id| {
                self.deployments
                    .get(id)
                    .and_then(Deployment::deadline)
                    .is_some_and(|d| d <= at)
            })
            .copied()
            .collect();
        for id in &due {
            if let Some(d) = self.deployments.get_mut(id) {
                d.tick(at, &mut { hold });
            }
        }
        due
    }

    /// The time-based rules of deployment `id` alone, if one is due at `at` (a deadline moved later
    /// meanwhile: nothing to do). Answers whether `id` is active (then its actor hears its deadline
    /// either way).
    pub(crate) fn tick_one(&mut self, id: DeploymentId, at: Timestamp, hold: HandlerGate) -> bool {
        if !self.active.contains(&id) {
            return false;
        }
        if let Some(d) = self.deployments.get_mut(&id) {
            if d.deadline().is_some_and(|d| d <= at) {
                d.tick(at, &mut { hold });
            }
        }
        true
    }
}
