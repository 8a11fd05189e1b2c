//! One running group deployment's step timing on the leader, without actix: which step runs and
//! since when (leader clock, passed in). Which step runs and when the next one starts is decided
//! in the deterministic apply (a step starts in the apply that ends the previous step's last
//! deployment); the group engine has no waiting of its own yet (no bake time between steps), so
//! this arms no timer: a group-level wait would be asked for here and proposed as a command, like a
//! deployment's. The actix shell is `group_actor.rs`; convoy-lab's simulation drives it directly.

use crate::domain::{ClusterState, GroupDeploymentId, Timestamp};

/// Follows one group deployment's steps on the leader.
#[derive(Debug)]
pub struct GroupCore {
    id: GroupDeploymentId,
    /// The steps this leader saw start (0-based index, leader clock), the running one last.
    steps: Vec<(u32, Timestamp)>,
}

impl GroupCore {
    /// The follower of group deployment `id`, no step seen yet.
    pub fn new(id: GroupDeploymentId) -> Self {
        Self {
            id,
            steps: Vec::new(),
        }
    }

    /// The group deployment it follows.
    pub fn id(&self) -> GroupDeploymentId {
        self.id
    }

    /// The steps it saw start and when, the running one last.
    pub fn steps(&self) -> &[(u32, Timestamp)] {
        &self.steps
    }

    /// It starts at `now_ms`: the running step in `state` is the first it sees.
    pub fn started(&mut self, state: &ClusterState, now_ms: Timestamp) {
        if let Some(step) = state.group_step(self.id) {
            self.step_started(step, state, now_ms);
        }
    }

    /// Step `step` (0-based) started in the applied `state`, at `now_ms`.
    pub fn step_started(&mut self, step: u32, state: &ClusterState, now_ms: Timestamp) {
        if self.steps.last().is_some_and(|(s, _)| *s == step) {
            return;
        }
        let id = self.id;
        let total = state.group_step_count(id).unwrap_or(0);
        if let Some((previous, since)) = self.steps.last() {
            tracing::info!(group_deployment = %id, step = previous + 1, steps = total, took_ms = now_ms.saturating_sub(*since), "group step finished");
        }
        if step < total {
            tracing::info!(group_deployment = %id, step = step + 1, steps = total, "group step running");
        }
        self.steps.push((step, now_ms));
    }

    /// It stops (the group deployment ended, or leadership did).
    pub fn stopped(&self) {
        tracing::info!(group_deployment = %self.id, "group deployment no longer running");
    }
}

#[cfg(test)]
#[path = "group_core_test.rs"]
mod tests;
