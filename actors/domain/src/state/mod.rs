//! `ClusterState`: the replicated state, `apply` (the only place it changes) and snapshots. Its fields are
//! private to this file: `apply` builds each command family's handler from disjoint borrows of them, and
//! the rest of the domain reads them through the read-only accessors below (`pub(crate)`: the domain
//! only); the leader and the server ask named queries (`queries.rs`) and views. The compiler refuses any
//! other writer or reader.

pub(crate) mod format;
mod handlers;
mod weak_pass;

use crate::command::{Command, Response};
use crate::deployment::progress::HandlerGate;
use crate::deployment::pulse::PulseAnswer;
use crate::deployment::Deployment;
use crate::entities::group_deployment::GroupDeployment;
use crate::entities::group_deployment::GroupStatus;
use crate::entities::model::{Consumer, Group, Resource};
use crate::entities::nodes::NodeTable;
use crate::entities::tokens::{check_token_ttl, Role, Token, TokenTable};
use crate::errors::DomainError;
use crate::families::lifecycle::Op;
use crate::families::settle::Cx;
use crate::policy::admission;
use crate::policy::budget::Budget;
use crate::policy::limits::{FleetLimits, FleetSetting, LimitSource};
use crate::policy::weak::WeakGate;
use crate::policy::weak_jitter::WeakJitter;
use crate::policy::weak_slots::WeakSlots;
use crate::policy::window_clock::WindowClock;
use crate::policy::windows::{Window, MAX_WINDOWS};
use crate::values::ids::{DeploymentId, Entity, GroupDeploymentId, Timestamp};
use crate::values::outcome::Outcome;
use convoy_collections::CowMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Largest snapshot `from_snapshot_bytes` decodes (1 GiB).
pub const SNAPSHOT_LIMIT: usize = 1 << 30;

/// Everything convoy replicates. Ordered maps only, so snapshots are byte-identical across servers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterState {
    /// Resources by name, with their published versions.
    resources: CowMap<String, Resource>,
    /// Consumers by name: their nodes, subscriptions, holds and active deployment per resource.
    consumers: CowMap<String, Consumer>,
    /// Every node that reported or was named by a consumer, by id.
    nodes: NodeTable,
    /// Every deployment by id, active or terminal (terminal ones pruned by `Prune`).
    deployments: CowMap<DeploymentId, Deployment>,
    /// The ids of the deployments not yet terminal.
    active: BTreeSet<DeploymentId>,
    /// Consumer groups by name.
    groups: CowMap<String, Group>,
    /// Every group deployment by id, running or ended.
    group_deployments: CowMap<GroupDeploymentId, GroupDeployment>,
    /// The number of the last deployment id given out (the next is one more).
    next_deployment: u64,
    /// The number of the last group deployment id given out (the next is one more).
    next_group_deployment: u64,
    /// API tokens (hashes only).
    tokens: TokenTable,
    /// Disruption budgets by consumer (issue 24 §1); a consumer's goes with it.
    #[serde(default)]
    budgets: CowMap<String, Budget>,
    /// Maintenance windows by name (issue 24 §2).
    #[serde(default)]
    windows: CowMap<String, Window>,
    /// The windows' parsed schedules and current spans (issue 37): derived from `windows`, never serialized.
    #[serde(skip)]
    clock: WindowClock,
    /// The fleet-wide limits and who set them (issue 24 §3); `None`: never set.
    #[serde(default)]
    fleet: Option<FleetSetting>,
    /// The weak subscriptions the windows hold, and when that is judged again (issue 35 §6).
    #[serde(default)]
    weak_gate: WeakGate,
    /// The weak nodes' slots under the budgets and the fleet-wide limits (issue 35 §6).
    #[serde(default)]
    weak_slots: WeakSlots,
    /// The spreads of the weak subscriptions with a start jitter (issue 35 §6).
    #[serde(default)]
    weak_jitter: WeakJitter,
}

impl ClusterState {
    /// Applies one command at the leader-stamped time `at`. A refused command changes nothing.
    pub fn apply(&mut self, cmd: Command, at: Timestamp) -> Result<Response, DomainError> {
        self.apply_with_outcome(cmd, at)
            .map(|(response, _)| response)
    }

