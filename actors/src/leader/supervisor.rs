//! The supervisor wires the leader's three jobs to leadership changes and to the server's messages:
//! its children (`children.rs`: started from the applied state when this server becomes leader,
//! re-armed from each outcome, stopped when it steps down), report routing and liveness
//! (`routing.rs`: every report passes through it; `MarkInactive` on its interval) and housekeeping
//! (`housekeeping.rs`: `ForgetNodes` on the same interval, `Prune` on leadership and state changes).
//! It holds the one leader-side answer to "does this server lead?" (`leadership.rs`) and proposes
//! what the jobs decide; it decides nothing itself.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use futures::future::BoxFuture;

use super::children::Children;
use super::host::{Host, ProposeError};
use super::housekeeping::Housekeeping;
use super::leadership::{Change, Role};
use super::messages::{LastReports, Leadership, Report, ReportBatch, ReportRejected, StateChanged};
use super::routing::ReportRouting;
use crate::domain::{Command, NodeReport, Response};

/// Settings of the leader's actors.
#[derive(Clone, Debug)]
pub struct SupervisorConfig {
    /// A node that stops reporting for this long is marked inactive.
    pub node_timeout: Duration,
    /// Terminal deployments that keep their node list and node events; older ones are pruned.
    pub deployment_history: u32,
    /// A node in no consumer and no active deployment that stops reporting for this long is
    /// forgotten (`ForgetNodes`); zero: never.
    pub forget_nodes_after: Duration,
}

/// The default of [`SupervisorConfig::forget_nodes_after`]: a week.
pub const DEFAULT_FORGET_NODES_AFTER: Duration = Duration::from_secs(7 * 24 * 3600);

/// The default of [`SupervisorConfig::deployment_history`].
pub const DEFAULT_DEPLOYMENT_HISTORY: u32 = 1_000;

/// What to do with the answer to a proposal, back on the supervisor.
type Done = fn(&mut Supervisor, Result<Response, ProposeError>, &mut Context<Supervisor>);

/// Follows leadership and hands each message to the job it concerns.
pub struct Supervisor {
    host: Arc<dyn Host>,
    node_timeout: Duration,
    role: Role,
    children: Children,
    routing: ReportRouting,
    housekeeping: Housekeeping,
}

/// The leader's monotonic clock (liveness), read here only.
fn now() -> Instant {
    Instant::now()
}

impl Supervisor {
    /// A supervisor that starts as a follower.
    pub fn new(host: Arc<dyn Host>, config: SupervisorConfig) -> Self {
        Self {
            children: Children::new(host.clone()),
            routing: ReportRouting::new(
                host.clone(),
                config.node_timeout,
                config.forget_nodes_after,
                now(),
            ),
            housekeeping: Housekeeping::new(
                host.clone(),
                config.forget_nodes_after,
                config.deployment_history,
            ),
            host,
            node_timeout: config.node_timeout,
            role: Role::default(),
        }
    }

    fn become_leader(&mut self) {
        self.housekeeping.leadership_began();
        self.routing.restart(now());
        self.children.start_all();
    }

    /// Proposes `command` and hands its answer to `done`.
    fn propose(&mut self, command: Command, done: Done, ctx: &mut Context<Self>) {
        let fut = self.host.propose(command);
        ctx.spawn(
            fut.into_actor(self)
                .map(move |result, act, ctx| done(act, result, ctx)),
        );
    }

    /// On the liveness interval: nodes to forget, then silent nodes to mark inactive. Waits while
    /// a `MarkInactive` is being committed.
    fn check_liveness(&mut self, ctx: &mut Context<Self>) {
        if !self.role.is_leader() || self.routing.marking() {
            return;
        }
        let now = now();
        let silent = self.routing.silent(now);
        if let Some(forget) = self.housekeeping.forget(self.routing.liveness(), now) {
            self.propose(
                forget,
                |act, result, _| act.housekeeping.forgotten(result),
                ctx,
            );
        }
        if let Some(mark) = self.routing.mark_inactive(silent, now) {
            self.propose(mark, |act, result, _| act.routing.marked(result), ctx);
        }
    }

    /// Proposes `Prune` when housekeeping finds it due; looks again once it is committed.
    fn check_retention(&mut self, ctx: &mut Context<Self>) {
        if !self.role.is_leader() {
            return;
        }
        if let Some(prune) = self.housekeeping.prune() {
            self.propose(
                prune,
                |act, result, ctx| {
                    if act.housekeeping.pruned(result) {
                        act.check_retention(ctx);
                    }
                },
                ctx,
            );
        }
    }

    /// Routes `reports` on the leader; a follower refuses them all (the server forwards them to
    /// the leader).
    fn route(
        &mut self,
        reports: Vec<NodeReport>,
    ) -> BoxFuture<'static, Vec<Result<(), ReportRejected>>> {
        if !self.role.is_leader() {
            let count = reports.len();
            return Box::pin(async move { vec![Err(ReportRejected::NotLeader); count] });
        }
        self.routing.route(reports, &mut self.children, now())
    }
}

impl Actor for Supervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let every = (self.node_timeout / 4).max(Duration::from_millis(50));
        ctx.run_interval(every, |act, ctx| act.check_liveness(ctx));
    }
}

impl Handler<Leadership> for Supervisor {
    type Result = ();
    fn handle(&mut self, Leadership(leads): Leadership, ctx: &mut Self::Context) {
        match self.role.change(leads) {
            Some(Change::Became) => self.become_leader(),
            Some(Change::SteppedDown) => self.children.stop_all(),
            None => {}
        }
        self.check_retention(ctx);
    }
}

impl Handler<StateChanged> for Supervisor {
    type Result = ();
    fn handle(&mut self, _: StateChanged, ctx: &mut Self::Context) {
        if self.role.is_leader() {
            self.children.state_changed();
            self.check_retention(ctx);
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
        self.role
            .is_leader()
            .then(|| self.routing.last_reports(&nodes, now()))
    }
}

#[cfg(test)]
impl Handler<super::messages::ListChildren> for Supervisor {
    type Result = MessageResult<super::messages::ListChildren>;
    fn handle(&mut self, _: super::messages::ListChildren, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.children.list())
    }
}

#[cfg(test)]
#[path = "supervisor_test.rs"]
mod tests;
