//! Read-only queries returning serde view structs whose JSON matches API.md.

pub mod analysis;
pub mod budgets;
pub mod deployments;
pub mod explain;
pub mod finish;
pub mod fleet;
pub mod gauges;
pub mod limits;
pub mod pages;
pub mod plan;
pub mod policies;
pub mod precheck;
pub mod providers;
pub mod queries;
pub mod report_bounds;
pub mod shows;
pub mod summary;
pub mod targets;
pub mod windows;

use crate::entities::group_deployment::{GroupStatus, StepItem};
use crate::entities::model::{
    Artifact, Consumer, Dependency, Member, Mode, NodeResource, Retraction, Version,
};
use crate::entities::tokens::{Role, Token};
use crate::state::ClusterState;
use crate::values::ids::{Actor, DeploymentId, GroupDeploymentId, Timestamp};
use crate::values::status::Status;
use crate::values::strategy::{Completion, Strategy};
use crate::values::threshold::FailedNodes;
use serde::{Deserialize, Serialize};

pub(crate) use deployments::event_view;
pub use deployments::{
    DeploymentFilter, DeploymentNodeView, DeploymentSummary, DeploymentView, EventView,
    StatusFilter,
};
use std::collections::BTreeMap;

/// A published version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct VersionView {
    /// Its number: 1 for the first version published, then 2, 3, ...
    pub version: u64,
    /// The human label given at publication (`"1.4.2"`); not unique.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Where the agent fetches it and the sha256 it checks; absent for a version with nothing to fetch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    /// Free key/value pairs given at publication.
    pub metadata: BTreeMap<String, String>,
    /// Versions of other resources it needs where it runs (DEPLOYMENTS.md §3).
    pub depends_on: Vec<Dependency>,
    /// The port the agent probes for health after installing it; absent: no health check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health_port: Option<u16>,
    /// When it was published (leader-stamped ms).
    pub published_at: Timestamp,
    /// Set while the version is retracted: when, by whom and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retracted: Option<Retraction>,
}

/// `GET /v1/resources/{name}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ResourceView {
    /// The resource's name.
    pub name: String,
    /// Versions, oldest first.
    pub versions: Vec<VersionView>,
}

/// A subscription as shown on a consumer: mode, pin and its policy (only the fields set; the rest take
/// the defaults of DEPLOYMENTS.md §5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SubscriptionView {
    /// Weak (nodes take new versions freely) or strong (new versions arrive by deployments only).
    pub mode: Mode,
    /// Strategy of its deployments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    /// The version selection keeps to, if set (a retracted or held-back pin selects below it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<u64>,
    /// Completion conditions of its deployments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<Completion>,
    /// Watch time of its deployments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_healthy_ms: Option<u64>,
    /// Failed attempts a node of its deployments may retry before it counts as failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failures_per_node: Option<u32>,
    /// Failed nodes its deployments tolerate before failing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failed_nodes: Option<FailedNodes>,
    /// Whether a failure of its deployments rolls back (unset: true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_on_failure: Option<bool>,
    /// Makes its deployments coordinated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pulse_interval_ms: Option<u64>,
    /// Metric analysis of its deployments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<crate::analysis::spec::Analysis>,
    /// A weak subscription's brake as it acts (the default when unset); none on a strong one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brake: Option<crate::entities::brake::Brake>,
    /// The recent failures its brake counts: the version and the nodes that failed it within the
    /// window (a weak subscription only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brake_failures: Option<BrakeFailures>,
    /// A weak subscription's start jitter (ms), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_jitter_ms: Option<u64>,
    /// Its spread of the selected version over its nodes under the start jitter: since when, judged at, the
    /// next node's time (absent: every node released).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<crate::policy::weak_jitter::Spread>,
    /// The version selected now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected: Option<u64>,
    /// The hold on the selected version, when a pin selects a held-back version (a pin beats an automatic
    /// hold): "version 2 of app held back on web by its brake: 3 of 10 nodes failed it within 10m, over 20%".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    /// The version the consumer converged on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Its active deployment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentId>,
}

/// The failures a weak subscription's brake counts now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BrakeFailures {
    /// The version they failed.
    pub version: u64,
    /// The nodes that failed it, oldest first, with when (leader-stamped ms); some may have left the
    /// window since the last failure.
    pub nodes: Vec<(String, Timestamp)>,
}