    /// [`ClusterState::apply`], also saying what changed for the leader's actors. A refused command
    /// changes nothing and has no outcome.
    pub fn apply_with_outcome(
        &mut self,
        cmd: Command,
        at: Timestamp,
    ) -> Result<(Response, Outcome), DomainError> {
        let mut cx = Cx::new(at);
        cx.hold = self.hold();
        let rejudge = rejudges_weak(&cmd);
        let response = match cmd {
            Command::CreateResource { name } => {
                self.registry().create_resource(name)?;
                Response::Done
            }
            Command::PublishVersion {
                resource,
                label,
                artifact,
                metadata,
                depends_on,
                health_port,
            } => {
                let version = self.registry().publish_version(
                    resource.clone(),
                    label,
                    artifact,
                    metadata,
                    depends_on,
                    health_port,
                    at,
                )?;
                cx.reconcile = true;
                Response::VersionPublished { resource, version }
            }
            Command::CreateConsumer { name, nodes } => {
                cx.outcome.consumer_changed(&name);
                self.registry().create_consumer(name, nodes)?;
                Response::Done
            }
            Command::UpdateConsumerNodes { name, add, remove } => self
                .reports()
                .update_consumer_nodes(name, add, remove, &mut cx)?,
            Command::Subscribe {
                consumer,
                resource,
                mode,
                pin,
                policy,
            } => {
                self.subscriptions()
                    .subscribe(consumer, resource, mode, pin, policy)?;
                cx.reconcile = true;
                Response::Done
            }
            Command::PatchSubscription {
                consumer,
                resource,
                mode,
                pin,
                policy,
            } => {
                self.subscriptions()
                    .patch(consumer, resource, mode, pin, policy)?;
                cx.reconcile = true;
                Response::Done
            }
            Command::ClearHold {
                consumer,
                resource,
                version,
                by,
            } => {
                let released = self
                    .subscriptions()
                    .clear_hold(&consumer, &resource, version, &by, at)?;
                self.starts()
                    .deploy_lifted(&consumer, &resource, released, by, &mut cx);
                cx.reconcile = true;
                Response::Done
            }
            Command::RetractVersion {
                resource,
                version,
                message,
                by,
            } => {
                let done = self
                    .retractions()
                    .retract(&resource, version, message, by, at)?;
                self.settle_retracted(done, &mut cx)
            }
            Command::UnretractVersion { resource, version } => {
                let done = self.retractions().unretract(&resource, version)?;
                self.settle_retracted(done, &mut cx)
            }
            Command::Unsubscribe { consumer, resource } => {
                self.removal().unsubscribe(&consumer, &resource)?;
                Response::Done
            }
            Command::DeleteConsumer { name } => {
                cx.outcome.consumer_changed(&name);
                self.removal().delete_consumer(&name)?;
                self.budgets.remove(&name);
                Response::Done
            }
            Command::DeleteGroup { name } => {
                self.removal().delete_group(&name)?;
                Response::Done
            }
            Command::ReportNodes(reports) => {
                let response = self.reports().report_nodes(reports, &mut cx)?;
                self.brake(&mut cx);
                response
            }
            Command::MarkInactive { nodes } => self.reports().mark_inactive(nodes, &mut cx)?,
            Command::StartDeployment(spec) => self.starts().start_deployment_cmd(spec, &mut cx)?,
            Command::Pause { id, message, by } => {
                self.operate(id, message, by, Op::Pause, &mut cx)?
            }
            Command::Resume { id, message, by } => {
                self.operate(id, message, by, Op::Resume, &mut cx)?
            }
            Command::Abort { id, message, by } => {
                self.operate(id, message, by, Op::Abort, &mut cx)?
            }
            Command::Rollback { id, message, by } => {
                self.operate(id, message, by, Op::Rollback, &mut cx)?
            }
            Command::Confirm { id, message, by } => {
                self.operate(id, message, by, Op::Confirm, &mut cx)?
            }
            Command::HardPause { id, message, by } => {
                self.operate(id, message, by, Op::HardPause, &mut cx)?
            }
            Command::Pulse { id, by } => match self.lifecycle().pulse(id, by, at, cx.hold) {
                Some((answer, status)) => {
                    self.touch(id, &mut cx);
                    Response::Pulse {
                        answer,
                        status: Some(status),
                    }
                }
                None => Response::Pulse {
                    answer: PulseAnswer::Stop,
                    status: None,
                },
            },
            Command::CreateGroup { name, members } => {
                self.registry().create_group(name, members)?;
                Response::Done
            }
            Command::StartGroupDeployment {
                group,
                versions,
                overrides,
            } => {
                let response = self
                    .group_runs()
                    .start_group_deployment(group, versions, overrides, &mut cx)?;
                if let Response::GroupDeploymentStarted { id, .. } = &response {
                    self.note_group(*id, None, &mut cx);
                }
                response
            }
            Command::AbortGroupDeployment { id, by } => {
                let before = self.group_progress(id);
                let done = self.group_abort().abort(id, by, at)?;
                for d in done.stopped {
                    self.touch(d, &mut cx);
                }
                self.note_group(id, before, &mut cx);
                Response::GroupDeployment {
                    id,
                    status: GroupStatus::Aborted,
                }
            }
            Command::Tick => {
                for id in self.lifecycle().tick_due(at, cx.hold) {
                    self.touch(id, &mut cx);
                }
                Response::Done
            }
            Command::RecordMeasurement {
                id,
                metric,
                phase,
                seq,
                measured,
            } => {
                if self
                    .lifecycle()
                    .measure(id, &metric, (phase, seq), measured, at, cx.hold)
                {
                    self.touch(id, &mut cx);
                }
                Response::Done
            }
            Command::TickDeployment { id } => {
                if self.lifecycle().tick_one(id, at, cx.hold) {
                    self.touch(id, &mut cx);
                }
                Response::Done
            }
            Command::CreateToken {
                name,
                role,
                nodes,
                hash,
                by,
            } => {
                self.tokens.create(Token {
                    name,
                    role,
                    nodes,
                    hash,
                    created_at: at,
                    created_by: by,
                    expires_at: None,
                    consumers: Vec::new(),
                })?;
                Response::Done
            }
            Command::CreateTokenWithTtl {
                name,
                role,
                nodes,
                hash,
                by,
                ttl_ms,
            } => {
                check_token_ttl(ttl_ms)?;
                self.tokens.create(Token {
                    name,
                    role,
                    nodes,
                    hash,
                    created_at: at,
                    created_by: by,
                    expires_at: Some(at.saturating_add(ttl_ms)),
                    consumers: Vec::new(),
                })?;
                Response::Done
            }
            Command::CreateBoundToken {
                name,
                nodes,
                consumers,
                hash,
                by,
                ttl_ms,
            } => {
                if let Some(ttl_ms) = ttl_ms {
                    check_token_ttl(ttl_ms)?;
                }
                if consumers.is_empty() {
                    return Err(DomainError::invalid(
                        "consumers",
                        "[]",
                        "a bound token names at least one consumer",
                    ));
                }
                self.tokens.create(Token {
                    name,
                    role: Role::Agent,
                    nodes: Some(nodes),
                    hash,
                    created_at: at,
                    created_by: by,
                    expires_at: ttl_ms.map(|ttl| at.saturating_add(ttl)),
                    consumers,
                })?;
                Response::Done
            }
            Command::RevokeToken { name, by: _ } => {
                self.tokens.revoke(&name)?;
                Response::Done
            }
            Command::BootstrapToken { hash } => {
                self.tokens.bootstrap(hash, at);
                Response::Done
            }
            Command::Prune { keep } => Response::Pruned {
                pruned: self.retention().prune(keep, at),
            },
            Command::ForgetNodes { nodes } => Response::Forgotten {
                forgotten: self.forget().forget(nodes),
            },
            Command::SetBudget { consumer, budget } => {
                budget.validate()?;
                if !self.consumers.contains_key(&consumer) {
                    return Err(DomainError::not_found(Entity::Consumer, consumer));
                }
                self.budgets.insert(consumer, budget);
                cx.hold = self.hold();
                Response::Done
            }
            Command::DeleteBudget { consumer } => {
                if self.budgets.remove(&consumer).is_none() {
                    return Err(DomainError::not_found(Entity::Budget, consumer));
                }
                if self.hold() == HandlerGate::Open {
                    // The last policy went: what the budgets held back is admitted by the deployments' own
                    // windows, in this apply.
                    cx.hold = HandlerGate::Open;
                    self.release_all(&mut cx);
                }
                Response::Done
            }
            Command::CreateWindow(window) => {
                window.validate_new(at)?;
                if self.windows.contains_key(&window.name) {
                    return Err(DomainError::AlreadyExists {
                        entity: Entity::Window,
                        name: window.name,
                    });
                }
                if self.windows.len() >= MAX_WINDOWS {
                    return Err(DomainError::invalid(
                        "windows",
                        self.windows.len(),
                        "at most 1000 maintenance windows",
                    ));
                }
                self.windows.insert(window.name.clone(), window);
                cx.hold = self.hold();
                Response::Done
            }
            Command::SetFleetLimits { limits, source } => {
                limits.validate()?;
                let keep = source == LimitSource::Config
                    && self.fleet.is_some_and(|f| f.source == LimitSource::Api);
                if !keep {
                    self.fleet = Some(FleetSetting { limits, source });
                }
                // Judged again in this apply: a lower limit holds, a higher or no limit lets go.
                cx.hold = self.hold().max(HandlerGate::Deferred);
                Response::Done
            }
            Command::DeleteWindow { name } => {
                if self.windows.remove(&name).is_none() {
                    return Err(DomainError::not_found(Entity::Window, name));
                }
                self.clock.forget(&name);
                // What the window held is judged again (and let go) in this apply.
                cx.hold = self.hold().max(HandlerGate::Deferred);
                Response::Done
            }
        };
        // The weak nodes at rest give their slots back before the deployments take theirs; what is left
        // goes to the weak nodes that wait (policy/weak_slots.rs).
        self.judge_weak_slots(false);
        self.settle(&mut cx);
        self.judge_weak(at, rejudge);
        self.judge_weak_jitter(at);
        self.judge_weak_slots(true);
        for id in std::mem::take(&mut cx.touched) {
            cx.outcome.deadline(id, self.deployment_deadline(id));
        }
        Ok((response, cx.outcome))
    }

