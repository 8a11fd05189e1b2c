//! A deployment: its fixed spec, per-node progress (a Vec by position), compact events and user operations.

pub mod active;
pub mod analysis;
pub mod bake;
pub mod clock;
pub mod counters;
pub mod deadlines;
pub mod gates;
pub mod held;
pub mod jitter;
pub mod judgement;
pub mod pace;
pub mod pacing;
pub mod progress;
pub mod pulse;
pub mod reasons;
pub mod rollback;
pub mod seen;
pub mod waits;

use crate::analysis::run::AnalysisRun;
use crate::deployment::clock::ActiveClock;
use crate::deployment::counters::{ForwardCursor, RollbackCursor, Tally, Watches};
use crate::deployment::pace::Pace;
use crate::deployment::reasons::{Wait, Waits};
use crate::deployment::seen::Seen;
use crate::errors::DomainError;
use crate::values::ids::{Actor, DeploymentId, GroupDeploymentId, Timestamp};
use crate::values::status::{self, Status};
use crate::values::strategy::Settings;
use convoy_collections::chunked::ChunkedVec;
use serde::{Deserialize, Serialize};

/// A node's state inside one deployment (API.md: `pending` ... `rolled_back`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodePhase {
    /// Not yet admitted.
    Pending,
    /// In the download (prefetch) window.
    Downloading,
    /// In the download window, fetched.
    Downloaded,
    /// In the install window.
    Installing,
    /// Installed, healthy, inside `min_healthy`.
    Watching,
    /// Installed and stayed healthy for `min_healthy` (at once when it is 0), or already ran the
    /// version when the deployment was created.
    Succeeded,
    /// Out of retries (forward) or its rollback failed.
    Failed,
    /// Its activity, interest or membership changed; counts as neither.
    Skipped,
    /// Being re-targeted at its from-version.
    RollingBack,
    /// Back on its from-version.
    RolledBack,
    /// Not done when the completion timeout fired: left where it was, counted as neither success nor
    /// failure of this version (a follow-up can tell it from a node that failed on it).
    TimedOut,
}

/// One node of a deployment, at its position in the fixed order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeploymentNode {
    /// The node's id, as listed in the consumer.
    pub id: String,
    /// Its ordinal in the consumer at creation.
    pub ordinal: u32,
    /// The version it ran before (rollback target).
    pub from_version: Option<u64>,
    /// Where the node stands in this deployment (the API's `state`).
    pub phase: NodePhase,
    /// Failed attempts so far.
    pub failures: u32,
    /// The current failed attempt has been counted (reset once the node retries).
    pub error_seen: bool,
    /// End of its healthy watch.
    pub watch_until: Option<Timestamp>,
    /// What its last report said about this deployment's versions (`progress::seen_bits`), kept so
    /// admission and rollback need no node lookup.
    pub seen: Seen,
}

/// What an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A status transition (or creation).
    Status,
    /// Admitted to the download window.
    Download,
    /// Admitted to the install window.
    Install,
    /// Healthy; watch started.
    Watch,
    /// A node succeeded: it stayed healthy for `min_healthy` after its install.
    Succeeded,
    /// A failed attempt with retries left.
    Retry,
    /// A node failed: out of retries going forward, or its rollback failed; the message says why.
    Failed,
    /// A node left the deployment without counting (activity, interest or membership changed); the
    /// message says why.
    Skipped,
    /// Re-targeted at its from-version.
    Rollback,
    /// Back on its from-version.
    RolledBack,
    /// Its version is now held back on the consumer (it rolled back).
    Held,
    /// The hold on its version was lifted (by hand, or a manual deployment of that version).
    Released,
    /// Its version was retracted (the deployment stopped), or a retracted version it left was.
    Retracted,
    /// Its node list and node events were dropped by retention (`deployment_history`).
    Pruned,
    /// It rolled back, and its version was not held back: the consumer converged on that version, so
    /// the nodes it took (a follow-up's, a canary's) are the problem, not the version (§10).
    NotHeld,
    /// A batch or wave finished and the next one waits the bake time (`pacing.bake_ms`).
    Bake,
    /// A hard pause took back a node's install permission before it started installing.
    Recalled,
    /// Its metric analysis began measuring a phase or passed it (DEPLOYMENTS.md "Analysis"); the message says
    /// which.
    Analysis,
}

