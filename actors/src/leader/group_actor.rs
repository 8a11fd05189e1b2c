//! The actix shell of one running group deployment's step timing (`group.rs`): it hands the
//! supervisor's step notices to it with the host's clock and stops when the group deployment ends.

use std::sync::Arc;

use actix::prelude::*;

use super::group::GroupCore;
use super::host::Host;
use super::messages::{StepStarted, Stop};
use crate::domain::GroupDeploymentId;
#[cfg(test)]
use crate::domain::Timestamp;

/// Follows one group deployment's steps on the leader.
pub struct GroupDeploymentActor {
    core: GroupCore,
    host: Arc<dyn Host>,
}

impl GroupDeploymentActor {
    /// An actor for group deployment `id`; it reads the running step when it starts.
    pub fn new(id: GroupDeploymentId, host: Arc<dyn Host>) -> Self {
        Self {
            core: GroupCore::new(id),
            host,
        }
    }
}

impl Actor for GroupDeploymentActor {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Self::Context) {
        let now = self.host.now_ms();
        let core = &mut self.core;
        self.host.read(&mut |s| core.started(s, now));
    }
}

impl Handler<StepStarted> for GroupDeploymentActor {
    type Result = ();
    fn handle(&mut self, StepStarted(step): StepStarted, _: &mut Self::Context) {
        let now = self.host.now_ms();
        let core = &mut self.core;
        self.host.read(&mut |s| core.step_started(step, s, now));
    }
}

#[cfg(test)]
impl Handler<super::messages::Steps> for GroupDeploymentActor {
    type Result = Vec<(u32, Timestamp)>;
    fn handle(&mut self, _: super::messages::Steps, _: &mut Self::Context) -> Self::Result {
        self.core.steps().to_vec()
    }
}

impl Handler<Stop> for GroupDeploymentActor {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Self::Context) {
        self.core.stopped();
        ctx.stop();
    }
}

#[cfg(test)]
#[path = "group_test.rs"]
mod tests;
