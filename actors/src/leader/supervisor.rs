//! The supervisor follows leadership: on becoming leader it starts one child per active
//! deployment, per running group deployment and per consumer from the applied state (each
//! deployment actor armed at its deadline, the pulse countdowns re-armed from the replicated
//! last-pulse time by `rearm_pulses`); on each state change it takes the outcome of the applies
//! since the last one and starts, stops and re-arms only the children it names (a re-sync against
//! the whole state when the outcome gave up its detail); on stepping down it stops them all. Every
//! report passes through it on its way to a consumer's actor, so it also keeps node liveness, once
//! per node, and proposes `MarkInactive` for nodes silent longer than the node timeout. When
//! deployments end and more terminal deployments keep their node detail than
//! `deployment_history`, it proposes `Prune` (domain `retention.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;

use super::consumer::ConsumerActor;
use super::deployment::DeploymentActor;
use super::group::GroupDeploymentActor;
use super::host::{read_with, Host};
use super::liveness::Liveness;
use futures::future::BoxFuture;

use super::messages::{
    CheckLiveness, Children, LastReports, Leadership, ListChildren, Rearm, Report, ReportBatch,
    ReportRejected, StateChanged, StepStarted, Stop,
};
use crate::domain::MAX_NODES_PER_COMMAND;
use crate::domain::{
    ClusterState, Command, DeploymentId, GroupDeploymentId, NodeReport, Outcome, Timestamp,
};

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

/// Starts, re-syncs and stops the leader's children.
pub struct Supervisor {
    host: Arc<dyn Host>,
    config: SupervisorConfig,
    leader: bool,
    deployments: BTreeMap<DeploymentId, Addr<DeploymentActor>>,
    groups: BTreeMap<GroupDeploymentId, Addr<GroupDeploymentActor>>,
    consumers: BTreeMap<String, Addr<ConsumerActor>>,
    /// When each node last reported (leader only).
    liveness: Liveness,
    /// A `MarkInactive` is being committed: the next check waits for it.
    marking: bool,
    /// A `ForgetNodes` is being committed: the next check waits for it.
    forgetting: bool,
    /// Leadership began, or a `Prune` failed, since retention was last checked.
    retention_due: bool,
    /// Terminal deployments in the state when retention was last checked.
    terminal_seen: usize,
    /// A `Prune` is being committed.
    pruning: bool,
}

impl Supervisor {
    /// A supervisor that starts as a follower.
    pub fn new(host: Arc<dyn Host>, config: SupervisorConfig) -> Self {
        Self {
            host,
            leader: false,
            deployments: BTreeMap::new(),
            groups: BTreeMap::new(),
            consumers: BTreeMap::new(),
            liveness: Liveness::new(config.node_timeout, Instant::now())
                .forgetting_after(config.forget_nodes_after),
            config,
            marking: false,
            forgetting: false,
            retention_due: false,
            terminal_seen: 0,
            pruning: false,
        }
    }

    /// Builds every child from the applied state: the outcomes applied so far are in it, so they
    /// are dropped; pulse countdowns that ran out while no leader watched fire at once.
    fn become_leader(&mut self) {
        self.leader = true;
        self.retention_due = true;
        self.liveness.restart(Instant::now());
        drop(self.host.take_outcome());
        let now = self.host.now_ms();
        let (expired, next) = read_with(&self.host, |s| (s.rearm_pulses(now), s.next_deadline()));
        for id in &expired {
            // Their countdown ran out while no leader watched: their actor ticks at once, which blocks them.
            tracing::info!(deployment = %id, "pulse countdown expired across the failover");
        }
        self.sync();
        tracing::info!(
            deployments = self.deployments.len(),
            groups = self.groups.len(),
            consumers = self.consumers.len(),
            next_deadline_in_ms = next.map(|d| d.saturating_sub(now)),
            "leader actors started"
        );
    }

    fn step_down(&mut self) {
        self.leader = false;
        for (_, addr) in std::mem::take(&mut self.deployments) {
            addr.do_send(Stop);
        }
        for (_, addr) in std::mem::take(&mut self.groups) {
            addr.do_send(Stop);
        }
        for (_, addr) in std::mem::take(&mut self.consumers) {
            addr.do_send(Stop);
        }
        tracing::info!("leader actors stopped");
    }