/// `GET /v1/consumers/{name}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ConsumerView {
    /// The consumer's name.
    pub name: String,
    /// Node ids by ordinal.
    pub nodes: Vec<String>,
    /// Subscriptions by resource.
    pub subscriptions: BTreeMap<String, SubscriptionView>,
    /// Versions held back (rolled back here, or stopped by a weak subscription's brake), by resource then
    /// version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<HoldView>,
    /// What happened to the consumer itself (a brake's hold put or lifted), oldest first, the last 32.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<crate::entities::model::ConsumerEvent>,
    /// Its disruption budget and its use now (`disruptions_allowed`, `unavailable`, the nodes), if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<budgets::BudgetView>,
}

/// A version held back on a consumer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HoldView {
    /// The resource of the held version.
    pub resource: String,
    /// The version held back: selection skips it on this consumer until the hold is cleared.
    pub version: u64,
    /// What put it: `rollback` (a deployment rolled it back) or `brake` (a weak subscription's brake);
    /// `rollback` when absent (a server from before brakes).
    #[serde(default = "rollback")]
    pub by: String,
    /// The deployment that rolled it back (a `rollback` hold only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentId>,
    /// When the hold was set: the end of the rollback, or the report that tripped the brake
    /// (leader-stamped ms).
    pub at: Timestamp,
    /// "version 3 of app held back on web: rolled back by d-4", "version 7 of tool held back on edge by
    /// its brake: 3 of 10 nodes failed it within 10m, over 20%".
    pub reason: String,
}

fn rollback() -> String {
    "rollback".into()
}

/// `GET /v1/nodes/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NodeView {
    /// The node's id.
    pub id: String,
    /// False once the leader marked it inactive (silent for `node_timeout`); its next report makes it active.
    pub active: bool,
    /// The consumers listing it, by name.
    pub consumers: Vec<String>,
    /// Per resource, what its last reports said: current version and per-version progress.
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
    /// "Keep `version`, which it runs: download nothing, install nothing."
    pub fn stay(version: u64) -> Target {
        Target {
            version,
            download: false,
            install: false,
            uninstall: false,
        }
    }

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

/// `GET /v1/groups/{name}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GroupView {
    /// The group's name.
    pub name: String,
    /// Its (consumer, resource) members in the order given.
    pub members: Vec<Member>,
}

/// One member of a step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StepItemView {
    /// The member consumer.
    pub consumer: String,
    /// The member resource.
    pub resource: String,
    /// The version planned for it when the group deployment started.
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
    /// The group deployment's id (`g-N`).
    pub id: GroupDeploymentId,
    /// The group it deploys.
    pub group: String,
    /// RUNNING, SUCCEEDED, FAILED or ABORTED.
    pub status: GroupStatus,
    /// Running step (0-based; equals the step count when done).
    pub current_step: u32,
    /// Its steps, fixed at creation: each step's deployments start when the previous step rolled forward.
    pub steps: Vec<Vec<StepItemView>>,
}

impl ClusterState {
    /// A resource and its versions.
    pub fn resource(&self, name: &str) -> Option<ResourceView> {
        let r = self.resource_map().get(name)?;
        Some(ResourceView {
            name: r.name.clone(),
            versions: r.versions.values().map(version_view).collect(),
        })
    }

    /// Every resource.
    pub fn resources(&self) -> Vec<ResourceView> {
        self.resource_map()
            .keys()
            .filter_map(|n| self.resource(n))
            .collect()
    }

    /// A consumer, its nodes and subscriptions.
    pub fn consumer(&self, name: &str) -> Option<ConsumerView> {
        let c = self.consumer_map().get(name)?;
        Some(ConsumerView {
            name: c.name.clone(),
            nodes: c.nodes.to_vec(),
            subscriptions: self.subscription_views(c).collect(),
            holds: hold_views(c).collect(),
            events: c.events.clone(),
            budget: self.budget(name),
        })
    }

