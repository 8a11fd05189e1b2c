//! Maintenance windows, read-only (`GET /v1/windows`, `GET /v1/windows/{name}`, `convoy window next`): each
//! window as stored, whether it is in force at the caller's `now`, its next openings, and the deployments it
//! holds now.

use crate::policy::admission::verdict;
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
        let held = self.held_by_windows(now);
        Some(self.window_view(w, now, &held))
    }

    /// Every window as seen at `now`, by name. Each window is read once from the windows' clock and each
    /// active deployment judged once: O(windows + deployments x windows), no cron search but each window's
    /// next openings.
    pub fn windows(&self, now: Timestamp) -> Vec<WindowView> {
        let held = self.held_by_windows(now);
        self.window_map()
            .values()
            .map(|w| self.window_view(w, now, &held))
            .collect()
    }

    /// The active deployments windows hold now, with the windows holding each.
    pub(crate) fn held_by_windows(&self, now: Timestamp) -> Vec<(DeploymentId, Vec<String>)> {
        let all = self.windows_now(now);
        if all.is_empty() {
            return Vec::new();
        }
        self.active_set()
            .iter()
            .filter_map(|id| {
                let d = self.deployment_map().get(id)?;
                if !(d.status.is_rolling() || d.paused_by() == Some(PausedBy::Window)) {
                    return None;
                }
                let by = verdict(&all, &d.consumer, &d.resource).by;
                (!by.is_empty()).then_some((*id, by))
            })
            .collect()
    }

    pub(crate) fn window_view(
        &self,
        w: &Window,
        now: Timestamp,
        held: &[(DeploymentId, Vec<String>)],
    ) -> WindowView {
        let clocked = self.window_clock().clocked(w);
        let holds = held
            .iter()
            .filter(|(_, by)| by.contains(&w.name))
            .map(|(id, _)| *id)
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
            open: clocked.peek(now).is_some_and(|s| s.open),
            next: clocked
                .schedule()
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
