//! Read-only queries returning serde view structs whose JSON matches API.md.

use super::command::GroupStatus;
use super::deployment::{Deployment, EventKind, NodePhase};
use super::ids::{Actor, DeploymentId, GroupDeploymentId, Timestamp};
use super::model::{Artifact, Dependency, Member, Mode, NodeResource, Retraction};
use super::state::ClusterState;
use super::status::{PausedBy, Status};
use super::strategy::{Completion, Settings, Strategy};
use super::threshold::FailedNodes;
use super::tokens::{Role, Token};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A published version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct VersionView {
    /// Number.
    pub version: u64,
    /// Label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Artifact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    /// Metadata.
    pub metadata: BTreeMap<String, String>,
    /// Dependencies.
    pub depends_on: Vec<Dependency>,
    /// Health port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health_port: Option<u16>,
    /// Publication time.
    pub published_at: Timestamp,
    /// Set while the version is retracted: when, by whom and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retracted: Option<Retraction>,
}

/// `GET /v1/resources/{name}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ResourceView {
    /// Name.
    pub name: String,
    /// Versions, oldest first.
    pub versions: Vec<VersionView>,
}

/// A subscription as shown on a consumer: mode, pin and its policy (only the fields set; the rest take
/// the defaults of DEPLOYMENTS.md §5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SubscriptionView {
    /// weak or strong.
    pub mode: Mode,
    /// Strategy of its deployments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    /// Pin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<u64>,
    /// Completion conditions of its deployments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<Completion>,
    /// Watch time of its deployments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_healthy_ms: Option<u64>,
    /// Retries per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failures_per_node: Option<u32>,
    /// Failed nodes tolerated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failed_nodes: Option<FailedNodes>,
    /// Roll back on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_on_failure: Option<bool>,
    /// Makes its deployments coordinated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pulse_interval_ms: Option<u64>,
    /// The version selected now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected: Option<u64>,
    /// The version the consumer converged on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Its active deployment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentId>,
}

/// `GET /v1/consumers/{name}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ConsumerView {
    /// Name.
    pub name: String,
    /// Node ids by ordinal.
    pub nodes: Vec<String>,
    /// Subscriptions by resource.
    pub subscriptions: BTreeMap<String, SubscriptionView>,
    /// Versions held back (rolled back here), by resource then version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<HoldView>,
}

/// A version held back on a consumer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HoldView {
    /// Resource.
    pub resource: String,
    /// Held version.
    pub version: u64,
    /// The deployment that rolled it back.
    pub deployment: DeploymentId,
    /// When.
    pub at: Timestamp,
    /// "version 3 of app held back on web: rolled back by d-4".
    pub reason: String,
}

/// `GET /v1/nodes/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NodeView {
    /// Id.
    pub id: String,
    /// Active.
    pub active: bool,
    /// Consumers.
    pub consumers: Vec<String>,
    /// Per-resource state.
    pub resources: BTreeMap<String, NodeResource>,
    /// Active deployments containing it.
    pub deployments: Vec<DeploymentId>,
    /// What it may do now.
    pub targets: BTreeMap<String, Target>,
}

/// What a node may do now for one resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Target {
    /// The version it should have.
    pub version: u64,
    /// It may fetch it (prefetch window).
    pub download: bool,
    /// It may install it (install window; implies fetching).
    pub install: bool,
    /// It must remove the resource (`version` is the one it runs): tear down, delete, report
    /// `"removed": true`. Absent (false) otherwise; `download` and `install` are then false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uninstall: bool,
}

impl Target {
    /// "Remove the resource, which runs `version`."
    pub fn uninstall(version: u64) -> Target {
        Target {
            version,
            download: false,
            install: false,
            uninstall: true,
        }
    }
}

/// A node of a deployment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeploymentNodeView {
    /// Node id.
    pub id: String,
    /// Ordinal in the consumer.
    pub ordinal: u32,
    /// Version before.
    pub from_version: Option<u64>,
    /// State.
    pub state: NodePhase,
    /// Failed attempts.
    pub failures: u32,
}

