//! One actor per active deployment: it owns the deployment's deadline (pulse deadline, end of a
//! healthy watch, completion timeout), keeps exactly one timer armed at it, and proposes
//! `TickDeployment` for its deployment alone when it fires. The supervisor tells it each new
//! deadline from the outcome of `apply`; it stops when the deployment ends.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use super::host::{read_with, Host};
use super::messages::{Rearm, Stop};
use crate::domain::{Command, DeploymentId, Timestamp};

/// After a tick that left the same deadline in place, wait this long before the next one.
const RETRY: Duration = Duration::from_millis(100);

/// Drives one deployment's time-based rules on the leader.
pub struct DeploymentActor {
    id: DeploymentId,
    host: Arc<dyn Host>,
    /// The deadline it starts with (`None`: read from the applied state when it starts).
    initial: Option<Option<Timestamp>>,
    armed: Option<(Timestamp, SpawnHandle)>,
    ticking: bool,
    last_fired: Option<Timestamp>,
    /// Deadlines it was told since it started (the first one included; tests).
    #[cfg(test)]
    told: u64,
}

impl DeploymentActor {
    /// An actor for deployment `id`; it reads its deadline and arms its timer as soon as it starts.
    pub fn new(id: DeploymentId, host: Arc<dyn Host>) -> Self {
        Self {
            id,
            host,
            initial: None,
            armed: None,
            ticking: false,
            last_fired: None,
            #[cfg(test)]
            told: 0,
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

    /// Arms the one timer at `deadline`, unless it is armed there already.
    fn arm(&mut self, deadline: Option<Timestamp>, ctx: &mut Context<Self>) {
        #[cfg(test)]
        {
            self.told += 1;
        }
        if self.armed.as_ref().map(|(d, _)| *d) == deadline {
            return;
        }
        if let Some((_, handle)) = self.armed.take() {
            ctx.cancel_future(handle);
        }
        let Some(deadline) = deadline else { return };
        let mut delay = Duration::from_millis(deadline.saturating_sub(self.host.now_ms()));
        if self.last_fired == Some(deadline) {
            // A tick at this deadline already went through and left it in place: don't spin.
            delay = delay.max(RETRY);
        }
        let handle = ctx.run_later(delay, move |act, ctx| {
            act.armed = None;
            act.fire(deadline, ctx);
        });
        self.armed = Some((deadline, handle));
    }

    /// Re-reads the deadline from the applied state (after its own tick committed).
    fn reread(&mut self, ctx: &mut Context<Self>) {
        let id = self.id;
        let deadline = read_with(&self.host, |s| s.deployment_deadline(id));
        self.arm(deadline, ctx);
    }

    fn fire(&mut self, deadline: Timestamp, ctx: &mut Context<Self>) {
        if self.ticking {
            return;
        }
        self.ticking = true;
        self.last_fired = Some(deadline);
        tracing::debug!(deployment = %self.id, deadline, "deadline reached: proposing TickDeployment");
        let tick = self.host.propose(Command::TickDeployment { id: self.id });
        ctx.spawn(tick.into_actor(self).map(move |result, act, ctx| {
            act.ticking = false;
            match result {
                Ok(_) => act.reread(ctx),
                Err(e) => {
                    tracing::warn!(deployment = %act.id, error = %e, "TickDeployment not committed; retrying");
                    ctx.run_later(RETRY, move |act, ctx| act.fire(deadline, ctx));
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
        self.armed.as_ref().map(|(d, _)| *d)
    }
}

#[cfg(test)]
impl Handler<super::messages::Told> for DeploymentActor {
    type Result = u64;
    fn handle(&mut self, _: super::messages::Told, _: &mut Self::Context) -> u64 {
        self.told
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
