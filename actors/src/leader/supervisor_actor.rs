//! The actix shell of the supervisor (`supervisor.rs`): it runs the liveness interval, hands
//! leadership, state changes and reports to the supervisor's logic, proposes what it says through
//! the host, and sends each consumer's reports to its child actor.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use futures::future::BoxFuture;

use super::actix_kin::ActixKin;
use super::host::Host;
use super::messages::{LastReports, Leadership, Report, ReportBatch, ReportRejected, StateChanged};
use super::supervisor::{Job, SupervisorConfig, SupervisorCore};
use crate::domain::{Command, NodeReport};

/// Follows leadership and hands each message to the job it concerns.
pub struct Supervisor {
    core: SupervisorCore<ActixKin>,
    host: Arc<dyn Host>,
    /// The timer armed for the weak subscriptions' next window change, and its time.
    weak_timer: Option<(u64, SpawnHandle)>,
}

/// The leader's monotonic clock (liveness), read here only.
fn now() -> Instant {
    Instant::now()
}

impl Supervisor {
    /// A supervisor that starts as a follower.
    pub fn new(host: Arc<dyn Host>, config: SupervisorConfig) -> Self {
        Self {
            core: SupervisorCore::new(host.clone(), &config, ActixKin, now()),
            host,
            weak_timer: None,
        }
    }

    /// Proposes `command` for `job` and hands its answer back.
    fn propose(&mut self, job: Job, command: Command, ctx: &mut Context<Self>) {
        let fut = self.host.propose(command);
        ctx.spawn(fut.into_actor(self).map(move |result, act, ctx| {
            if act.core.answered(job, result) {
                act.check_retention(ctx);
            }
        }));
    }

    fn check_liveness(&mut self, ctx: &mut Context<Self>) {
        for (job, command) in self.core.check_liveness(now()) {
            self.propose(job, command, ctx);
        }
    }

    /// Arms (or moves, or cancels) the timer for the weak subscriptions' next window change, so its `Tick`
    /// is proposed at its time rather than at the next liveness check.
    fn arm_weak_tick(&mut self, ctx: &mut Context<Self>) {
        let at = self.core.weak_tick_at();
        if self.weak_timer.as_ref().map(|(t, _)| *t) == at {
            return;
        }
        if let Some((_, handle)) = self.weak_timer.take() {
            ctx.cancel_future(handle);
        }
        let Some(at) = at else {
            return;
        };
        let delay = Duration::from_millis(at.saturating_sub(self.host.now_ms()));
        let handle = ctx.run_later(delay, move |act, ctx| {
            act.weak_timer = None;
            match act.core.check_weak_tick() {
                Some((job, command)) => act.propose(job, command, ctx),
                // A timer a little early for the wall clock waits again; one in flight is re-armed
                // by its commit's state change (a failed one by the liveness check).
                None if act
                    .core
                    .weak_tick_at()
                    .is_some_and(|t| t > act.host.now_ms()) =>
                {
                    act.arm_weak_tick(ctx)
                }
                None => {}
            }
        });
        self.weak_timer = Some((at, handle));
    }

    fn check_retention(&mut self, ctx: &mut Context<Self>) {
        if let Some((job, command)) = self.core.check_retention() {
            self.propose(job, command, ctx);
        }
    }

    /// Routes `reports` to their consumers' actors on the leader; a follower refuses them all (the
    /// server forwards them to the leader).
    fn route(
        &mut self,
        reports: Vec<NodeReport>,
    ) -> BoxFuture<'static, Vec<Result<(), ReportRejected>>> {
        let count = reports.len();
        let Some(routed) = self.core.route(reports, now()) else {
            return Box::pin(async move { vec![Err(ReportRejected::NotLeader); count] });
        };
        let sends: Vec<_> = routed
            .batches
            .into_iter()
            .map(|(consumer, (slots, batch))| (self.core.consumer(&consumer).clone(), slots, batch))
            .collect();
        Box::pin(async move {
            let mut answers = vec![Ok(()); routed.count];
            let sent = sends.into_iter().map(|(addr, slots, batch)| async move {
                let n = slots.len();
                let taken = addr
                    .send(ReportBatch(batch))
                    .await
                    .unwrap_or_else(|_| vec![Err(ReportRejected::NotLeader); n]);
                (slots, taken)
            });
            for (slots, taken) in futures::future::join_all(sent).await {
                for (slot, answer) in slots.into_iter().zip(taken) {
                    answers[slot] = answer;
                }
            }
            answers
        })
    }
}

impl Actor for Supervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let every = self.core.liveness_interval();
        ctx.run_interval(every, |act, ctx| act.check_liveness(ctx));
    }
}

impl Handler<Leadership> for Supervisor {
    type Result = ();
    fn handle(&mut self, Leadership(leads): Leadership, ctx: &mut Self::Context) {
        self.core.leadership(leads, now());
        self.check_retention(ctx);
        self.arm_weak_tick(ctx);
    }
}

impl Handler<StateChanged> for Supervisor {
    type Result = ();
    fn handle(&mut self, _: StateChanged, ctx: &mut Self::Context) {
        if self.core.is_leader() {
            self.core.state_changed();
            self.check_retention(ctx);
            self.arm_weak_tick(ctx);
        }
    }
}

impl Handler<Report> for Supervisor {
    type Result = ResponseFuture<Result<(), ReportRejected>>;

    fn handle(&mut self, Report(report): Report, _: &mut Self::Context) -> Self::Result {
        let answers = self.route(vec![report]);
        Box::pin(async move {
            answers
                .await
                .pop()
                .unwrap_or(Err(ReportRejected::NotLeader))
        })
    }
}

impl Handler<ReportBatch> for Supervisor {
    type Result = ResponseFuture<Vec<Result<(), ReportRejected>>>;

    fn handle(&mut self, ReportBatch(reports): ReportBatch, _: &mut Self::Context) -> Self::Result {
        self.route(reports)
    }
}

impl Handler<LastReports> for Supervisor {
    type Result = Option<Vec<Option<u64>>>;
    fn handle(&mut self, LastReports(nodes): LastReports, _: &mut Self::Context) -> Self::Result {
        self.core.last_reports(&nodes, now())
    }
}

#[cfg(test)]
impl Handler<super::messages::ListChildren> for Supervisor {
    type Result = MessageResult<super::messages::ListChildren>;
    fn handle(&mut self, _: super::messages::ListChildren, _: &mut Self::Context) -> Self::Result {
        MessageResult(super::actix_kin::list(self.core.children()))
    }
}

#[cfg(test)]
#[path = "supervisor_test.rs"]
mod tests;
