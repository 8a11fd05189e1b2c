//! The leader's logic in the loop: convoy-actors' own handlers run on the simulated leader, the
//! ones its actix actors are thin shells over. The supervisor ([`SupervisorCore`]) follows
//! leadership — a new leader starts afresh: its children built from the applied state, every pulse
//! countdown re-armed (one that ran out while no leader watched fires at once) — and routes the
//! agents' reports (every report is proof of life; active consumer nodes silent longer than the
//! node timeout become `MarkInactive`); housekeeping proposes `ForgetNodes` and `Prune` past the
//! deployment history. Its children run as plain handlers ([`SimKin`]): each consumer's
//! ([`ConsumerCore`]) keeps heartbeats off the log and proposes its changes in batches, paced on
//! the virtual clock; each active deployment's ([`DeploymentCore`]) arms its one timer on the
//! virtual clock and proposes `TickDeployment` when it fires; each running group deployment's
//! ([`GroupCore`]) follows its steps. All of it over a [`Host`] that reads the leader's applied
//! state and proposes through the simulated log.
//!
//! The handlers take `std::time::Instant`s; the simulation hands them one origin taken at the
//! start of the run plus the virtual time, so only virtual durations ever reach them.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use convoy_actors::domain::{
    ClusterState, Command, DeploymentId, GroupDeploymentId, NodeReport, Outcome, Response,
    Timestamp,
};
use convoy_actors::leader::consumer::Flush;
use convoy_actors::leader::deployment::{Ticked, Timer};
use convoy_actors::leader::{
    read_with, ConsumerCore, DeploymentCore, GroupCore, Host, Kin, ProposeError, SupervisorConfig,
    SupervisorCore,
};
use futures::future::BoxFuture;

use super::cluster::{Client, Written};
use super::executor::{self, HARNESS};
use super::log_store::lock;
use super::observe::Observations;
use super::sm_store::SharedApplied;

/// A node silent this long is marked inactive.
pub const NODE_TIMEOUT: Duration = Duration::from_secs(10);
/// A node in no consumer silent this long is forgotten.
pub const FORGET_AFTER: Duration = Duration::from_secs(60);
/// Terminal deployments that keep their detail (small, so that `Prune` is exercised).
pub const DEPLOYMENT_HISTORY: u32 = 3;

/// The simulated server the handlers run on, as their [`Host`].
struct SimHost {
    id: u64,
    applied: SharedApplied,
    client: Client,
}

impl Host for SimHost {
    fn propose(&self, command: Command) -> BoxFuture<'static, Result<Response, ProposeError>> {
        let client = self.client.clone();
        Box::pin(async move {
            match client.write(&command, Duration::from_secs(5)).await {
                Written::Done { response, .. } => response.map_err(ProposeError::Refused),
                Written::Unknown(why) => Err(ProposeError::Unavailable(why)),
            }
        })
    }

    fn read(&self, f: &mut dyn FnMut(&ClusterState)) {
        f(lock(&self.applied).machine.state());
    }

    fn now_ms(&self) -> Timestamp {
        self.client.wall_ms(self.id)
    }

    /// What the applies changed, merged by the server's real `Machine` as in the server: the
    /// children follow it and touch only what it names.
    fn take_outcome(&self) -> Outcome {
        lock(&self.applied).machine.take_outcome()
    }
}

/// A deployment's handler, its timers on the virtual clock (ms).
pub struct SimDeployment {
    core: DeploymentCore,
    /// The one timer: when it fires and for which deadline.
    timer: Option<(u64, Timestamp)>,
    /// A tick that did not commit, fired again then.
    retry: Option<(u64, Timestamp)>,
}

impl SimDeployment {
    fn set(&mut self, timer: Timer) {
        match timer {
            Timer::Keep => {}
            Timer::Cancel => self.timer = None,
            Timer::Arm { deadline, delay } => {
                self.timer = Some((executor::now_ms() + delay.as_millis() as u64, deadline));
            }
        }
    }

    /// The deadline whose timer (or retry) is due at virtual `now`, taken.
    fn due(&mut self, now: u64) -> Option<Timestamp> {
        if let Some((_, deadline)) = self.timer.filter(|(at, _)| *at <= now) {
            self.timer = None;
            return Some(deadline);
        }
        let (_, deadline) = self.retry.filter(|(at, _)| *at <= now)?;
        self.retry = None;
        Some(deadline)
    }
}

/// A consumer's handler, its pacing wait on the virtual clock (ms).
pub struct SimConsumer {
    core: ConsumerCore,
    wait_until: Option<u64>,
}

/// The supervisor's children as plain handlers on the simulated leader.
pub struct SimKin {
    host: Arc<dyn Host>,
}

