//! Commands (everything the API can write, plus the leader's `MarkInactive` and `Tick`) and their responses.

use super::group::StepItem;
use super::ids::{Actor, DeploymentId, GroupDeploymentId};
use super::model::{Artifact, Dependency, Member, Mode, NodeReport};
use super::policy::{Change, Policy, PolicyPatch};
use super::status::Status;
use super::strategy::{Completion, Strategy};
use super::threshold::FailedNodes;
use super::tokens::{Role, SecretHash};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Parameters of `StartDeployment`; `None` takes the subscription's value, else the default (`policy`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeploymentSpec {
    /// Consumer.
    pub consumer: String,
    /// Resource.
    pub resource: String,
    /// Version; default: the selected version (pin, dependency invariant, newest).
    pub version: Option<u64>,
    /// Strategy; default: the subscription's, else rolling (install window 1, download window 2).
    pub strategy: Option<Strategy>,
    /// Ordinal ranges of the consumer's nodes, e.g. `"0-1,5"`.
    pub nodes: Option<String>,
    /// Watch time.
    pub min_healthy_ms: Option<u64>,
    /// Retries per node.
    pub max_failures_per_node: Option<u32>,
    /// Failed nodes tolerated.
    pub max_failed_nodes: Option<FailedNodes>,
    /// Default true.
    pub rollback_on_failure: Option<bool>,
    /// Makes it coordinated.
    pub pulse_interval_ms: Option<u64>,
    /// Default: the subscription's, else all nodes, no timeout.
    pub completion: Option<Completion>,
    /// Recorded on the creation event.
    pub message: Option<String>,
    /// Who starts it (recorded as `by` on the creation event).
    pub by: Actor,
}

impl DeploymentSpec {
    /// The settings this start gives (the rest come from the subscription, then the defaults).
    pub fn policy(&self) -> Policy {
        Policy {
            strategy: self.strategy.clone(),
            min_healthy_ms: self.min_healthy_ms,
            max_failures_per_node: self.max_failures_per_node,
            max_failed_nodes: self.max_failed_nodes,
            rollback_on_failure: self.rollback_on_failure,
            pulse_interval_ms: self.pulse_interval_ms,
            completion: self.completion.clone(),
        }
    }
}