    /// The resources by name (read-only).
    pub(crate) fn resource_map(&self) -> &CowMap<String, Resource> {
        &self.resources
    }

    /// The consumers by name (read-only).
    pub(crate) fn consumer_map(&self) -> &CowMap<String, Consumer> {
        &self.consumers
    }

    /// The node table (read-only).
    pub(crate) fn node_table(&self) -> &NodeTable {
        &self.nodes
    }

    /// Every deployment by id (read-only).
    pub(crate) fn deployment_map(&self) -> &CowMap<DeploymentId, Deployment> {
        &self.deployments
    }

    /// The ids of the deployments not yet terminal (read-only).
    pub(crate) fn active_set(&self) -> &BTreeSet<DeploymentId> {
        &self.active
    }

    /// The consumer groups by name (read-only).
    pub(crate) fn group_map(&self) -> &CowMap<String, Group> {
        &self.groups
    }

    /// Every group deployment by id (read-only).
    pub(crate) fn group_deployment_map(&self) -> &CowMap<GroupDeploymentId, GroupDeployment> {
        &self.group_deployments
    }

    /// Whether the handlers admit nodes themselves or leave it to the policies' pass.
    fn hold(&self) -> HandlerGate {
        admission::hold(&self.budgets, &self.windows, self.fleet_limits())
    }