/// A compact event: node events carry the node's position, not its id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// When it happened: leader-stamped ms since the Unix epoch.
    pub at: Timestamp,
    /// What happened; node kinds carry `node`, [`EventKind::Status`] carries `status`.
    pub kind: EventKind,
    /// Status entered (status events).
    pub status: Option<Status>,
    /// Node position (node events).
    pub node: Option<u32>,
    /// Who caused it: a user or token, the pulse service, a leader timer, or convoy itself.
    pub by: Actor,
    /// The operator's message on a user operation, or convoy's reason (a failed attempt, a skip,
    /// a hold, a quorum met); `None` when there is none.
    pub message: Option<String>,
}

/// A deployment and its progress. Counters are maintained incrementally so a node report is O(log n).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deployment {
    /// Its id (`d-N`), allocated from a counter in the replicated state.
    pub id: DeploymentId,
    /// The consumer whose nodes it moves.
    pub consumer: String,
    /// The resource it moves them to a version of.
    pub resource: String,
    /// The version each node is moved to; a rollback moves each back to its `from_version`.
    pub version: u64,
    /// Where it stands; changed only by `transition`, which records a status event, called by the writers
    /// of its waits (`waits.rs`) and by its judgement (rolled forward, rolling back, failed, aborted).
    pub status: Status,
    /// Why it waits: written only by `hold` and `release` (`waits.rs`).
    waits: Waits,
    /// The clock every deadline counts in (`active.rs`): it runs only while it moves.
    active: ActiveClock,
    /// The resolved settings (strategy, watch time, failure limits, pulse, completion), fixed at
    /// creation.
    pub settings: Settings,
    /// When it was created: leader-stamped ms since the Unix epoch.
    pub created_at: Timestamp,
    /// Last pulse (replicated, so a new leader can re-arm the countdown).
    pub last_pulse_at: Option<Timestamp>,
    /// The node set in its fixed order.
    pub nodes: ChunkedVec<DeploymentNode>,
    /// The whole consumer (not narrowed by ordinal ranges).
    pub full: bool,
    /// The group deployment that started it.
    pub group: Option<GroupDeploymentId>,
    /// Its events, oldest first; retention drops the node events of old finished deployments.
    pub events: ChunkedVec<Event>,
    /// Forward admission: cursors over the fixed order and window slots taken.
    pub forward: ForwardCursor,
    /// Nodes that succeeded, failed and were skipped.
    pub tally: Tally,
    /// Positions in the order they were admitted to install.
    pub touched: Vec<u32>,
    /// How many nodes each forward batch touched (rolled back in reverse).
    pub batches: Vec<u32>,
    /// Rollback admission: the walk back over `touched` and its slots.
    pub rollback: RollbackCursor,
    /// Watching nodes by watch end.
    pub watches: Watches,
    /// When it became terminal.
    pub ended_at: Option<Timestamp>,
    /// Its bake, deadlines and gates (`pacing`): replicated, so a new leader re-arms them.
    #[serde(default)]
    pub pace: Pace,
    /// Its metric analysis (counters, last measurements, verdict), when its settings carry one.
    #[serde(default)]
    pub analysis: Option<AnalysisRun>,
    /// When a maintenance window that applies to it next opens or closes, set by the policies' pass
    /// (`policy/admission.rs`): part of its deadline, so the leader ticks it then (a new leader re-arms it
    /// from here like any deadline).
    #[serde(default)]
    pub policy_check_at: Option<Timestamp>,
    /// When its next node waiting for its start jitter may be admitted (`jitter.rs`): part of its deadline
    /// while it rolls forward, so the leader ticks it then (and a new leader re-arms it from here).
    #[serde(default)]
    pub jitter_at: Option<Timestamp>,
}