/// An event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EventView {
    /// When.
    pub at: Timestamp,
    /// Status entered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Node id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Node action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<EventKind>,
    /// Who.
    pub by: Actor,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `GET /v1/deployments/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeploymentView {
    /// Id.
    pub id: DeploymentId,
    /// Consumer.
    pub consumer: String,
    /// Resource.
    pub resource: String,
    /// Version.
    pub version: u64,
    /// Status.
    pub status: Status,
    /// Why held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<PausedBy>,
    /// When the last pulse was recorded (leader-stamped ms); the countdown runs from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pulse_at: Option<Timestamp>,
    /// Settings.
    pub settings: Settings,
    /// Nodes in order.
    pub nodes: Vec<DeploymentNodeView>,
    /// Events.
    pub events: Vec<EventView>,
    /// Retention dropped its node list and node events (shown only when true).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pruned: bool,
}

/// A line of `GET /v1/deployments`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeploymentSummary {
    /// Id.
    pub id: DeploymentId,
    /// Consumer.
    pub consumer: String,
    /// Resource.
    pub resource: String,
    /// Version.
    pub version: u64,
    /// Status.
    pub status: Status,
    /// Why held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<PausedBy>,
    /// Node count.
    pub nodes: usize,
    /// Succeeded nodes.
    pub succeeded: u32,
    /// Failed nodes.
    pub failed: u32,
    /// Skipped nodes.
    pub skipped: u32,
}

/// Active or terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusFilter {
    /// Not terminal.
    Active,
    /// Terminal.
    Terminal,
}

/// `GET /v1/deployments?consumer=&resource=&status=`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeploymentFilter {
    /// Consumer.
    pub consumer: Option<String>,
    /// Resource.
    pub resource: Option<String>,
    /// Active or terminal.
    pub status: Option<StatusFilter>,
}

/// `GET /v1/groups/{name}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GroupView {
    /// Name.
    pub name: String,
    /// Members.
    pub members: Vec<Member>,
}

/// One member of a step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StepItemView {
    /// Consumer.
    pub consumer: String,
    /// Resource.
    pub resource: String,
    /// Version.
    pub version: u64,
    /// Its deployment once started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentId>,
    /// That deployment's status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

/// `GET /v1/group-deployments/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GroupDeploymentView {
    /// Id.
    pub id: GroupDeploymentId,
    /// Group.
    pub group: String,
    /// Status.
    pub status: GroupStatus,
    /// Running step (0-based; equals the step count when done).
    pub current_step: u32,
    /// Steps.
    pub steps: Vec<Vec<StepItemView>>,
}

/// An event as the API shows it: the node's id instead of its position.
pub(crate) fn event_view(d: &Deployment, e: &super::deployment::Event) -> EventView {
    EventView {
        at: e.at,
        status: e.status,
        node: e
            .node
            .and_then(|p| d.nodes.get(p as usize).map(|n| n.id.clone())),
        action: (e.kind != EventKind::Status).then_some(e.kind),
        by: e.by.clone(),
        message: e.message.clone(),
    }
}

fn summary(d: &Deployment) -> DeploymentSummary {
    DeploymentSummary {
        id: d.id,
        consumer: d.consumer.clone(),
        resource: d.resource.clone(),
        version: d.version,
        status: d.status,
        paused_by: d.paused_by,
        nodes: d.nodes.len(),
        succeeded: d.succeeded,
        failed: d.failed,
        skipped: d.skipped,
    }
}

impl ClusterState {
    /// A resource and its versions.
    pub fn resource(&self, name: &str) -> Option<ResourceView> {
        let r = self.resources.get(name)?;
        let versions = r
            .versions
            .values()
            .map(|v| VersionView {
                version: v.version,
                label: v.label.clone(),
                artifact: v.artifact.clone(),
                metadata: v.metadata.clone(),
                depends_on: v.depends_on.clone(),
                health_port: v.health_port,
                published_at: v.published_at,
                retracted: v.retracted.clone(),
            })
            .collect();
        Some(ResourceView {
            name: r.name.clone(),
            versions,
        })
    }

    /// Every resource.
    pub fn resources(&self) -> Vec<ResourceView> {
        self.resources
            .keys()
            .filter_map(|n| self.resource(n))
            .collect()
    }

    /// A consumer, its nodes and subscriptions.
    pub fn consumer(&self, name: &str) -> Option<ConsumerView> {
        let c = self.consumers.get(name)?;
        let subscriptions = c
            .subscriptions
            .iter()
            .map(|(r, s)| {
                let p = &s.policy;
                let view = SubscriptionView {
                    mode: s.mode,
                    strategy: p.strategy.clone(),
                    pin: s.pin,
                    completion: p.completion.clone(),
                    min_healthy_ms: p.min_healthy_ms,
                    max_failures_per_node: p.max_failures_per_node,
                    max_failed_nodes: p.max_failed_nodes,
                    rollback_on_failure: p.rollback_on_failure,
                    pulse_interval_ms: p.pulse_interval_ms,
                    selected: self.selected_version(name, r),
                    version: s.version,
                    deployment: c.active.get(r).copied(),
                };
                (r.clone(), view)
            })
            .collect();
        let holds = c
            .holds
            .iter()
            .flat_map(|(r, vs)| {
                vs.iter().map(move |(v, h)| HoldView {
                    resource: r.clone(),
                    version: *v,
                    deployment: h.deployment,
                    at: h.at,
                    reason: h.reason(name, r, *v),
                })
            })
            .collect();
        Some(ConsumerView {
            name: c.name.clone(),
            nodes: c.nodes.clone(),
            subscriptions,
            holds,
        })
    }

