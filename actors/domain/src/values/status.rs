//! Deployment statuses and the transition table of DEPLOYMENTS.md §6, as data, with its check.

use crate::values::ids::DeploymentId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Status of a deployment (Aurora's names).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Moving forward.
    RollingForward,
    /// Moving back to the from-versions.
    RollingBack,
    /// Forward, held.
    RollForwardPaused,
    /// Back, held.
    RollBackPaused,
    /// Forward, blocked until a pulse.
    RollForwardAwaitingPulse,
    /// Back, blocked until a pulse.
    RollBackAwaitingPulse,
    /// Terminal: succeeded.
    RolledForward,
    /// Terminal: rolled back.
    RolledBack,
    /// Terminal: aborted; nodes keep what they have.
    Aborted,
    /// Terminal: failed.
    Failed,
}

use Status::*;

/// The allowed transitions: `(from, [to...])`. Anything else is refused; terminal statuses have no row.
pub const TRANSITIONS: &[(Status, &[Status])] = &[
    (
        RollingForward,
        &[
            RollingBack,
            RollForwardPaused,
            RollForwardAwaitingPulse,
            RolledForward,
            Aborted,
            Failed,
        ],
    ),
    (
        RollingBack,
        &[
            RollBackPaused,
            RollBackAwaitingPulse,
            RolledBack,
            Aborted,
            Failed,
        ],
    ),
    (
        RollForwardPaused,
        &[
            RollingForward,
            RollingBack,
            RollForwardAwaitingPulse,
            Aborted,
        ],
    ),
    (
        RollBackPaused,
        &[RollingBack, RollBackAwaitingPulse, Aborted],
    ),
    (
        RollForwardAwaitingPulse,
        &[RollingForward, RollingBack, RollForwardPaused, Aborted],
    ),
    (
        RollBackAwaitingPulse,
        &[RollingBack, RollBackPaused, Aborted],
    ),
];

impl Status {
    /// Every status, in declaration order.
    pub const ALL: [Status; 10] = [
        RollingForward,
        RollingBack,
        RollForwardPaused,
        RollBackPaused,
        RollForwardAwaitingPulse,
        RollBackAwaitingPulse,
        RolledForward,
        RolledBack,
        Aborted,
        Failed,
    ];

    /// The wire name, e.g. `ROLLING_FORWARD`.
    pub fn as_str(self) -> &'static str {
        match self {
            RollingForward => "ROLLING_FORWARD",
            RollingBack => "ROLLING_BACK",
            RollForwardPaused => "ROLL_FORWARD_PAUSED",
            RollBackPaused => "ROLL_BACK_PAUSED",
            RollForwardAwaitingPulse => "ROLL_FORWARD_AWAITING_PULSE",
            RollBackAwaitingPulse => "ROLL_BACK_AWAITING_PULSE",
            RolledForward => "ROLLED_FORWARD",
            RolledBack => "ROLLED_BACK",
            Aborted => "ABORTED",
            Failed => "FAILED",
        }
    }

    /// No transition leaves a terminal status.
    pub fn is_terminal(self) -> bool {
        matches!(self, RolledForward | RolledBack | Aborted | Failed)
    }

    /// Not terminal.
    pub fn is_active(self) -> bool {
        !self.is_terminal()
    }

    /// ROLLING_FORWARD or ROLLING_BACK: the only statuses in which nodes are admitted.
    pub fn is_rolling(self) -> bool {
        matches!(self, RollingForward | RollingBack)
    }

    /// A PAUSED status.
    pub fn is_paused(self) -> bool {
        matches!(self, RollForwardPaused | RollBackPaused)
    }

    /// An AWAITING_PULSE status.
    pub fn is_awaiting(self) -> bool {
        matches!(self, RollForwardAwaitingPulse | RollBackAwaitingPulse)
    }

    /// An active forward status.
    pub fn is_forward(self) -> bool {
        matches!(
            self,
            RollingForward | RollForwardPaused | RollForwardAwaitingPulse
        )
    }

    /// The rolling status of a direction.
    pub fn rolling(forward: bool) -> Status {
        if forward {
            RollingForward
        } else {
            RollingBack
        }
    }

    /// The paused status of a direction.
    pub fn paused(forward: bool) -> Status {
        if forward {
            RollForwardPaused
        } else {
            RollBackPaused
        }
    }

    /// The awaiting-pulse status of a direction.
    pub fn awaiting(forward: bool) -> Status {
        if forward {
            RollForwardAwaitingPulse
        } else {
            RollBackAwaitingPulse
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether the table allows `from → to` (a status to itself is not a transition).
pub fn allowed(from: Status, to: Status) -> bool {
    TRANSITIONS
        .iter()
        .any(|(f, tos)| *f == from && tos.contains(&to))
}

/// Checks `from → to`: `Ok(false)` for a no-op (same status), `Ok(true)` when allowed, an error otherwise.
pub fn check(id: DeploymentId, from: Status, to: Status) -> Result<bool, TransitionRefused> {
    if from == to {
        return Ok(false);
    }
    if allowed(from, to) {
        return Ok(true);
    }
    let op = if from.is_terminal() {
        format!("move a terminal deployment to {to}")
    } else {
        format!("move to {to}")
    };
    Err(TransitionRefused { id, from, op })
}

/// A status change that [`TRANSITIONS`] forbids; becomes `DomainError::Transition` (409) with the same words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("deployment \"{id}\" is {from}; cannot {op}")]
pub struct TransitionRefused {
    /// The deployment asked to move.
    pub id: DeploymentId,
    /// Its status when asked.
    pub from: Status,
    /// What was asked, in words (`move to ROLLED_BACK`).
    pub op: String,
}

/// Why a deployment is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PausedBy {
    /// A person paused it; only a person resumes it.
    User,
    /// Pulses stopped arriving; a fresh pulse unblocks it.
    PulseTimeout,
    /// Batch autopause after a batch.
    Auto,
    /// A confirmation gate (`pacing.confirm`): only `POST .../confirm` lets it go on.
    Confirm,
    /// Its metric analysis was inconclusive (or failed with `on_failure: pause`); the status event says why.
    Analysis,
    /// A maintenance window closed (or a deny window opened): it resumes by itself when one lets it go on.
    Window,
}

#[cfg(test)]
#[path = "status_test.rs"]
mod tests;
