//! Maintenance windows, read-only (`GET /v1/windows`, `GET /v1/windows/{name}`, `convoy window next`): each
//! window as stored, whether it is in force at the caller's `now`, its next openings, and the deployments it
//! holds now.

use crate::policy::admission::{verdict, windows_at};
use crate::policy::windows::{AppliesTo, Overrun, Window, WindowKind};
use crate::state::ClusterState;
use crate::values::ids::{DeploymentId, Timestamp};
use crate::values::status::PausedBy;
use serde::{Deserialize, Serialize};

/// Openings listed per window.
pub const LISTED_OPENINGS: usize = 5;

/// A window and what it does now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WindowView {
    /// Its name.
    pub name: String,
    /// `allow` or `deny`.
    pub kind: WindowKind,
    /// Its cron schedule (in `time_zone`'s wall time).
    pub schedule: String,
    /// How long each opening lasts (ms).
    pub duration_ms: u64,
    /// Its IANA time zone.
    pub time_zone: String,
    /// What it applies to.
    pub applies_to: AppliesTo,
    /// What closing does to in-flight nodes.
    pub overrun: Overrun,
    /// Whether rollbacks go on while it holds.
    pub allow_rollback: bool,
    /// In force at `now`.
    pub open: bool,
    /// The next openings after `now` (at most 5), each with when it closes (ms since the epoch).
    pub next: Vec<Opening>,
    /// The active deployments it holds now (paused by a window, or soon to be).
    pub holds: Vec<DeploymentId>,
}

/// One opening of a window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Opening {
    /// When it opens (ms since the epoch).
    pub opens_at: Timestamp,
    /// When it closes.
    pub closes_at: Timestamp,
}

impl ClusterState {
    /// Window `name` as seen at `now` (the caller's clock); `None` when there is no such window.
    pub fn window(&self, name: &str, now: Timestamp) -> Option<WindowView> {
        let w = self.window_map().get(name)?;
        Some(self.window_view(w, now))
    }

    /// Every window as seen at `now`, by name.
    pub fn windows(&self, now: Timestamp) -> Vec<WindowView> {
        self.window_map()
            .iter()
            .map(|(_, w)| self.window_view(w, now))
            .collect()
    }

    fn window_view(&self, w: &Window, now: Timestamp) -> WindowView {
        let schedule = w.schedule().ok();
        let all = windows_at(self.window_map(), now);
        let holds = self
            .active_set()
            .iter()
            .filter(|id| {
                self.deployment_map().get(*id).is_some_and(|d| {
                    let by_it = verdict(&all, &d.consumer, &d.resource).by.contains(&w.name);
                    by_it && (d.status.is_rolling() || d.paused_by() == Some(PausedBy::Window))
                })
            })
            .copied()
            .collect();
        WindowView {
            name: w.name.clone(),
            kind: w.kind,
            schedule: w.schedule.clone(),
            duration_ms: w.duration_ms,
            time_zone: w.time_zone.clone(),
            applies_to: w.applies_to.clone(),
            overrun: w.overrun,
            allow_rollback: w.allow_rollback,
            open: schedule.as_ref().is_some_and(|s| s.in_force(now)),
            next: schedule
                .map(|s| s.openings(now, LISTED_OPENINGS))
                .unwrap_or_default()
                .into_iter()
                .map(|(opens_at, closes_at)| Opening {
                    opens_at,
                    closes_at,
                })
                .collect(),
            holds,
        }
    }
}