/// Every state change. Applied by `ClusterState::apply(cmd, at)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Command {
    /// Create a resource.
    CreateResource {
        /// Name.
        name: String,
    },
    /// Publish the next version of a resource.
    PublishVersion {
        /// Resource.
        resource: String,
        /// Label.
        label: Option<String>,
        /// Artifact.
        artifact: Option<Artifact>,
        /// Metadata.
        metadata: BTreeMap<String, String>,
        /// Dependency links (each must name an existing version).
        depends_on: Vec<Dependency>,
        /// Health-check port for the agent.
        health_port: Option<u16>,
    },
    /// Create a consumer.
    CreateConsumer {
        /// Name.
        name: String,
        /// Node ids (ordinal = index).
        nodes: Vec<String>,
    },
    /// Add and remove nodes.
    UpdateConsumerNodes {
        /// Consumer.
        name: String,
        /// Appended (ordinals after the existing ones).
        add: Vec<String>,
        /// Removed (skipped by active deployments).
        remove: Vec<String>,
    },
    /// Create or replace a subscription (every field: what is not given is unset).
    Subscribe {
        /// Consumer.
        consumer: String,
        /// Resource.
        resource: String,
        /// weak or strong.
        mode: Mode,
        /// Manual pin.
        pin: Option<u64>,
        /// The settings of its deployments.
        policy: Policy,
    },
    /// Change some fields of an existing subscription, leaving the others as they are.
    PatchSubscription {
        /// Consumer.
        consumer: String,
        /// Resource.
        resource: String,
        /// New mode, if any.
        mode: Option<Mode>,
        /// Pin change.
        pin: Change<u64>,
        /// Policy changes.
        policy: PolicyPatch,
    },
    /// Lift the hold on a version rolled back on a consumer, so selection may take it again.
    ClearHold {
        /// Consumer.
        consumer: String,
        /// Resource.
        resource: String,
        /// The held version.
        version: u64,
    },
    /// Retract (yank) a version: no selection takes it anywhere; active deployments of it stop.
    RetractVersion {
        /// Resource.
        resource: String,
        /// The version.
        version: u64,
        /// Why (recorded on the version and in events).
        message: Option<String>,
        /// Who.
        by: Actor,
    },
    /// Undo a retraction: selection may take the version again.
    UnretractVersion {
        /// Resource.
        resource: String,
        /// The version.
        version: u64,
    },
    /// Delete a subscription; the consumer's nodes are told to uninstall the resource (unless another
    /// of their consumers subscribes to it).
    Unsubscribe {
        /// Consumer.
        consumer: String,
        /// Resource.
        resource: String,
    },
    /// Delete a consumer; its nodes are told to uninstall what no other consumer of theirs subscribes to.
    DeleteConsumer {
        /// Consumer.
        name: String,
    },
    /// Delete a consumer group (its past group deployments stay readable).
    DeleteGroup {
        /// Group.
        name: String,
    },
    /// Node progress, batched; only changes should reach the log (see `report_changes`).
    ReportNodes(Vec<NodeReport>),
    /// The leader saw these nodes stop reporting for `node_timeout`.
    MarkInactive {
        /// Node ids.
        nodes: Vec<String>,
    },
    /// Start a deployment.
    StartDeployment(DeploymentSpec),
    /// Pause.
    Pause {
        /// Deployment.
        id: DeploymentId,
        /// Message.
        message: Option<String>,
        /// Who.
        by: Actor,
    },
    /// Resume.
    Resume {
        /// Deployment.
        id: DeploymentId,
        /// Message.
        message: Option<String>,
        /// Who.
        by: Actor,
    },
    /// Abort; nodes keep what they have.
    Abort {
        /// Deployment.
        id: DeploymentId,
        /// Message.
        message: Option<String>,
        /// Who.
        by: Actor,
    },
    /// Roll back.
    Rollback {
        /// Deployment.
        id: DeploymentId,
        /// Message.
        message: Option<String>,
        /// Who.
        by: Actor,
    },
    /// A pulse from the coordinating service.
    Pulse {
        /// Deployment.
        id: DeploymentId,
        /// Who pulsed: the pulser's token, or [`Actor::Pulse`] on a server without auth.
        by: Actor,
    },
    /// Create a consumer group.
    CreateGroup {
        /// Name.
        name: String,
        /// Members.
        members: Vec<Member>,
    },
    /// Plan and start a group deployment.
    StartGroupDeployment {
        /// Group.
        group: String,
        /// Versions per resource; default: each member's selected version.
        versions: Option<BTreeMap<String, u64>>,
        /// Per member resource, settings that win over the member subscription's policy.
        overrides: BTreeMap<String, Policy>,
    },
    /// Abort a group deployment and its running deployments.
    AbortGroupDeployment {
        /// Group deployment.
        id: GroupDeploymentId,
        /// Who.
        by: Actor,
    },
    /// Evaluate every time-based rule due at `at`.
    Tick,
    // API tokens (tokens.rs): only hashes of secrets ever reach the log.
    /// Create an API token.
    CreateToken {
        /// Unique name.
        name: String,
        /// Role.
        role: Role,
        /// Agent tokens: the node-id glob.
        nodes: Option<String>,
        /// sha256 of the secret.
        hash: SecretHash,
        /// Who creates it.
        by: Actor,
    },
    /// Revoke an API token.
    RevokeToken {
        /// Its name.
        name: String,
        /// Who revokes it.
        by: Actor,
    },
    /// The leader's proposal of the `bootstrap` admin token from `bootstrap_token_file`: applied once per
    /// cluster, a no-op ever after.
    BootstrapToken {
        /// sha256 of the file's secret.
        hash: SecretHash,
    },
    /// The leader's retention (retention.rs): drop the node lists and node events of the oldest
    /// terminal deployments beyond the newest `keep`, keeping their summary.
    Prune {
        /// Terminal deployments that keep their detail (`deployment_history`).
        keep: u32,
    },
    /// The leader's deployment actor: evaluate the time-based rules of deployment `id` alone, if one
    /// is due at `at` (appended last so that older log entries keep their encoding; `Tick` stays for
    /// them).
    TickDeployment {
        /// The deployment whose deadline came.
        id: DeploymentId,
    },
}

/// Answer to a pulse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PulseAnswer {
    /// Keep pulsing.
    Ok,
    /// Stop: finished, unknown, or held by a person.
    Stop,
}

/// Status of a group deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum GroupStatus {
    /// Steps in progress.
    Running,
    /// Every step succeeded.
    Succeeded,
    /// A step failed.
    Failed,
    /// Aborted.
    Aborted,
}

/// What an applied command returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// Applied (or a no-op).
    Done,
    /// `PublishVersion`: the new number.
    VersionPublished {
        /// Resource.
        resource: String,
        /// New version.
        version: u64,
    },
    /// `StartDeployment`.
    DeploymentStarted {
        /// New id.
        id: DeploymentId,
        /// Its status after creation.
        status: Status,
    },
    /// Pause/Resume/Abort/Rollback: the status after the command.
    Deployment {
        /// Deployment.
        id: DeploymentId,
        /// Status now.
        status: Status,
        /// False for a no-op.
        changed: bool,
    },
    /// `Pulse`.
    Pulse {
        /// OK or STOP.
        answer: PulseAnswer,
        /// Status now (`None` for an unknown deployment).
        status: Option<Status>,
    },
    /// `StartGroupDeployment`.
    GroupDeploymentStarted {
        /// New id.
        id: GroupDeploymentId,
        /// The planned steps.
        steps: Vec<Vec<StepItem>>,
    },
    /// `AbortGroupDeployment`.
    GroupDeployment {
        /// Id.
        id: GroupDeploymentId,
        /// Status now.
        status: GroupStatus,
    },
    /// `Prune`: how many deployments it pruned.
    Pruned {
        /// Deployments pruned by this command.
        pruned: u32,
    },
}
