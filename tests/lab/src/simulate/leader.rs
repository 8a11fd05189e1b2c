//! The leader's logic in the loop. convoy-actors' own plain jobs run on the simulated leader:
//! `Liveness` (every report is proof of life; active consumer nodes silent longer than the node
//! timeout become `MarkInactive`) and `Housekeeping` (`ForgetNodes`, `Prune` past the deployment
//! history), over a [`Host`] that reads the leader's applied state and proposes through the
//! simulated log. Like the supervisor, they start afresh with each new leader. The deployment
//! actors' one rule, `TickDeployment` when a deployment's deadline comes (one in flight per
//! deployment), is applied by the harness (`run.rs`): the actix actors themselves do not run here.
//!
//! The jobs take `std::time::Instant`s; the simulation hands them one origin taken at the start of
//! the run plus the virtual time, so only virtual durations ever reach them.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use convoy_actors::domain::{ClusterState, Command, Outcome, Timestamp};
use convoy_actors::leader::{Host, Housekeeping, Liveness, ProposeError};
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

/// The simulated server the jobs run on, as their [`Host`].
struct SimHost {
    id: u64,
    applied: SharedApplied,
    client: Client,
}

impl Host for SimHost {
    fn propose(
        &self,
        command: Command,
    ) -> BoxFuture<'static, Result<convoy_actors::domain::Response, ProposeError>> {
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

    fn take_outcome(&self) -> Outcome {
        Outcome::resync()
    }
}

/// The jobs of the current leader.
struct Jobs {
    leader: u64,
    host: Arc<SimHost>,
    liveness: Liveness,
    housekeeping: Housekeeping,
}

/// Which job proposed a command (its answer goes back to it).
#[derive(Clone, Copy, Debug)]
enum Kind {
    MarkInactive,
    Forget,
    Prune,
}

/// The leader's jobs, following leadership.
pub struct LeaderJobs {
    origin: Instant,
    jobs: Option<Jobs>,
    /// A `MarkInactive`, `ForgetNodes` or `Prune` is being committed (one at a time).
    busy: bool,
}

impl LeaderJobs {
    /// No leader yet; `origin` stands for virtual time zero.
    pub fn new(origin: Instant) -> Self {
        LeaderJobs {
            origin,
            jobs: None,
            busy: false,
        }
    }

    fn now(&self) -> Instant {
        self.origin + Duration::from_millis(executor::now_ms())
    }

    /// Follows leadership: the jobs start afresh on a new leader (`applied` its state).
    pub fn leader_is(&mut self, leader: Option<(u64, SharedApplied)>, client: &Client) {
        let now = self.now();
        match (leader, &self.jobs) {
            (Some((id, _)), Some(jobs)) if jobs.leader == id => {}
            (Some((id, applied)), _) => {
                let host = Arc::new(SimHost {
                    id,
                    applied,
                    client: client.clone(),
                });
                let mut housekeeping =
                    Housekeeping::new(host.clone(), FORGET_AFTER, DEPLOYMENT_HISTORY);
                housekeeping.leadership_began();
                self.jobs = Some(Jobs {
                    leader: id,
                    host,
                    liveness: Liveness::new(NODE_TIMEOUT, now).forgetting_after(FORGET_AFTER),
                    housekeeping,
                });
            }
            (None, _) => self.jobs = None,
        }
    }

    /// The leader heard from these nodes.
    pub fn reported(&mut self, nodes: &[String]) {
        let now = self.now();
        if let Some(jobs) = &mut self.jobs {
            for node in nodes {
                jobs.liveness.seen(node, now);
            }
        }
    }

    /// What the jobs want proposed now, if nothing of theirs is in flight.
    fn due(&mut self) -> Option<(Kind, Command, Arc<SimHost>)> {
        if self.busy {
            return None;
        }
        let now = self.now();
        let jobs = self.jobs.as_mut()?;
        let liveness = &jobs.liveness;
        let mut silent = Vec::new();
        jobs.host
            .read(&mut |s| silent = liveness.silent(s.reporting_nodes(), now));
        jobs.liveness.forget_stale(now);
        let (kind, command) = if !silent.is_empty() {
            (Kind::MarkInactive, Command::MarkInactive { nodes: silent })
        } else if let Some(forget) = jobs.housekeeping.forget(&jobs.liveness, now) {
            (Kind::Forget, forget)
        } else {
            (Kind::Prune, jobs.housekeeping.prune()?)
        };
        self.busy = true;
        Some((kind, command, jobs.host.clone()))
    }
}

/// Proposes what the leader's jobs want now, if anything, and hands the answer back to the job.
pub fn step(jobs: &Rc<RefCell<LeaderJobs>>, obs: &Observations) {
    let Some((kind, command, host)) = jobs.borrow_mut().due() else {
        return;
    };
    obs.trace(format!("leader s{} job proposes {kind:?}", host.id));
    let jobs = jobs.clone();
    executor::spawn_owned(HARNESS, async move {
        let result = host.propose(command).await;
        let mut all = jobs.borrow_mut();
        all.busy = false;
        let Some(current) = all.jobs.as_mut().filter(|j| Arc::ptr_eq(&j.host, &host)) else {
            return;
        };
        match kind {
            Kind::MarkInactive => {}
            Kind::Forget => current.housekeeping.forgotten(result),
            Kind::Prune => {
                current.housekeeping.pruned(result);
            }
        }
    });
}