    /// The consumers' names, in order.
    pub fn consumer_names(&self) -> impl Iterator<Item = &String> + '_ {
        self.consumers.keys()
    }

    /// Every consumer.
    pub fn consumers(&self) -> Vec<ConsumerView> {
        self.consumers
            .keys()
            .filter_map(|n| self.consumer(n))
            .collect()
    }

    /// A node's replicated state and targets.
    pub fn node(&self, id: &str) -> Option<NodeView> {
        let n = self.nodes.get(id)?;
        Some(NodeView {
            id: id.to_string(),
            active: n.active,
            consumers: n.consumers.iter().cloned().collect(),
            resources: n
                .resources
                .iter()
                .map(|(r, nr)| (r.clone(), nr.clone()))
                .collect(),
            deployments: n.deployments.keys().copied().collect(),
            targets: self.targets(id),
        })
    }

    /// A deployment with its nodes and events.
    pub fn deployment(&self, id: DeploymentId) -> Option<DeploymentView> {
        let d = self.deployments.get(&id)?;
        let nodes = d
            .nodes
            .iter()
            .map(|n| DeploymentNodeView {
                id: n.id.clone(),
                ordinal: n.ordinal,
                from_version: n.from_version,
                state: n.phase,
                failures: n.failures,
            })
            .collect();
        let events = d.events.iter().map(|e| event_view(d, e)).collect();
        Some(DeploymentView {
            id,
            consumer: d.consumer.clone(),
            resource: d.resource.clone(),
            version: d.version,
            status: d.status,
            paused_by: d.paused_by,
            last_pulse_at: d.last_pulse_at,
            settings: d.settings.clone(),
            nodes,
            events,
            pruned: super::retention::is_pruned(d),
        })
    }

    /// Deployments matching `filter`, oldest first.
    pub fn deployments(&self, filter: &DeploymentFilter) -> Vec<DeploymentSummary> {
        self.deployments
            .values()
            .filter(|d| filter.consumer.as_ref().is_none_or(|c| *c == d.consumer))
            .filter(|d| filter.resource.as_ref().is_none_or(|r| *r == d.resource))
            .filter(|d| match filter.status {
                None => true,
                Some(StatusFilter::Active) => d.status.is_active(),
                Some(StatusFilter::Terminal) => d.status.is_terminal(),
            })
            .map(summary)
            .collect()
    }

    /// A consumer group.
    pub fn group(&self, name: &str) -> Option<GroupView> {
        let g = self.groups.get(name)?;
        Some(GroupView {
            name: g.name.clone(),
            members: g.members.clone(),
        })
    }

    /// Every consumer group.
    pub fn groups(&self) -> Vec<GroupView> {
        self.groups.keys().filter_map(|n| self.group(n)).collect()
    }

    /// Every group deployment with its steps, newest first.
    pub fn group_deployments(&self) -> Vec<GroupDeploymentView> {
        self.group_deployments
            .keys()
            .rev()
            .filter_map(|id| self.group_deployment(*id))
            .collect()
    }

    /// A group deployment and its steps.
    pub fn group_deployment(&self, id: GroupDeploymentId) -> Option<GroupDeploymentView> {
        let gd = self.group_deployments.get(&id)?;
        let steps = gd
            .steps
            .iter()
            .map(|s| s.iter().map(|i| self.step_item_view(i)).collect())
            .collect();
        Some(GroupDeploymentView {
            id,
            group: gd.group.clone(),
            status: gd.status,
            current_step: gd.current_step,
            steps,
        })
    }
}

/// `GET /v1/tokens`: a token without its secret or hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TokenView {
    /// Name (recorded as `by` on what it does).
    pub name: String,
    /// Role.
    pub role: Role,
    /// Agent tokens: the node-id glob.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// Creation time (leader-stamped ms).
    pub created_at: Timestamp,
    /// Who created it.
    pub created_by: Actor,
}

impl ClusterState {
    /// One API token, without its hash.
    pub fn token(&self, name: &str) -> Option<TokenView> {
        self.tokens.get(name).map(token_view)
    }

    /// Every API token by name, without hashes.
    pub fn token_views(&self) -> Vec<TokenView> {
        self.tokens.iter().map(token_view).collect()
    }
}

fn token_view(t: &Token) -> TokenView {
    TokenView {
        name: t.name.clone(),
        role: t.role,
        nodes: t.nodes.clone(),
        created_at: t.created_at,
        created_by: t.created_by.clone(),
    }
}
