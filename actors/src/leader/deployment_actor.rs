//! The actix shell of one active deployment's rule (`deployment.rs`): it runs the one timer the
//! rule asks for and proposes the rule's `TickDeployment` through the host. The supervisor tells
//! it each new deadline from the outcome of `apply`; it stops when the deployment ends.

use std::sync::Arc;

use actix::prelude::*;

use super::deployment::{DeploymentCore, Ticked, Timer};
use super::host::{read_with, Host};
use super::messages::{Rearm, Stop};
use crate::domain::{DeploymentId, Timestamp};

/// Drives one deployment's time-based rules on the leader.
pub struct DeploymentActor {
    core: DeploymentCore,
    host: Arc<dyn Host>,
    /// The deadline it starts with (`None`: read from the applied state when it starts).
    initial: Option<Option<Timestamp>>,
    timer: Option<SpawnHandle>,
}

impl DeploymentActor {
    /// An actor for deployment `id`; it reads its deadline and arms its timer as soon as it starts.
    pub fn new(id: DeploymentId, host: Arc<dyn Host>) -> Self {
        Self {
            core: DeploymentCore::new(id),
            host,
            initial: None,
            timer: None,
        }
    }

    /// An actor for deployment `id` that arms its timer at `deadline` (read by whoever starts it;
    /// a deadline already past fires at once).
    pub fn with_deadline(
        id: DeploymentId,
        host: Arc<dyn Host>,
        deadline: Option<Timestamp>,
    ) -> Self {
        Self {
            initial: Some(deadline),
            ..Self::new(id, host)
        }
    }

    /// Runs the timer as the rule says.
    fn set(&mut self, timer: Timer, ctx: &mut Context<Self>) {
        match timer {
            Timer::Keep => {}
            Timer::Cancel => {
                if let Some(handle) = self.timer.take() {
                    ctx.cancel_future(handle);
                }
            }
            Timer::Arm { deadline, delay } => {
                if let Some(handle) = self.timer.take() {
                    ctx.cancel_future(handle);
                }
                let handle = ctx.run_later(delay, move |act, ctx| {
                    act.timer = None;
                    act.fire(deadline, ctx);
                });
                self.timer = Some(handle);
            }
        }
    }

    fn arm(&mut self, deadline: Option<Timestamp>, ctx: &mut Context<Self>) {
        let timer = self.core.arm(deadline, self.host.now_ms());
        self.set(timer, ctx);
    }

    /// Re-reads the deadline from the applied state (after its own tick committed).
    fn reread(&mut self, ctx: &mut Context<Self>) {
        let id = self.core.id();
        let deadline = read_with(&self.host, |s| s.deployment_deadline(id));
        self.arm(deadline, ctx);
    }

    fn fire(&mut self, deadline: Timestamp, ctx: &mut Context<Self>) {
        let Some(tick) = self.core.fire(deadline) else {
            return;
        };
        let tick = self.host.propose(tick);
        ctx.spawn(tick.into_actor(self).map(move |result, act, ctx| {
            match act
                .core
                .ticked(deadline, result.map(drop).map_err(|e| e.to_string()))
            {
                Ticked::Reread => act.reread(ctx),
                Ticked::Retry { deadline, delay } => {
                    ctx.run_later(delay, move |act, ctx| act.fire(deadline, ctx));
                }
            }
        }));
    }
}

impl Actor for DeploymentActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        match self.initial.take() {
            Some(deadline) => self.arm(deadline, ctx),
            None => self.reread(ctx),
        }
    }
}

impl Handler<Rearm> for DeploymentActor {
    type Result = ();
    fn handle(&mut self, Rearm(deadline): Rearm, ctx: &mut Self::Context) {
        self.arm(deadline, ctx);
    }
}

#[cfg(test)]
impl Handler<super::messages::ArmedDeadline> for DeploymentActor {
    type Result = Option<Timestamp>;
    fn handle(
        &mut self,
        _: super::messages::ArmedDeadline,
        _: &mut Self::Context,
    ) -> Option<Timestamp> {
        self.core.armed()
    }
}

#[cfg(test)]
impl Handler<super::messages::Told> for DeploymentActor {
    type Result = u64;
    fn handle(&mut self, _: super::messages::Told, _: &mut Self::Context) -> u64 {
        self.core.told()
    }
}

impl Handler<Stop> for DeploymentActor {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

#[cfg(test)]
#[path = "deployment_test.rs"]
mod tests;
