//! One actor per running group deployment: it owns the group's step timing on this leader — which
//! step runs and since when — hears from the supervisor each step the apply started, and stops
//! when the group deployment ends. Which step runs and when the next one starts is decided in the
//! deterministic apply (a step starts in the apply that ends the previous step's last deployment);
//! the group engine has no waiting of its own yet (no bake time between steps), so this actor arms
//! no timer: a group-level wait would be armed here and proposed as a command, like a deployment's.

use std::sync::Arc;

use actix::prelude::*;

use super::host::{read_with, Host};
use super::messages::{StepStarted, Stop};
use crate::domain::{GroupDeploymentId, Timestamp};

/// Follows one group deployment's steps on the leader.
pub struct GroupDeploymentActor {
    id: GroupDeploymentId,
    host: Arc<dyn Host>,
    /// The steps this leader saw start (0-based index, leader clock), the running one last.
    steps: Vec<(u32, Timestamp)>,
}

impl GroupDeploymentActor {
    /// An actor for group deployment `id`; it reads the running step when it starts.
    pub fn new(id: GroupDeploymentId, host: Arc<dyn Host>) -> Self {
        Self {
            id,
            host,
            steps: Vec::new(),
        }
    }

    fn step_started(&mut self, step: u32) {
        if self.steps.last().is_some_and(|(s, _)| *s == step) {
            return;
        }
        let now = self.host.now_ms();
        let id = self.id;
        let total = read_with(&self.host, |s| s.group_step_count(id)).unwrap_or(0);
        if let Some((previous, since)) = self.steps.last() {
            tracing::info!(group_deployment = %id, step = previous + 1, steps = total, took_ms = now.saturating_sub(*since), "group step finished");
        }
        if step < total {
            tracing::info!(group_deployment = %id, step = step + 1, steps = total, "group step running");
        }
        self.steps.push((step, now));
    }
}

impl Actor for GroupDeploymentActor {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Self::Context) {
        let id = self.id;
        if let Some(step) = read_with(&self.host, |s| s.group_step(id)) {
            self.step_started(step);
        }
    }
}

impl Handler<StepStarted> for GroupDeploymentActor {
    type Result = ();
    fn handle(&mut self, StepStarted(step): StepStarted, _: &mut Self::Context) {
        self.step_started(step);
    }
}

#[cfg(test)]
impl Handler<super::messages::Steps> for GroupDeploymentActor {
    type Result = Vec<(u32, Timestamp)>;
    fn handle(&mut self, _: super::messages::Steps, _: &mut Self::Context) -> Self::Result {
        self.steps.clone()
    }
}

impl Handler<Stop> for GroupDeploymentActor {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Self::Context) {
        tracing::info!(group_deployment = %self.id, "group deployment no longer running");
        ctx.stop();
    }
}

#[cfg(test)]
#[path = "group_test.rs"]
mod tests;