impl Kin for SimKin {
    type Deployment = SimDeployment;
    type Group = GroupCore;
    type Consumer = SimConsumer;

    fn start_deployment(
        &mut self,
        id: DeploymentId,
        host: &Arc<dyn Host>,
        deadline: Option<Timestamp>,
    ) -> SimDeployment {
        let mut child = SimDeployment {
            core: DeploymentCore::new(id),
            timer: None,
            retry: None,
        };
        let timer = child.core.arm(deadline, host.now_ms());
        child.set(timer);
        child
    }

    fn rearm(&mut self, child: &mut SimDeployment, deadline: Option<Timestamp>) {
        let timer = child.core.arm(deadline, self.host.now_ms());
        child.set(timer);
    }

    fn stop_deployment(&mut self, _: SimDeployment) {}

    fn start_group(&mut self, id: GroupDeploymentId, host: &Arc<dyn Host>) -> GroupCore {
        let mut core = GroupCore::new(id);
        let now = host.now_ms();
        host.read(&mut |s| core.started(s, now));
        core
    }

    fn step_started(&mut self, child: &mut GroupCore, step: u32) {
        let now = self.host.now_ms();
        self.host.read(&mut |s| child.step_started(step, s, now));
    }

    fn stop_group(&mut self, child: GroupCore) {
        child.stopped();
    }

    fn start_consumer(&mut self, name: &str, host: &Arc<dyn Host>) -> SimConsumer {
        SimConsumer {
            core: ConsumerCore::new(name.to_string(), host.clone()),
            wait_until: None,
        }
    }

    fn stop_consumer(&mut self, mut child: SimConsumer) {
        child.core.stopped();
    }
}

/// The supervisor of the current leader.
struct Current {
    leader: u64,
    /// Which leadership this is (answers to an earlier one's proposals are dropped).
    generation: u64,
    host: Arc<dyn Host>,
    supervisor: SupervisorCore<SimKin>,
    /// When the liveness check runs next (virtual ms).
    next_liveness: u64,
}

/// The leader's handlers, following leadership.
pub struct LeaderJobs {
    origin: Instant,
    current: Option<Current>,
    generations: u64,
}

impl LeaderJobs {
    /// No leader yet; `origin` stands for virtual time zero.
    pub fn new(origin: Instant) -> Self {
        LeaderJobs {
            origin,
            current: None,
            generations: 0,
        }
    }

    fn now(&self) -> Instant {
        self.origin + Duration::from_millis(executor::now_ms())
    }

    /// Follows leadership: the supervisor of a new leader starts afresh (`applied` its state), the
    /// old one's children stop.
    pub fn leader_is(&mut self, leader: Option<(u64, SharedApplied)>, client: &Client) {
        let now = self.now();
        if let (Some((id, _)), Some(current)) = (&leader, &self.current) {
            if current.leader == *id {
                return;
            }
        }
        if let Some(mut old) = self.current.take() {
            old.supervisor.leadership(false, now);
        }
        let Some((id, applied)) = leader else {
            return;
        };
        let host: Arc<dyn Host> = Arc::new(SimHost {
            id,
            applied,
            client: client.clone(),
        });
        let config = SupervisorConfig {
            node_timeout: NODE_TIMEOUT,
            deployment_history: DEPLOYMENT_HISTORY,
            forget_nodes_after: FORGET_AFTER,
        };
        let kin = SimKin { host: host.clone() };
        let mut supervisor = SupervisorCore::new(host.clone(), &config, kin, now);
        supervisor.leadership(true, now);
        self.generations += 1;
        self.current = Some(Current {
            leader: id,
            generation: self.generations,
            next_liveness: executor::now_ms() + supervisor.liveness_interval().as_millis() as u64,
            host,
            supervisor,
        });
    }

    /// The agents' reports reach the leader: routed to their consumers' handlers (refreshing the
    /// nodes' liveness), which keep the changes for their next batch. Returns how many were
    /// refused (a follower, a full queue, a report out of bounds).
    pub fn reported(&mut self, reports: Vec<NodeReport>) -> usize {
        let (now, count) = (self.now(), reports.len());
        let Some(current) = &mut self.current else {
            return count;
        };
        let Some(routed) = current.supervisor.route(reports, now) else {
            return count;
        };
        let mut refused = 0;
        for (consumer, (_, batch)) in routed.batches {
            let child = current.supervisor.consumer(&consumer);
            refused += child
                .core
                .ingest(batch, now)
                .iter()
                .filter(|a| a.is_err())
                .count();
        }
        refused
    }
}

/// Something proposed by the leader's handlers, whose answer goes back to its handler.
enum Proposed {
    Supervisor(convoy_actors::leader::Job),
    Tick(DeploymentId, Timestamp),
    Batch(String),
}