    /// A consumer's subscriptions as it shows them, by resource.
    pub(crate) fn subscription_views<'a>(
        &'a self,
        c: &'a Consumer,
    ) -> impl Iterator<Item = (String, SubscriptionView)> + 'a {
        let name = c.name.as_str();
        c.subscriptions.iter().map(move |(r, s)| {
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
                analysis: p.analysis.clone(),
                brake: (s.mode == Mode::Weak).then(|| p.brake()),
                brake_failures: (s.mode == Mode::Weak && !s.brake_record.failures.is_empty()).then(
                    || BrakeFailures {
                        version: s.brake_record.version,
                        nodes: s.brake_record.failures.clone(),
                    },
                ),
                start_jitter_ms: p.start_jitter_ms.filter(|j| *j > 0),
                spread: self.weak_jitter().spread(name, r).cloned(),
                selected: self.selected_version(name, r),
                held: self.selected_version(name, r).and_then(|v| {
                    let h = c.holds.get(r)?.get(&v)?;
                    Some(h.reason(name, r, v))
                }),
                version: s.version,
                deployment: c.active.get(r).copied(),
            };
            (r.clone(), view)
        })
    }

    /// The consumers' names, in order.
    pub fn consumer_names(&self) -> impl Iterator<Item = &String> + '_ {
        self.consumer_map().keys()
    }

    /// Every consumer.
    pub fn consumers(&self) -> Vec<ConsumerView> {
        self.consumer_map()
            .keys()
            .filter_map(|n| self.consumer(n))
            .collect()
    }

    /// A node's replicated state and targets.
    pub fn node(&self, id: &str) -> Option<NodeView> {
        let n = self.node_table().get(id)?;
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

    /// A consumer group.
    pub fn group(&self, name: &str) -> Option<GroupView> {
        let g = self.group_map().get(name)?;
        Some(GroupView {
            name: g.name.clone(),
            members: g.members.clone(),
        })
    }

    /// Every consumer group.
    pub fn groups(&self) -> Vec<GroupView> {
        self.group_map()
            .keys()
            .filter_map(|n| self.group(n))
            .collect()
    }

    /// Every group deployment with its steps, newest first.
    pub fn group_deployments(&self) -> Vec<GroupDeploymentView> {
        self.group_deployment_map()
            .keys()
            .rev()
            .filter_map(|id| self.group_deployment(*id))
            .collect()
    }

    /// A group deployment and its steps.
    pub fn group_deployment(&self, id: GroupDeploymentId) -> Option<GroupDeploymentView> {
        let gd = self.group_deployment_map().get(&id)?;
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

    /// A step item as the API shows it, with its deployment's status once started.
    fn step_item_view(&self, i: &StepItem) -> StepItemView {
        StepItemView {
            consumer: i.consumer.clone(),
            resource: i.resource.clone(),
            version: i.version,
            deployment: i.deployment,
            status: i
                .deployment
                .and_then(|d| self.deployment_map().get(&d))
                .map(|d| d.status),
        }
    }
}

/// `GET /v1/tokens`: a token without its secret or hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TokenView {
    /// Name (recorded as `by` on what it does).
    pub name: String,
    /// What it may do (admin, operator, pulser, agent, reader).
    pub role: Role,
    /// Agent tokens: the node-id glob.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// Creation time (leader-stamped ms).
    pub created_at: Timestamp,
    /// Who created it.
    pub created_by: Actor,
    /// When it expires (ms since the epoch: creation plus its `ttl`); absent: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
    /// Agent tokens: the consumers whose nodes it may report for (absent: not bound).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub consumers: Vec<String>,
}

impl ClusterState {
    /// One API token, without its hash.
    pub fn token(&self, name: &str) -> Option<TokenView> {
        self.tokens().get(name).map(token_view)
    }

    /// Every API token by name, without hashes.
    pub fn token_views(&self) -> Vec<TokenView> {
        self.tokens().iter().map(token_view).collect()
    }
}

fn token_view(t: &Token) -> TokenView {
    TokenView {
        name: t.name.clone(),
        role: t.role,
        nodes: t.nodes.clone(),
        created_at: t.created_at,
        created_by: t.created_by.clone(),
        expires_at: t.expires_at,
        consumers: t.consumers.clone(),
    }
}

/// A published version as the API shows it.
pub(crate) fn version_view(v: &Version) -> VersionView {
    VersionView {
        version: v.version,
        label: v.label.clone(),
        artifact: v.artifact.clone(),
        metadata: v.metadata.clone(),
        depends_on: v.depends_on.clone(),
        health_port: v.health_port,
        published_at: v.published_at,
        retracted: v.retracted.clone(),
    }
}

/// A consumer's holds as it shows them, by resource then version.
pub(crate) fn hold_views(c: &Consumer) -> impl Iterator<Item = HoldView> + '_ {
    let name = c.name.as_str();
    c.holds.iter().flat_map(move |(r, vs)| {
        vs.iter().map(move |(v, h)| HoldView {
            resource: r.clone(),
            version: *v,
            by: h.by().to_string(),
            deployment: h.deployment(),
            at: h.at,
            reason: h.reason(name, r, *v),
        })
    })
}