    /// Matches every child to the whole applied state and tells every deployment actor its deadline
    /// (leadership began, or an outcome gave up its detail).
    fn sync(&mut self) {
        type Deadlines = Vec<(DeploymentId, Option<Timestamp>)>;
        let (active, groups, consumers): (Deadlines, Vec<GroupDeploymentId>, BTreeSet<String>) =
            read_with(&self.host, |s| {
                (
                    s.active_deployments()
                        .into_iter()
                        .map(|id| (id, s.deployment_deadline(id)))
                        .collect(),
                    s.running_group_deployments(),
                    s.consumer_names().cloned().collect(),
                )
            });
        let ids: BTreeSet<DeploymentId> = active.iter().map(|(id, _)| *id).collect();
        let gone: Vec<DeploymentId> = self
            .deployments
            .keys()
            .filter(|id| !ids.contains(id))
            .copied()
            .collect();
        for id in gone {
            self.end_deployment(id);
        }
        for (id, deadline) in active {
            self.deployment_changed(id, deadline);
        }
        let running: BTreeSet<GroupDeploymentId> = groups.iter().copied().collect();
        let ended: Vec<GroupDeploymentId> = self
            .groups
            .keys()
            .filter(|id| !running.contains(id))
            .copied()
            .collect();
        for id in ended {
            self.end_group(id);
        }
        for id in groups {
            self.start_group(id);
        }
        let names: Vec<String> = self
            .consumers
            .keys()
            .filter(|n| !consumers.contains(*n))
            .cloned()
            .collect();
        for name in names.into_iter().chain(consumers) {
            self.consumer_changed(&name, |s| s.has_consumer(&name));
        }
    }

    /// Acts on what the applies since the last state change changed, and on nothing else: an
    /// unrelated batch (reports of nodes in no deployment) leaves every child untouched.
    fn follow(&mut self, outcome: Outcome) {
        if outcome.needs_resync() {
            self.sync();
            return;
        }
        for id in outcome.ended() {
            self.end_deployment(id);
        }
        for (id, deadline) in outcome.deadlines() {
            let active = read_with(&self.host, |s| s.is_active(id));
            if active {
                self.deployment_changed(id, deadline);
            } else {
                self.end_deployment(id);
            }
        }
        for id in outcome.groups_started() {
            self.start_group(id);
        }
        for (id, step) in outcome.steps() {
            if let Some(addr) = self.groups.get(&id) {
                addr.do_send(StepStarted(step));
            }
        }
        for id in outcome.groups_ended() {
            self.end_group(id);
        }
        for name in outcome.consumers() {
            self.consumer_changed(name, |s| s.has_consumer(name));
        }
    }

    /// Deployment `id` is active with `deadline`: its actor is told, or started armed there.
    fn deployment_changed(&mut self, id: DeploymentId, deadline: Option<Timestamp>) {
        if let Some(addr) = self.deployments.get(&id) {
            addr.do_send(Rearm(deadline));
            return;
        }
        let what = read_with(&self.host, |s| {
            let (consumer, resource, version) = s.rollout_of(id)?;
            let status = s.deployment_status(id)?;
            Some((consumer.to_string(), resource.to_string(), version, status))
        });
        if let Some((consumer, resource, version, status)) = what {
            tracing::info!(deployment = %id, %consumer, %resource, version, status = status.as_str(), "deployment active: its timer runs on this leader");
        }
        let addr = DeploymentActor::with_deadline(id, self.host.clone(), deadline).start();
        self.deployments.insert(id, addr);
    }

    fn end_deployment(&mut self, id: DeploymentId) {
        if let Some(addr) = self.deployments.remove(&id) {
            addr.do_send(Stop);
            let status = read_with(&self.host, |s| s.deployment_status(id));
            tracing::info!(deployment = %id, status = status.map_or("FORGOTTEN", |s| s.as_str()), "deployment no longer active");
        }
    }

    fn start_group(&mut self, id: GroupDeploymentId) {
        if self.groups.contains_key(&id) || read_with(&self.host, |s| s.group_step(id)).is_none() {
            return;
        }
        let addr = GroupDeploymentActor::new(id, self.host.clone()).start();
        self.groups.insert(id, addr);
    }

    fn end_group(&mut self, id: GroupDeploymentId) {
        if let Some(addr) = self.groups.remove(&id) {
            addr.do_send(Stop);
        }
    }