/// Proposes `command` for `what` on behalf of the leadership `generation`.
fn propose(
    jobs: &Rc<RefCell<LeaderJobs>>,
    host: &Arc<dyn Host>,
    generation: u64,
    what: Proposed,
    command: Command,
) {
    let answer = host.propose(command);
    let jobs = jobs.clone();
    executor::spawn_owned(HARNESS, async move {
        let result = answer.await;
        let mut all = jobs.borrow_mut();
        let Some(current) = all.current.as_mut().filter(|c| c.generation == generation) else {
            return;
        };
        match what {
            Proposed::Supervisor(job) => {
                // Retention is looked at again on the next step in any case.
                current.supervisor.answered(job, result);
            }
            Proposed::Tick(id, deadline) => {
                let host = current.host.clone();
                let Some(child) = current
                    .supervisor
                    .children_mut()
                    .deployments_mut()
                    .get_mut(&id)
                else {
                    return;
                };
                match child
                    .core
                    .ticked(deadline, result.map(drop).map_err(|e| e.to_string()))
                {
                    Ticked::Reread => {
                        let now = host.now_ms();
                        let core = &mut child.core;
                        let timer = read_with(&host, |s| core.reread(s, now));
                        child.set(timer);
                    }
                    Ticked::Retry { deadline, delay } => {
                        child.retry =
                            Some((executor::now_ms() + delay.as_millis() as u64, deadline));
                    }
                }
            }
            Proposed::Batch(name) => {
                if let Some(child) = current
                    .supervisor
                    .children_mut()
                    .consumers_mut()
                    .get_mut(&name)
                {
                    child.core.proposed(result);
                }
            }
        }
    });
}

/// One step of the leader's handlers at the virtual now: the supervisor follows the applied state
/// (its children started, re-armed and stopped from it) and proposes what liveness and
/// housekeeping find due; every deployment timer due fires; every consumer flushes its batch.
pub fn step(jobs: &Rc<RefCell<LeaderJobs>>, obs: &Observations) {
    let mut all = jobs.borrow_mut();
    let now = all.now();
    let Some(current) = all.current.as_mut() else {
        return;
    };
    let (leader, generation, host) = (current.leader, current.generation, current.host.clone());
    let mut proposals: Vec<(Proposed, Command)> = Vec::new();
    let supervisor = &mut current.supervisor;
    supervisor.state_changed();
    let virtual_now = executor::now_ms();
    if virtual_now >= current.next_liveness {
        current.next_liveness = virtual_now + supervisor.liveness_interval().as_millis() as u64;
        for (job, command) in supervisor.check_liveness(now) {
            proposals.push((Proposed::Supervisor(job), command));
        }
    }
    if let Some((job, command)) = supervisor.check_retention() {
        proposals.push((Proposed::Supervisor(job), command));
    }
    // The shell's timer at the weak subscriptions' next window change: at the first step at or after it.
    if let Some((job, command)) = supervisor.check_weak_tick() {
        proposals.push((Proposed::Supervisor(job), command));
    }
    let children = supervisor.children_mut();
    for (id, child) in children.deployments_mut() {
        let Some(deadline) = child.due(virtual_now) else {
            continue;
        };
        if let Some(tick) = child.core.fire(deadline) {
            proposals.push((Proposed::Tick(*id, deadline), tick));
        }
    }
    for (name, child) in children.consumers_mut() {
        if child.wait_until.is_some_and(|at| at <= virtual_now) {
            child.wait_until = None;
            child.core.paced_over();
        }
        match child.core.flush(now) {
            Flush::Idle => {}
            Flush::Wait(delay) => {
                child.wait_until = Some(virtual_now + delay.as_millis() as u64);
            }
            Flush::Propose(batch) => {
                proposals.push((Proposed::Batch(name.clone()), Command::ReportNodes(batch)))
            }
        }
    }
    drop(all);
    for (what, command) in proposals {
        obs.trace(format!(
            "leader s{leader} proposes {}",
            describe(&what, &command)
        ));
        propose(jobs, &host, generation, what, command);
    }
}

/// A trace line's words for a proposal of the leader's handlers.
fn describe(what: &Proposed, command: &Command) -> String {
    match (what, command) {
        (Proposed::Supervisor(job), _) => format!("{job:?}"),
        (Proposed::Tick(id, deadline), _) => format!("TickDeployment {id} at deadline {deadline}"),
        (Proposed::Batch(name), Command::ReportNodes(batch)) => {
            format!("ReportNodes of {name}: {} nodes", batch.len())
        }
        (Proposed::Batch(name), _) => format!("a batch of {name}"),
    }
}