    /// The fleet-wide limits in force (none set: no limit).
    pub fn fleet_limits(&self) -> FleetLimits {
        self.fleet.map(|f| f.limits).unwrap_or_default()
    }

    /// The fleet-wide limits and who set them; `None`: never set.
    pub fn fleet_setting(&self) -> Option<FleetSetting> {
        self.fleet
    }

    /// The disruption budgets by consumer (read-only).
    pub(crate) fn budget_map(&self) -> &CowMap<String, Budget> {
        &self.budgets
    }

    /// The maintenance windows by name (read-only).
    pub(crate) fn window_map(&self) -> &CowMap<String, Window> {
        &self.windows
    }

    /// The windows' clock (read-only): their parsed schedules and current spans.
    pub(crate) fn window_clock(&self) -> &WindowClock {
        &self.clock
    }

    /// Every window at `at`, from the windows' clock (O(1) per window while `at` is in its current span).
    pub fn windows_now(&self, at: Timestamp) -> Vec<admission::WindowNow<'_>> {
        self.clock.now(&self.windows, at)
    }

    /// The API tokens (the HTTP layer authenticates every request against this applied table).
    pub fn tokens(&self) -> &TokenTable {
        &self.tokens
    }

    /// Encodes the state (bincode 2, standard config). Equal states give identical bytes.
    pub fn snapshot_bytes(&self) -> Vec<u8> {
        bincode::serde::encode_to_vec(self, bincode::config::standard())
            .expect("ClusterState always encodes")
    }

    /// Decodes a snapshot, refusing more than [`SNAPSHOT_LIMIT`] bytes.
    pub fn from_snapshot_bytes(bytes: &[u8]) -> Result<Self, DomainError> {
        let config = bincode::config::standard().with_limit::<SNAPSHOT_LIMIT>();
        let (state, used) = bincode::serde::decode_from_slice::<Self, _>(bytes, config)
            .map_err(|e| DomainError::Snapshot(e.to_string()))?;
        if used != bytes.len() {
            return Err(DomainError::Snapshot(format!(
                "{} trailing bytes",
                bytes.len() - used
            )));
        }
        Ok(state)
    }
}

/// Whether `cmd` can change a weak subscription's verdict (windows, subscriptions, consumers come or go):
/// its apply judges them all again, whatever `check_at` says.
fn rejudges_weak(cmd: &Command) -> bool {
    matches!(
        cmd,
        Command::CreateWindow(_)
            | Command::DeleteWindow { .. }
            | Command::Subscribe { .. }
            | Command::PatchSubscription { .. }
            | Command::Unsubscribe { .. }
            | Command::CreateConsumer { .. }
            | Command::DeleteConsumer { .. }
    )
}

#[cfg(test)]
#[path = "state_test.rs"]
mod tests;