    /// Consumer `name` was created or deleted: start or stop its actor to match `exists`.
    fn consumer_changed(&mut self, name: &str, exists: impl FnOnce(&ClusterState) -> bool) {
        let exists = read_with(&self.host, exists);
        match (exists, self.consumers.contains_key(name)) {
            (true, false) => {
                let addr = ConsumerActor::new(name.to_string(), self.host.clone()).start();
                self.consumers.insert(name.to_string(), addr);
            }
            (false, true) => {
                if let Some(addr) = self.consumers.remove(name) {
                    addr.do_send(Stop);
                }
            }
            _ => {}
        }
    }
}

impl Supervisor {
    /// Proposes `MarkInactive` for the active nodes of any consumer that were silent longer than the
    /// node timeout. Each node is checked once, however many consumers hold it.
    fn check_liveness(&mut self, ctx: &mut Context<Self>) {
        if !self.leader || self.marking {
            return;
        }
        let now = Instant::now();
        let liveness = &self.liveness;
        let silent: Vec<String> =
            read_with(&self.host, |s| liveness.silent(s.reporting_nodes(), now));
        self.check_forgetting(now, ctx);
        self.liveness.forget_stale(now);
        tracing::trace!(heard = self.liveness.len(), "liveness checked");
        if silent.is_empty() {
            return;
        }
        tracing::info!(nodes = ?silent, "nodes stopped reporting: marking inactive");
        self.marking = true;
        let fut = self.host.propose(Command::MarkInactive { nodes: silent });
        ctx.spawn(fut.into_actor(self).map(|result, act, _| {
            act.marking = false;
            if let Err(e) = result {
                tracing::warn!(error = %e, "MarkInactive not committed");
            }
        }));
    }
}

impl Supervisor {
    /// Proposes `ForgetNodes` for nodes in no consumer and no active deployment that were silent
    /// longer than `forget_nodes_after`, at most [`MAX_NODES_PER_COMMAND`] at a time.
    fn check_forgetting(&mut self, now: Instant, ctx: &mut Context<Self>) {
        if self.forgetting || self.config.forget_nodes_after.is_zero() {
            return;
        }
        let liveness = &self.liveness;
        let mut forget: Vec<String> = read_with(&self.host, |s| {
            liveness.silent_to_forget(s.forgettable_nodes(), now)
        });
        if forget.is_empty() {
            return;
        }
        forget.truncate(MAX_NODES_PER_COMMAND);
        tracing::info!(nodes = forget.len(), first = %forget[0], "forgetting nodes silent and in no consumer");
        self.forgetting = true;
        let fut = self.host.propose(Command::ForgetNodes { nodes: forget });
        ctx.spawn(fut.into_actor(self).map(|result, act, _| {
            act.forgetting = false;
            if let Err(e) = result {
                tracing::warn!(error = %e, "ForgetNodes not committed");
            }
        }));
    }

    /// Proposes `Prune` when deployments ended (or leadership began) and more terminal deployments
    /// keep their detail than `deployment_history`; one at a time, a failed one retried at the
    /// next state change. Counting terminal deployments is O(1); only a change scans them.
    fn check_retention(&mut self, ctx: &mut Context<Self>) {
        if !self.leader || self.pruning {
            return;
        }
        let terminal = read_with(&self.host, |s| s.terminal_deployments());
        if terminal == self.terminal_seen && !self.retention_due {
            return;
        }
        self.terminal_seen = terminal;
        self.retention_due = false;
        let keep = self.config.deployment_history;
        if terminal <= keep as usize {
            return;
        }
        let unpruned = read_with(&self.host, |s| s.unpruned_terminal());
        if unpruned <= keep as usize {
            return;
        }
        tracing::info!(unpruned, keep, "pruning the oldest finished deployments");
        self.pruning = true;
        let fut = self.host.propose(Command::Prune { keep });
        ctx.spawn(fut.into_actor(self).map(|result, act, ctx| {
            act.pruning = false;
            match result {
                // Deployments that ended while this Prune was committed were skipped by the
                // checks meanwhile (one Prune at a time): look again now.
                Ok(_) => act.check_retention(ctx),
                Err(e) => {
                    act.retention_due = true;
                    tracing::warn!(error = %e, "Prune not committed");
                }
            }
        }));
    }
}

impl Actor for Supervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let every = (self.config.node_timeout / 4).max(Duration::from_millis(50));
        ctx.run_interval(every, |act, ctx| act.check_liveness(ctx));
    }
}

impl Handler<LastReports> for Supervisor {
    type Result = Option<Vec<Option<u64>>>;
    fn handle(&mut self, LastReports(nodes): LastReports, _: &mut Self::Context) -> Self::Result {
        if !self.leader {
            return None;
        }
        let now = Instant::now();
        Some(
            nodes
                .iter()
                .map(|n| self.liveness.age(n, now).map(|d| d.as_millis() as u64))
                .collect(),
        )
    }
}

