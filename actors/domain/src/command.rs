//! Commands (everything the API can write, plus the leader's `MarkInactive` and `Tick`) and their responses.

use crate::analysis::run::Measured;
use crate::analysis::spec::Analysis;
use crate::deployment::pulse::PulseAnswer;
use crate::entities::group_deployment::{GroupStatus, StepItem};
use crate::entities::model::{Artifact, Dependency, Member, Mode, NodeReport};
use crate::entities::policy::{Change, Policy, PolicyPatch};
use crate::entities::tokens::{Role, SecretHash};
use crate::policy::budget::Budget;
use crate::policy::limits::{FleetLimits, LimitSource};
use crate::policy::windows::Window;
use crate::values::ids::{Actor, DeploymentId, GroupDeploymentId};
use crate::values::status::Status;
use crate::values::strategy::{Completion, Pacing, Strategy};
use crate::values::threshold::FailedNodes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Parameters of `StartDeployment`; `None` takes the subscription's value, else the default (`policy`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeploymentSpec {
    /// The consumer whose nodes are deployed to; must exist and subscribe to `resource`.
    pub consumer: String,
    /// The resource deployed; must exist.
    pub resource: String,
    /// Version; default: the selected version (pin, dependency invariant, newest).
    pub version: Option<u64>,
    /// Strategy; default: the subscription's, else rolling (install window 1, download window 2).
    pub strategy: Option<Strategy>,
    /// Ordinal ranges of the consumer's nodes, e.g. `"0-1,5"`.
    pub nodes: Option<String>,
    /// How long a node must stay healthy on the version after installing before it counts as succeeded.
    pub min_healthy_ms: Option<u64>,
    /// Failed attempts a node may retry before it counts as failed (0: the first failure counts).
    pub max_failures_per_node: Option<u32>,
    /// Failed nodes the deployment tolerates before it fails (a count or a percentage of its nodes).
    pub max_failed_nodes: Option<FailedNodes>,
    /// Whether a failure rolls the touched nodes back (default true) or leaves the deployment FAILED.
    pub rollback_on_failure: Option<bool>,
    /// Set: the deployment is coordinated and blocks when no pulse arrives within this interval.
    pub pulse_interval_ms: Option<u64>,
    /// Default: the subscription's, else all nodes, no timeout.
    pub completion: Option<Completion>,
    /// Bake time, deadlines and confirmation gates; default: the subscription's, else none but a
    /// healthy deadline of 10 minutes past `min_healthy`.
    #[serde(default)]
    pub pacing: Option<Pacing>,
    /// Recorded on the creation event.
    pub message: Option<String>,
    /// Who starts it (recorded as `by` on the creation event).
    pub by: Actor,
    /// Deploy a version held back on the consumer (DEPLOYMENTS.md §10): a start by hand of a held
    /// version is refused without it, and lifts the hold with it.
    #[serde(default)]
    pub force: bool,
    /// Metric analysis; default: the subscription's (DEPLOYMENTS.md "Analysis").
    #[serde(default)]
    pub analysis: Option<Analysis>,
    /// Spread the first admissions: each node's first waits a deterministic offset in `[0, this)` from the
    /// start (DEPLOYMENTS.md §16); default none. Not taken from the subscription.
    #[serde(default)]
    pub start_jitter_ms: Option<u64>,
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
            pacing: self.pacing.clone(),
            analysis: self.analysis.clone(),
            brake: None,
            start_jitter_ms: None,
        }
    }
}

