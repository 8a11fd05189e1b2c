//! The reasons a deployment waits, as data (DEPLOYMENTS.md §6 "Why a deployment waits"): each [`Wait`], the
//! replicated set [`Waits`] with who put a person's pause and which windows hold it, the status a set implies,
//! and the API's view of it. Who may put and lift each reason is `waits.rs`.

use crate::values::ids::Actor;
use crate::values::status::{PausedBy, Status};
use serde::{Deserialize, Serialize};

/// One reason a deployment waits, in rank order (the first one present is its `paused_by`).
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
#[serde(rename_all = "snake_case")]
pub enum Wait {
    /// A person paused it; only a person's resume (or rollback, or abort) lifts it. Pulses answer STOP.
    User,
    /// A confirmation gate (`pacing.confirm`); only a confirm lifts it.
    Confirm,
    /// Its analysis was inconclusive (or failed with `on_failure: pause`); a resume lifts it.
    Analysis,
    /// The batch autopause; a resume lifts it.
    Auto,
    /// A maintenance window holds it; only the windows' pass lifts it, once no window holds it.
    Window,
    /// Its pulses stopped (or never came); only a pulse lifts it.
    Pulse,
    /// A disruption budget it counts against is spent by other deployments; the policies' pass lifts it.
    Budget,
    /// A fleet-wide limit is reached by other deployments; the policies' pass lifts it.
    FleetLimit,
    /// Its next node waits for its start jitter; admission lifts it when the offset is reached.
    StartJitter,
}

impl Wait {
    /// Every reason, in rank order.
    pub const ALL: [Wait; 9] = [
        Wait::User,
        Wait::Confirm,
        Wait::Analysis,
        Wait::Auto,
        Wait::Window,
        Wait::Pulse,
        Wait::Budget,
        Wait::FleetLimit,
        Wait::StartJitter,
    ];

    /// The wire name, e.g. `fleet_limit`.
    pub fn as_str(self) -> &'static str {
        match self {
            Wait::User => "user",
            Wait::Confirm => "confirm",
            Wait::Analysis => "analysis",
            Wait::Auto => "auto",
            Wait::Window => "window",
            Wait::Pulse => "pulse",
            Wait::Budget => "budget",
            Wait::FleetLimit => "fleet_limit",
            Wait::StartJitter => "start_jitter",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// It pauses the deployment (PAUSED): a person, a gate, the analysis, the autopause, a window.
    pub fn pauses(self) -> bool {
        matches!(
            self,
            Wait::User | Wait::Confirm | Wait::Analysis | Wait::Auto | Wait::Window
        )
    }

    /// It only stands before the forward roll (a rollback drops it).
    pub fn forward_only(self) -> bool {
        !matches!(self, Wait::User | Wait::Window | Wait::Pulse)
    }

    /// The `paused_by` a pausing reason (or the pulse) shows; `None` for the policies' waits, which do not
    /// pause.
    pub fn paused_by(self) -> Option<PausedBy> {
        Some(match self {
            Wait::User => PausedBy::User,
            Wait::Confirm => PausedBy::Confirm,
            Wait::Analysis => PausedBy::Analysis,
            Wait::Auto => PausedBy::Auto,
            Wait::Window => PausedBy::Window,
            Wait::Pulse => PausedBy::PulseTimeout,
            Wait::Budget | Wait::FleetLimit | Wait::StartJitter => return None,
        })
    }
}

/// The set of reasons, with who put the person's and which windows hold it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waits {
    bits: u16,
    /// Who paused it (with [`Wait::User`]).
    person: Option<Actor>,
    /// The windows holding it (with [`Wait::Window`]), as the windows' pass named them.
    windows: Option<String>,
}

impl Waits {
    /// Nothing holds it.
    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// `w` is in the set.
    pub fn has(&self, w: Wait) -> bool {
        self.bits & w.bit() != 0
    }

    /// The reasons in rank order.
    pub fn iter(&self) -> impl Iterator<Item = Wait> + '_ {
        Wait::ALL.into_iter().filter(|w| self.has(*w))
    }

    /// A pausing reason is in the set.
    pub fn pausing(&self) -> bool {
        self.iter().any(Wait::pauses)
    }

    /// The reason that ranks first among those that pause or block on a pulse (the API's `paused_by`).
    pub fn paused_by(&self) -> Option<PausedBy> {
        self.iter().find_map(Wait::paused_by)
    }

    /// Who paused it, while a person's pause holds it.
    pub fn person(&self) -> Option<&Actor> {
        self.person.as_ref().filter(|_| self.has(Wait::User))
    }

    /// The windows holding it, while they do.
    pub fn windows(&self) -> Option<&str> {
        self.windows.as_deref().filter(|_| self.has(Wait::Window))
    }

    /// The set with `w` in it too.
    pub fn with(mut self, w: Wait) -> Self {
        self.insert(w);
        self
    }

    pub(crate) fn insert(&mut self, w: Wait) -> bool {
        let new = !self.has(w);
        self.bits |= w.bit();
        new
    }

    pub(crate) fn remove(&mut self, w: Wait) -> bool {
        let had = self.has(w);
        self.bits &= !w.bit();
        if w == Wait::User {
            self.person = None;
        }
        if w == Wait::Window {
            self.windows = None;
        }
        had
    }

    /// Records who paused it (with [`Wait::User`]).
    pub(crate) fn set_person(&mut self, by: Actor) {
        self.person = Some(by);
    }

    /// Records the windows holding it (with [`Wait::Window`]).
    pub(crate) fn set_windows(&mut self, names: String) {
        self.windows = Some(names);
    }

    /// The status these reasons give a deployment going `forward` (or back).
    pub fn status(&self, forward: bool) -> Status {
        if self.pausing() {
            Status::paused(forward)
        } else if self.has(Wait::Pulse) {
            Status::awaiting(forward)
        } else {
            Status::rolling(forward)
        }
    }
}

/// One reason as the API shows it: `{"reason": "user", "by": "ops"}`, `{"reason": "window", "name": "nights"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WaitView {
    /// The reason.
    pub reason: Wait,
    /// Who put it (a person's pause).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The windows holding it (a window's hold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Waits {
    /// The reasons as bits (a fingerprint's input).
    pub fn bits(&self) -> u16 {
        self.bits
    }

    /// The set as the API shows it, in rank order.
    pub fn view(&self) -> Vec<WaitView> {
        self.iter()
            .map(|reason| WaitView {
                reason,
                by: (reason == Wait::User)
                    .then(|| self.person().map(ToString::to_string))
                    .flatten(),
                name: (reason == Wait::Window)
                    .then(|| self.windows().map(str::to_string))
                    .flatten(),
            })
            .collect()
    }
}
