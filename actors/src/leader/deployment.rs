//! One actor per active deployment: it owns exactly one timer, armed at the deployment's next
//! deadline in the applied state (pulse deadline, healthy-watch end, completion timeout), and
//! proposes `Tick` when it fires.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use super::host::{read_with, Host};
use super::messages::{ArmedDeadline, Rearm, Stop};
use crate::domain::{Command, DeploymentId, Timestamp};

/// After a `Tick` that left the same deadline in place, wait this long before the next one.
const RETRY: Duration = Duration::from_millis(100);

/// Drives one deployment's time-based rules on the leader.
pub struct DeploymentActor {
    id: DeploymentId,
    host: Arc<dyn Host>,
    armed: Option<(Timestamp, SpawnHandle)>,
    ticking: bool,
    last_fired: Option<Timestamp>,
}

impl DeploymentActor {
    /// An actor for deployment `id`; it arms its timer as soon as it starts.
    pub fn new(id: DeploymentId, host: Arc<dyn Host>) -> Self {
        Self {
            id,
            host,
            armed: None,
            ticking: false,
            last_fired: None,
        }
    }

    fn rearm(&mut self, ctx: &mut Context<Self>) {
        let id = self.id;
        let deadline = read_with(&self.host, |s| s.deployment_deadline(id));
        if self.armed.as_ref().map(|(d, _)| *d) == deadline {
            return;
        }
        if let Some((_, handle)) = self.armed.take() {
            ctx.cancel_future(handle);
        }
        let Some(deadline) = deadline else { return };
        let mut delay = Duration::from_millis(deadline.saturating_sub(self.host.now_ms()));
        if self.last_fired == Some(deadline) {
            // A Tick at this deadline already went through and left it in place: don't spin.
            delay = delay.max(RETRY);
        }
        let handle = ctx.run_later(delay, move |act, ctx| {
            act.armed = None;
            act.fire(deadline, ctx);
        });
        self.armed = Some((deadline, handle));
    }

    fn fire(&mut self, deadline: Timestamp, ctx: &mut Context<Self>) {
        if self.ticking {
            return;
        }
        self.ticking = true;
        self.last_fired = Some(deadline);
        tracing::debug!(deployment = %self.id, deadline, "deadline reached: proposing Tick");
        let tick = self.host.propose(Command::Tick);
        ctx.spawn(tick.into_actor(self).map(move |result, act, ctx| {
            act.ticking = false;
            match result {
                Ok(_) => act.rearm(ctx),
                Err(e) => {
                    tracing::warn!(deployment = %act.id, error = %e, "Tick not committed; retrying");
                    ctx.run_later(RETRY, move |act, ctx| act.fire(deadline, ctx));
                }
            }
        }));
    }
}

impl Actor for DeploymentActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.rearm(ctx);
    }
}

impl Handler<Rearm> for DeploymentActor {
    type Result = ();
    fn handle(&mut self, _: Rearm, ctx: &mut Self::Context) {
        self.rearm(ctx);
    }
}

impl Handler<ArmedDeadline> for DeploymentActor {
    type Result = Option<Timestamp>;
    fn handle(&mut self, _: ArmedDeadline, _: &mut Self::Context) -> Option<Timestamp> {
        self.armed.as_ref().map(|(d, _)| *d)
    }
}

impl Handler<Stop> for DeploymentActor {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Self::Context) {
        ctx.stop();
    }
}