/// Every state change. Applied by `ClusterState::apply(cmd, at)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Command {
    /// Create a resource.
    CreateResource {
        /// Its name: a safe name (`errors::is_safe_name`), unique among resources.
        name: String,
    },
    /// Publish the next version of a resource.
    PublishVersion {
        /// The resource; must exist. The version number is the next one (1, 2, ...).
        resource: String,
        /// A human label for the version (`"1.4.2"`), shown beside the number; not unique.
        label: Option<String>,
        /// Where the agent fetches the version and its sha256; `None` for a version with nothing to fetch.
        artifact: Option<Artifact>,
        /// Free key/value pairs kept with the version and shown as given.
        metadata: BTreeMap<String, String>,
        /// Dependency links (each must name an existing version).
        depends_on: Vec<Dependency>,
        /// Health-check port for the agent.
        health_port: Option<u16>,
    },
    /// Create a consumer.
    CreateConsumer {
        /// Its name: a safe name, unique among consumers.
        name: String,
        /// Its node ids in order; a node's ordinal is its index here.
        nodes: Vec<String>,
    },
    /// Add and remove nodes.
    UpdateConsumerNodes {
        /// The consumer; must exist.
        name: String,
        /// Appended (ordinals after the existing ones).
        add: Vec<String>,
        /// Removed (skipped by active deployments).
        remove: Vec<String>,
    },
    /// Create or replace a subscription (every field: what is not given is unset).
    Subscribe {
        /// The consumer; must exist.
        consumer: String,
        /// The resource; must exist.
        resource: String,
        /// Weak (nodes take new versions freely) or strong (new versions arrive by deployments only).
        mode: Mode,
        /// A version selection keeps to (if neither retracted nor held back); `None`: the newest.
        pin: Option<u64>,
        /// The settings of its deployments.
        policy: Policy,
    },
    /// Change some fields of an existing subscription, leaving the others as they are.
    PatchSubscription {
        /// The consumer; must exist.
        consumer: String,
        /// The resource; the subscription must exist.
        resource: String,
        /// The new mode; `None` keeps it.
        mode: Option<Mode>,
        /// Keep, set or clear the pin.
        pin: Change<u64>,
        /// Per policy field: keep, set or clear.
        policy: PolicyPatch,
    },
    /// Lift the hold on a version rolled back on a consumer, so selection may take it again.
    ClearHold {
        /// The consumer the version is held back on.
        consumer: String,
        /// The resource of the held version.
        resource: String,
        /// The held version.
        version: u64,
        /// Who lifts it (named in the events of the deployment that put it and of the deployment the
        /// lift starts on a strong subscription).
        #[serde(default)]
        by: Actor,
    },
    /// Retract (yank) a version: no selection takes it anywhere; active deployments of it stop.
    RetractVersion {
        /// The resource; must exist.
        resource: String,
        /// The version retracted; must be published.
        version: u64,
        /// Why (recorded on the version and in events).
        message: Option<String>,
        /// Who retracts it (recorded on the version and the events of the deployments it stops).
        by: Actor,
    },
    /// Undo a retraction: selection may take the version again.
    UnretractVersion {
        /// The resource; must exist.
        resource: String,
        /// The retracted version; unretracting a version that is not retracted is a no-op.
        version: u64,
    },
    /// Delete a subscription; the consumer's nodes are told to uninstall the resource (unless another
    /// of their consumers subscribes to it).
    Unsubscribe {
        /// The consumer; must exist.
        consumer: String,
        /// The resource it stops subscribing to; refused while a deployment of it is active there.
        resource: String,
    },
    /// Delete a consumer; its nodes are told to uninstall what no other consumer of theirs subscribes to.
    DeleteConsumer {
        /// The consumer; refused while it has an active deployment or a group names it.
        name: String,
    },
    /// Delete a consumer group (its past group deployments stay readable).
    DeleteGroup {
        /// The group; refused while one of its group deployments runs.
        name: String,
    },
    /// Node progress, batched; only changes should reach the log (see `report_changes`).
    ReportNodes(Vec<NodeReport>),
    /// The leader saw these nodes stop reporting for `node_timeout`.
    MarkInactive {
        /// The silent nodes' ids; unknown or already inactive ones are ignored.
        nodes: Vec<String>,
    },
    /// Start a deployment.
    StartDeployment(DeploymentSpec),
    /// Hold a rolling deployment (`paused_by = user`): nothing new is admitted until a person resumes it.
    Pause {
        /// The deployment; the transition table decides whether its status allows this.
        id: DeploymentId,
        /// Why, recorded on the status event.
        message: Option<String>,
        /// Who asks, recorded as `by` on the status event.
        by: Actor,
    },
    /// Resume a paused deployment in the direction it was going (one awaiting a pulse waits for a pulse).
    Resume {
        /// The deployment; the transition table decides whether its status allows this.
        id: DeploymentId,
        /// Why, recorded on the status event.
        message: Option<String>,
        /// Who asks, recorded as `by` on the status event.
        by: Actor,
    },
    /// Abort; nodes keep what they have.
    Abort {
        /// The deployment; the transition table decides whether its status allows this.
        id: DeploymentId,
        /// Why, recorded on the status event.
        message: Option<String>,
        /// Who asks, recorded as `by` on the status event.
        by: Actor,
    },
    /// Re-target the touched nodes at their from-versions, newest admitted first.
    Rollback {
        /// The deployment; the transition table decides whether its status allows this.
        id: DeploymentId,
        /// Why, recorded on the status event.
        message: Option<String>,
        /// Who asks, recorded as `by` on the status event.
        by: Actor,
    },
    /// A pulse from the coordinating service.
    Pulse {
        /// The coordinated deployment; an unknown or finished one answers STOP.
        id: DeploymentId,
        /// Who pulsed: the pulser's token, or [`Actor::Pulse`] on a server without auth.
        by: Actor,
    },
    /// Create a consumer group.
    CreateGroup {
        /// Its name: a safe name, unique among groups.
        name: String,
        /// Its (consumer, resource) members; a resource appears at most once.
        members: Vec<Member>,
    },
    /// Plan and start a group deployment.
    StartGroupDeployment {
        /// The group; must exist and have no running group deployment.
        group: String,
        /// Versions per resource; default: each member's selected version.
        versions: Option<BTreeMap<String, u64>>,
        /// Per member resource, settings that win over the member subscription's policy.
        overrides: BTreeMap<String, Policy>,
    },
    /// Abort a group deployment and its running deployments.
    AbortGroupDeployment {
        /// The group deployment; aborting an aborted one is a no-op.
        id: GroupDeploymentId,
        /// Who asks, recorded on the abort events of its running deployments.
        by: Actor,
    },
    /// Evaluate every time-based rule due at `at`.
    Tick,
    // API tokens (tokens.rs): only hashes of secrets ever reach the log.
    /// Create an API token.
    CreateToken {
        /// Its name, unique among tokens; shown as `by` on what the token does.
        name: String,
        /// What it may do (admin, operator, pulser, agent, reader).
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
        /// The token's name; must exist.
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
    /// The leader's retention of nodes (forget.rs): forget these nodes, which belong to no consumer
    /// and no active deployment and were silent for `forget_nodes_after`. Apply checks the first two
    /// again and skips a node that no longer meets them.
    ForgetNodes {
        /// The ids of the nodes to forget, chosen by the leader.
        nodes: Vec<String>,
    },
    /// The leader's deployment actor: evaluate the time-based rules of deployment `id` alone, if one
    /// is due at `at` (appended last so that older log entries keep their encoding; `Tick` stays for
    /// them).
    TickDeployment {
        /// The deployment whose deadline came.
        id: DeploymentId,
    },
    /// Create an API token that expires `ttl_ms` after its leader-stamped creation (appended last so that
    /// older log entries keep their encoding; `CreateToken` makes the tokens that never expire).
    CreateTokenWithTtl {
        /// Its name, unique among tokens; shown as `by` on what the token does.
        name: String,
        /// What it may do (admin, operator, pulser, agent, reader).
        role: Role,
        /// Agent tokens: the node-id glob.
        nodes: Option<String>,
        /// sha256 of the secret.
        hash: SecretHash,
        /// Who creates it.
        by: Actor,
        /// How long it authenticates, in ms from the apply's `at` (1 s to 3,650 days).
        ttl_ms: u64,
    },
    /// Create an `agent` token bound to consumers as well as its glob: it reports only for nodes whose
    /// every consumer is one of `consumers`. A variant of its own (appended last) so that `CreateToken`
    /// entries already in logs and snapshots keep their encoding.
    CreateBoundToken {
        /// Its name, unique among tokens; shown as `by` on what the token does.
        name: String,
        /// The node-id glob.
        nodes: String,
        /// The consumers it is bound to (1-256 consumer names).
        consumers: Vec<String>,
        /// sha256 of the secret.
        hash: SecretHash,
        /// Who creates it.
        by: Actor,
        /// How long it authenticates, in ms from the apply's `at` (1 s to 3,650 days); `None`: no expiry.
        ttl_ms: Option<u64>,
    },
    /// Let a deployment waiting at a confirmation gate (`paused_by = confirm`) go on (appended last).
    Confirm {
        /// The deployment; refused unless it waits for a confirmation.
        id: DeploymentId,
        /// Why, recorded on the status event.
        message: Option<String>,
        /// Who confirms (an operator, or a pulser token), recorded as `by` on the status event.
        by: Actor,
    },
    /// Pause like `Pause`, and take back install permission from the nodes admitted but not yet
    /// installing (appended last, so `Pause` entries keep their encoding).
    HardPause {
        /// The deployment; the transition table decides whether its status allows this.
        id: DeploymentId,
        /// Why, recorded on the status event.
        message: Option<String>,
        /// Who asks, recorded as `by` on the status event and the nodes' events.
        by: Actor,
    },
    /// The leader's analysis: one measurement of a deployment's metric (DEPLOYMENTS.md "Analysis"). Applied
    /// only if it is the one expected now (same phase, `seq` the next number), so a measurement proposed twice
    /// or by an old leader counts once.
    RecordMeasurement {
        /// The deployment measured.
        id: DeploymentId,
        /// The metric's name in its analysis.
        metric: String,
        /// The phase measured (per_batch: batch or wave from 1; background: 0).
        phase: u32,
        /// The measurement's number in the phase (the metric's `attempts` when it was due).
        seq: u32,
        /// What the query gave (an error's text is clipped to 200 characters).
        measured: Measured,
    },
    /// Set (or replace) consumer `consumer`'s disruption budget: every deployment of every resource on its
    /// nodes then admits a node to install only within it (issue 24 §1).
    SetBudget {
        /// The consumer it bounds.
        consumer: String,
        /// Its limit: exactly one of `max_unavailable` and `min_available`.
        budget: Budget,
    },
    /// Remove consumer `consumer`'s disruption budget.
    DeleteBudget {
        /// The consumer whose budget goes.
        consumer: String,
    },
    /// Create a maintenance window (issue 24 §2); its name is unique.
    CreateWindow(Window),
    /// Delete maintenance window `name`: what it held goes on.
    DeleteWindow {
        /// The window's name.
        name: String,
    },
    /// Set the fleet-wide limits (issue 24 §3). From a server's config (`source: Config`, proposed by a
    /// leader whose config differs) they apply only while no one set them by the API; from the API, always.
    SetFleetLimits {
        /// The limits (none set: no limit).
        limits: FleetLimits,
        /// Who sets them.
        source: LimitSource,
    },
}

