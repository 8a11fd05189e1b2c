//! Bake time (DEPLOYMENTS.md §14): after a batch (rolling: a wave of `install_window` nodes) finished, the
//! next one waits `bake_ms` of active time (`active.rs`: it stands still while the deployment waits). Also what stands between two groups: the
//! bake, then the confirmation gates (`gates.rs`).

use crate::deployment::{Deployment, EventKind, NodePhase};
use crate::values::ids::{Actor, Timestamp};
use crate::values::strategy::Strategy;

impl Deployment {
    /// "batch" or "wave", as this deployment's groups are called in its events.
    pub(crate) fn group_word(&self) -> &'static str {
        match self.settings.strategy {
            Strategy::Batch { .. } => "batch",
            Strategy::Rolling { .. } | Strategy::AllAtOnce { .. } => "wave",
        }
    }

    /// Whether the bake before group `index` (1: the second batch or wave) still holds it back at `at`.
    /// The first call after group `index - 1` finished starts the bake and records it.
    pub(crate) fn bake_holds(&mut self, index: u32, at: Timestamp) -> bool {
        let Some(bake) = self.settings.pacing.bake_ms else {
            return false;
        };
        if index == 0 || self.pace.baked >= index {
            return false;
        }
        let now = self.active_at(at);
        match self.pace.bake {
            None => {
                self.pace.bake = Some(now.saturating_add(bake));
                let until = at.saturating_add(bake);
                let msg = format!(
                    "{} {index} finished: baking {bake} ms, until {until}",
                    self.group_word()
                );
                self.push_event(at, EventKind::Bake, None, Actor::System, Some(msg));
                true
            }
            Some(until) if until <= now => {
                self.pace.bake = None;
                self.pace.baked = index;
                false
            }
            Some(_) => true,
        }
    }

    /// Whether a bake or a gate holds group `index` back at `at` (the bake first, then the gate).
    pub(crate) fn between_groups(&mut self, index: u32, at: Timestamp) -> bool {
        self.bake_holds(index, at) || self.gate_holds(index, at)
    }

    /// Whether the next rolling wave may form at `at`: some node still waits for one, and neither a bake nor
    /// a gate holds it back.
    pub(crate) fn wave_may_form(&mut self, at: Timestamp) -> bool {
        let n = self.nodes.len() as u32;
        let waiting = (self.forward.install_cursor..n).any(|p| {
            matches!(
                self.nodes[p as usize].phase,
                NodePhase::Pending | NodePhase::Downloading | NodePhase::Downloaded
            )
        });
        waiting && !self.between_groups(self.pace.waves, at)
    }

    /// When the bake in progress ends (`None` when none runs or the deployment waits).
    pub fn baking_until(&self) -> Option<Timestamp> {
        self.pace.bake.and_then(|b| self.active_wall(b))
    }
}

#[cfg(test)]
#[path = "bake_test.rs"]
mod tests;