/// The membership rules (`entities/membership.rs`) read a node's deployments here.
impl crate::entities::membership::Deployed
    for convoy_collections::CowMap<DeploymentId, Deployment>
{
    fn rollout(&self, id: DeploymentId) -> Option<(&str, &str)> {
        self.get(&id)
            .map(|d| (d.consumer.as_str(), d.resource.as_str()))
    }
}

impl Deployment {
    /// A new deployment in its initial status (AWAITING_PULSE when coordinated).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: DeploymentId,
        consumer: String,
        resource: String,
        version: u64,
        settings: Settings,
        nodes: Vec<DeploymentNode>,
        full: bool,
        at: Timestamp,
    ) -> Self {
        let mut waits = Waits::default();
        if settings.pulse_interval_ms.is_some() {
            waits = waits.with(Wait::Pulse);
        }
        let status = waits.status(true);
        let mut d = Deployment {
            id,
            consumer,
            resource,
            version,
            status,
            waits,
            active: ActiveClock::new(at, status == Status::RollingForward),
            settings,
            created_at: at,
            last_pulse_at: None,
            nodes: nodes.into(),
            full,
            group: None,
            events: ChunkedVec::new(),
            forward: ForwardCursor::default(),
            tally: Tally::default(),
            touched: Vec::new(),
            batches: Vec::new(),
            rollback: RollbackCursor::default(),
            watches: Watches::default(),
            ended_at: None,
            pace: Pace::default(),
            analysis: None,
            policy_check_at: None,
            jitter_at: None,
        }
        .paced(at);
        d.analysis = d.new_analysis_run(at);
        d
    }

    /// Has a pulse interval.
    pub fn coordinated(&self) -> bool {
        self.settings.pulse_interval_ms.is_some()
    }

    /// When the pulse countdown runs out (the one rule for it): an interval after the last pulse; a
    /// deployment never pulsed is due at once (it makes no progress until its first pulse, §7).
    pub fn pulse_due(&self) -> Option<Timestamp> {
        let interval = self.settings.pulse_interval_ms?;
        Some(self.last_pulse_at.map_or(0, |t| t.saturating_add(interval)))
    }

    /// The pulse countdown has run out at `at`.
    pub fn pulse_expired(&self, at: Timestamp) -> bool {
        self.pulse_due().is_some_and(|due| due <= at)
    }

    pub(crate) fn push_event(
        &mut self,
        at: Timestamp,
        kind: EventKind,
        node: Option<u32>,
        by: Actor,
        message: Option<String>,
    ) {
        let status = (kind == EventKind::Status).then_some(self.status);
        self.events.push(Event {
            at,
            kind,
            status,
            node,
            by,
            message,
        });
    }

    /// Moves to `to` if the table allows it and records the event; `Ok(false)` for a no-op. Only the writers
    /// of the waits (`waits.rs`) and the judgement call it; a terminal status empties the waits.
    pub(crate) fn transition(
        &mut self,
        to: Status,
        at: Timestamp,
        by: Actor,
        message: Option<String>,
    ) -> Result<bool, DomainError> {
        if !status::check(self.id, self.status, to)? {
            return Ok(false);
        }
        let from = self.status;
        self.status = to;
        if to.is_terminal() {
            self.ended_at = Some(at);
            self.clear_waits();
        } else if from.is_forward() && !to.is_forward() {
            self.drop_forward_waits();
        }
        self.sync_active(at);
        self.pace_on_transition(from, at);
        self.push_event(at, EventKind::Status, None, by, message);
        Ok(true)
    }

    /// The pulse countdown ran out while it moved: it waits for a pulse (`paused_by = pulse_timeout`). The
    /// event names the real reason: a deployment never pulsed waits for its first pulse.
    pub(crate) fn block_on_pulse(&mut self, at: Timestamp) {
        let msg = if self.last_pulse_at.is_some() {
            "pulses timed out"
        } else {
            "waiting for a first pulse"
        };
        self.hold(Wait::Pulse, at, Actor::Timer, Some(msg.into()));
    }

    fn refuse(&self, op: &str) -> DomainError {
        DomainError::Transition {
            id: self.id.to_string(),
            from: self.status,
            op: op.into(),
        }
    }

    /// Pause: a person's reason joins the set (PAUSED, `paused_by = user`), whatever else holds it; already
    /// paused by a person: no-op.
    pub(crate) fn pause(
        &mut self,
        at: Timestamp,
        by: Actor,
        message: Option<String>,
    ) -> Result<bool, DomainError> {
        if self.status.is_terminal() {
            return Err(self.refuse("pause a terminal deployment"));
        }
        if self.waits.has(Wait::User) {
            return Ok(false);
        }
        Ok(self.hold(Wait::User, at, by, message))
    }

    /// Resume: lifts a person's pause, the autopause and an analysis pause (a phase the analysis paused is
    /// measured again). It lifts nothing else: a gate waits for a confirm, a window for its opening, a pulse
    /// block for a pulse (a resume of only those is refused, naming what does lift them).
    pub(crate) fn resume(
        &mut self,
        at: Timestamp,
        by: Actor,
        message: Option<String>,
    ) -> Result<bool, DomainError> {
        if self.status.is_terminal() {
            return Err(self.refuse("resume a terminal deployment"));
        }
        let mine = [Wait::User, Wait::Auto, Wait::Analysis];
        if !mine.iter().any(|w| self.waits.has(*w)) {
            if self.waits.has(Wait::Confirm) {
                return Err(self.refuse(
                    "resume a deployment waiting at a confirmation gate; confirm it (POST .../confirm)",
                ));
            }
            if self.status.is_awaiting() {
                return Err(self.refuse(
                    "resume a deployment awaiting a pulse; only a fresh pulse unblocks it",
                ));
            }
            return Ok(false);
        }
        let analysis = self.waits.has(Wait::Analysis);
        let mut changed = false;
        for w in mine {
            changed |= self.release(w, at, by.clone(), message.clone());
        }
        if changed && self.status.is_paused() {
            // Something else still holds it (a gate, a window): the resume is recorded all the same.
            let why = self.waits.iter().next().map_or("", Wait::as_str);
            let msg = Some(format!("resumed; still held by {why}"));
            self.push_event(at, EventKind::Status, None, by, msg);
        }
        if analysis {
            self.analysis_resumed(at);
        }
        Ok(changed)
    }

    /// Abort: any active → ABORTED; nodes keep what they have.
    pub(crate) fn abort(
        &mut self,
        at: Timestamp,
        by: Actor,
        message: Option<String>,
    ) -> Result<bool, DomainError> {
        if self.status == Status::Aborted {
            return Ok(false);
        }
        if self.status.is_terminal() {
            return Err(self.refuse("abort a terminal deployment"));
        }
        self.transition(Status::Aborted, at, by, message)
    }

    /// Rollback: ROLLING_FORWARD, forward PAUSED or AWAITING_PULSE → ROLLING_BACK.
    pub(crate) fn rollback(
        &mut self,
        at: Timestamp,
        by: Actor,
        message: Option<String>,
    ) -> Result<bool, DomainError> {
        if self.status == Status::RollingBack {
            return Ok(false);
        }
        if self.status.is_terminal() {
            return Err(self.refuse("roll back a terminal deployment"));
        }
        if !self.status.is_forward() {
            return Err(self.refuse("roll back a deployment that is already rolling back"));
        }
        self.start_rollback(at, by, message)
    }
}