/// What an applied command returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// Applied (or a no-op).
    Done,
    /// `PublishVersion`: the new number.
    VersionPublished {
        /// The resource published to.
        resource: String,
        /// The number the version got.
        version: u64,
    },
    /// `StartDeployment`.
    DeploymentStarted {
        /// The id allocated for it (`d-N`).
        id: DeploymentId,
        /// Its status after creation.
        status: Status,
    },
    /// Pause/Resume/Abort/Rollback: the status after the command.
    Deployment {
        /// The deployment operated on.
        id: DeploymentId,
        /// Its status after the command (and the admission it triggered).
        status: Status,
        /// False when the command was a no-op (pausing a paused deployment).
        changed: bool,
    },
    /// `Pulse`.
    Pulse {
        /// OK: keep pulsing; STOP: finished, unknown, or held by a person.
        answer: PulseAnswer,
        /// Status now (`None` for an unknown deployment).
        status: Option<Status>,
    },
    /// `StartGroupDeployment`.
    GroupDeploymentStarted {
        /// The id allocated for it (`g-N`).
        id: GroupDeploymentId,
        /// The planned steps.
        steps: Vec<Vec<StepItem>>,
    },
    /// `AbortGroupDeployment`.
    GroupDeployment {
        /// The group deployment aborted.
        id: GroupDeploymentId,
        /// Its status after the command (ABORTED).
        status: GroupStatus,
    },
    /// `Prune`: how many deployments it pruned.
    Pruned {
        /// Deployments pruned by this command.
        pruned: u32,
    },
    /// `ForgetNodes`: how many nodes it forgot.
    Forgotten {
        /// Nodes forgotten by this command.
        forgotten: u32,
    },
}