impl Handler<CheckLiveness> for Supervisor {
    type Result = ();
    fn handle(&mut self, _: CheckLiveness, ctx: &mut Self::Context) {
        self.check_liveness(ctx);
    }
}

impl Handler<Leadership> for Supervisor {
    type Result = ();
    fn handle(&mut self, Leadership(leader): Leadership, ctx: &mut Self::Context) {
        match (self.leader, leader) {
            (false, true) => self.become_leader(),
            (true, false) => self.step_down(),
            _ => {}
        }
        self.check_retention(ctx);
    }
}

impl Handler<StateChanged> for Supervisor {
    type Result = ();
    fn handle(&mut self, _: StateChanged, ctx: &mut Self::Context) {
        if self.leader {
            let outcome = self.host.take_outcome();
            self.follow(outcome);
            self.check_retention(ctx);
        }
    }
}

impl Supervisor {
    /// The actor of consumer `name`, which the applied state knows: started now when the state
    /// change that created the consumer has not reached [`Supervisor::sync`] yet (it is notified
    /// asynchronously), so a report that follows the consumer's creation at once is not dropped.
    fn consumer_actor(&mut self, name: &str) -> Addr<ConsumerActor> {
        if let Some(addr) = self.consumers.get(name) {
            return addr.clone();
        }
        tracing::debug!(consumer = %name, "report before the consumer's actor: started now");
        let addr = ConsumerActor::new(name.to_string(), self.host.clone()).start();
        self.consumers.insert(name.to_string(), addr.clone());
        addr
    }
}

impl Handler<ListChildren> for Supervisor {
    type Result = MessageResult<ListChildren>;
    fn handle(&mut self, _: ListChildren, _: &mut Self::Context) -> Self::Result {
        MessageResult(Children {
            deployments: self
                .deployments
                .iter()
                .map(|(id, a)| (*id, a.clone()))
                .collect(),
            groups: self.groups.iter().map(|(id, a)| (*id, a.clone())).collect(),
        })
    }
}

/// The reports of one batch bound for one consumer actor, with their places in the batch.
type ConsumerBatch = (Addr<ConsumerActor>, Vec<usize>, Vec<NodeReport>);

impl Supervisor {
    /// Refreshes the reporting nodes' liveness and routes the reports to their (first) consumers'
    /// actors, one batch per actor; the answers come back in
    /// the reports' order. A follower refuses them all (the server forwards them to the leader).
    fn route(
        &mut self,
        reports: Vec<NodeReport>,
    ) -> BoxFuture<'static, Vec<Result<(), ReportRejected>>> {
        let count = reports.len();
        if !self.leader {
            return Box::pin(async move { vec![Err(ReportRejected::NotLeader); count] });
        }
        // A report is proof of life for its node, whichever consumer's actor takes it.
        let now = Instant::now();
        for r in &reports {
            if r.active != Some(false) {
                self.liveness.seen(&r.node, now);
            }
        }
        let consumers: Vec<Option<String>> = read_with(&self.host, |s| {
            reports
                .iter()
                .map(|r| s.report_consumer(&r.node).map(str::to_string))
                .collect()
        });
        let mut batches: BTreeMap<String, ConsumerBatch> = BTreeMap::new();
        let mut unassigned = Vec::new();
        for (i, (report, consumer)) in reports.into_iter().zip(consumers).enumerate() {
            match consumer.map(|c| {
                let addr = self.consumer_actor(&c);
                (c, addr)
            }) {
                Some((consumer, addr)) => {
                    let (_, slots, batch) = batches
                        .entry(consumer)
                        .or_insert_with(|| (addr, Vec::new(), Vec::new()));
                    slots.push(i);
                    batch.push(report);
                }
                None => unassigned.push(report),
            }
        }
        // Nodes in no consumer (and nothing to remove) are answered (no targets) but never written to the log: a flood of
        // made-up node ids must cost the replicas nothing. A node added to a consumer later is
        // recorded from its next report.
        if !unassigned.is_empty() {
            tracing::debug!(
                nodes = unassigned.len(),
                "reports of nodes in no consumer ignored"
            );
        }
        Box::pin(async move {
            let mut answers = vec![Ok(()); count];
            let sent = batches
                .into_values()
                .map(|(addr, slots, batch)| async move {
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
