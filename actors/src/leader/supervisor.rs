//! The supervisor's logic, without actix: it wires the leader's three jobs to leadership changes
//! and to the server's messages: its children (`children.rs`: started from the applied state when
//! this server becomes leader, re-armed from each outcome, stopped when it steps down), report
//! routing and liveness (`routing.rs`: every report passes through it; `MarkInactive` on its
//! interval) and housekeeping (`housekeeping.rs`: `ForgetNodes` on the same interval, `Prune` on
//! leadership and state changes), and the `Tick` a window change for weak subscriptions asks for
//! (`weak_tick.rs`, at its time and on the same interval). It holds the one leader-side answer to "does this server
//! lead?" (`leadership.rs`) and says what to propose; it decides nothing itself. Time is passed
//! in; the actix shell is `supervisor_actor.rs`, and convoy-lab's simulation drives it directly.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::children::{Children, Kin};
use super::host::{Host, ProposeError};
use super::housekeeping::Housekeeping;
use super::leadership::{Change, Role};
use super::routing::{ReportRouting, Routed};
use super::weak_tick::WeakTick;
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

/// Which job a proposal of the supervisor's is for (its answer goes back to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// `ForgetNodes` (housekeeping).
    Forget,
    /// `MarkInactive` (routing's liveness).
    MarkInactive,
    /// `Prune` (housekeeping's retention).
    Prune,
    /// `Tick` (a window change for weak subscriptions).
    WeakTick,
}

/// Follows leadership and hands each message to the job it concerns.
pub struct SupervisorCore<K: Kin> {
    node_timeout: Duration,
    role: Role,
    children: Children<K>,
    routing: ReportRouting,
    housekeeping: Housekeeping,
    weak_tick: WeakTick,
}

impl<K: Kin> SupervisorCore<K> {
    /// A supervisor that starts as a follower at `now`, its children run by `kin`.
    pub fn new(host: Arc<dyn Host>, config: &SupervisorConfig, kin: K, now: Instant) -> Self {
        Self {
            children: Children::new(host.clone(), kin),
            routing: ReportRouting::new(
                host.clone(),
                config.node_timeout,
                config.forget_nodes_after,
                now,
            ),
            weak_tick: WeakTick::new(host.clone()),
            housekeeping: Housekeeping::new(
                host,
                config.forget_nodes_after,
                config.deployment_history,
            ),
            node_timeout: config.node_timeout,
            role: Role::default(),
        }
    }

    /// How often the liveness check runs ([`SupervisorCore::check_liveness`]).
    pub fn liveness_interval(&self) -> Duration {
        (self.node_timeout / 4).max(Duration::from_millis(50))
    }

    /// Whether this server leads, as the supervisor was told.
    pub fn is_leader(&self) -> bool {
        self.role.is_leader()
    }

    /// The children (to drive them, in the simulation).
    pub fn children_mut(&mut self) -> &mut Children<K> {
        &mut self.children
    }

    /// The children.
    pub fn children(&self) -> &Children<K> {
        &self.children
    }

    /// Raft says this server leads (`true`) or not, at `now`: a new leader starts its children
    /// from the applied state, a leader stepping down stops them. Check retention after.
    pub fn leadership(&mut self, leads: bool, now: Instant) {
        match self.role.change(leads) {
            Some(Change::Became) => {
                self.housekeeping.leadership_began();
                self.routing.restart(now);
                self.children.start_all();
            }
            Some(Change::SteppedDown) => self.children.stop_all(),
            None => {}
        }
    }

    /// The applied state changed: the children follow its outcome. Check retention after.
    pub fn state_changed(&mut self) {
        if self.role.is_leader() {
            self.children.state_changed();
        }
    }

    /// On the liveness interval, at `now`: the `Tick` a window change for weak subscriptions asks for,
    /// nodes to forget, then silent nodes to mark inactive. Nothing while a `MarkInactive` is being
    /// committed.
    pub fn check_liveness(&mut self, now: Instant) -> Vec<(Job, Command)> {
        if !self.role.is_leader() || self.routing.marking() {
            return Vec::new();
        }
        let silent = self.routing.silent(now);
        let mut due = Vec::new();
        if let Some(tick) = self.weak_tick.due(true) {
            due.push((Job::WeakTick, tick));
        }
        if let Some(forget) = self.housekeeping.forget(self.routing.liveness(), now) {
            due.push((Job::Forget, forget));
        }
        if let Some(mark) = self.routing.mark_inactive(silent, now) {
            due.push((Job::MarkInactive, mark));
        }
        due
    }

    /// When the `Tick` for weak subscriptions' windows is next due (ms, the leader's clock): the shell
    /// arms a timer then and calls [`SupervisorCore::check_weak_tick`]. `None` on a follower.
    pub fn weak_tick_at(&self) -> Option<u64> {
        if !self.role.is_leader() {
            return None;
        }
        self.weak_tick.at()
    }

    /// The `Tick` a window change for weak subscriptions asks for, if it has come.
    pub fn check_weak_tick(&mut self) -> Option<(Job, Command)> {
        if !self.role.is_leader() {
            return None;
        }
        self.weak_tick.due(false).map(|tick| (Job::WeakTick, tick))
    }

    /// The `Prune` to propose, when housekeeping finds it due.
    pub fn check_retention(&mut self) -> Option<(Job, Command)> {
        if !self.role.is_leader() {
            return None;
        }
        self.housekeeping.prune().map(|prune| (Job::Prune, prune))
    }

    /// The answer to a proposal for `job`. `true`: check retention again now.
    pub fn answered(&mut self, job: Job, result: Result<Response, ProposeError>) -> bool {
        match job {
            Job::Forget => {
                self.housekeeping.forgotten(result);
                false
            }
            Job::MarkInactive => {
                self.routing.marked(result);
                false
            }
            Job::Prune => self.housekeeping.pruned(result),
            Job::WeakTick => {
                self.weak_tick.ticked(result);
                false
            }
        }
    }

    /// Routes `reports` on the leader at `now`: by consumer, each batch for the child of
    /// [`SupervisorCore::consumer`]. `None` on a follower (the server forwards them to the leader).
    pub fn route(&mut self, reports: Vec<NodeReport>, now: Instant) -> Option<Routed> {
        if !self.role.is_leader() {
            return None;
        }
        Some(self.routing.route(reports, now))
    }

    /// The child of consumer `name` (started now if the state change that created it has not
    /// reached the supervisor yet).
    pub fn consumer(&mut self, name: &str) -> &mut K::Consumer {
        self.children.consumer(name)
    }

    /// On the leader, at `now`: how many milliseconds ago each of `nodes` last reported. `None` on
    /// a follower.
    pub fn last_reports(&self, nodes: &[String], now: Instant) -> Option<Vec<Option<u64>>> {
        self.role
            .is_leader()
            .then(|| self.routing.last_reports(nodes, now))
    }
}
