//! Replicated entities: resources and versions, consumers and subscriptions, nodes and their reports.

use crate::entities::brake::{BrakeRecord, Trip};
use crate::entities::policy::Policy;
use crate::values::ids::{Actor, DeploymentId, Timestamp};
use convoy_collections::ChunkedVec;
use convoy_collections::{OneInline, VecMap, VecSet};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a version's artifact lives. Unknown keys are refused (a misspelt `sha_256` must not silently
/// publish an unchecked artifact).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    /// Download URL.
    pub url: String,
    /// Expected SHA-256, hex.
    #[serde(default)]
    pub sha256: Option<String>,
    /// Size in bytes.
    #[serde(default)]
    pub size: Option<u64>,
}

/// "This version needs `resource` at `version` (or newer) installed where it must be".
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
pub struct Dependency {
    /// The resource depended on.
    pub resource: String,
    /// The minimum version of it.
    pub version: u64,
}

/// An immutable published release of a resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    /// Its number: 1, 2, ... per resource.
    pub version: u64,
    /// Optional human label.
    pub label: Option<String>,
    /// Where the agent fetches it and the sha256 it checks; `None` for a version with nothing to
    /// fetch.
    pub artifact: Option<Artifact>,
    /// Free key/value pairs given at publication (at most 64); convoy stores them but does not
    /// read them.
    pub metadata: BTreeMap<String, String>,
    /// Minimum versions of other resources it needs installed (DEPLOYMENTS.md §3); selection
    /// passes it over on a consumer where one does not hold.
    pub depends_on: Vec<Dependency>,
    /// Port the agent health-checks, if any.
    pub health_port: Option<u16>,
    /// When it was published.
    pub published_at: Timestamp,
    /// Set while the version is retracted (yanked): no selection takes it anywhere.
    #[serde(default)]
    pub retracted: Option<Retraction>,
}

/// Who retracted a version, when and why (DEPLOYMENTS.md §11).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Retraction {
    /// When it was retracted.
    pub at: Timestamp,
    /// Who retracted it.
    pub by: Actor,
    /// Why, as given (at most 1024 characters).
    pub message: Option<String>,
}

/// A named, versioned artifact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// Its name, unique among resources (1-200 bytes of letters, digits, '-', '_' and '.').
    pub name: String,
    /// Versions by number.
    pub versions: BTreeMap<u64, Version>,
}

impl Resource {
    /// The newest published version number.
    pub fn newest(&self) -> Option<u64> {
        self.versions.keys().next_back().copied()
    }

    /// Version `version` exists and is retracted.
    pub fn retracted(&self, version: u64) -> bool {
        self.versions
            .get(&version)
            .is_some_and(|v| v.retracted.is_some())
    }
}

/// Consistency mode of a subscription (DEPLOYMENTS.md §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every node on its own, at once, no deployment.
    #[default]
    Weak,
    /// Nodes converge through deployments.
    Strong,
}

/// A consumer's policy for one resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Subscription {
    /// weak or strong.
    pub mode: Mode,
    /// Manual pin (highest selection priority).
    pub pin: Option<u64>,
    /// The settings of its deployments (automatic, group steps, and the defaults of manual ones).
    #[serde(default)]
    pub policy: Policy,
    /// The version of the last deployment started for it (auto or by hand).
    pub last_started: Option<u64>,
    /// The version the subscription selected when its last (full) deployment started: a strong
    /// subscription starts a new deployment when its selection changes from it (`None`, from a state
    /// before this field: `last_started`), so a full deployment by hand of another version sticks until
    /// the selection changes (DEPLOYMENTS.md §4).
    #[serde(default)]
    pub last_selected: Option<u64>,
    /// The version the whole consumer converged on (last ROLLED_FORWARD over its full node set).
    pub version: Option<u64>,
    /// The last deployment started by hand on this (weak) subscription, whose nodes keep what it left
    /// them on until the selection changes (DEPLOYMENTS.md §4); cleared by an edit of the subscription.
    #[serde(default)]
    pub kept: Option<Kept>,
    /// What the consumer's nodes reached of the resource (`families/reached.rs`): the highest the lowest
    /// version its active, interested nodes that run it ran has been (none on a retracted version), since
    /// the subscription was made or edited, a deployment of it on the consumer rolled back, or a node moved
    /// back to an older version. A dependency on the resource at this version or below keeps holding when
    /// a node comes back stale, joins or is re-imaged on an older version or on nothing, and while no node
    /// runs it (DEPLOYMENTS.md §3, "it does not flap"). A retracted version here does not count.
    #[serde(default)]
    pub reached: Option<u64>,
    /// A weak subscription's brake: the recent failures of the selected version it counts.
    #[serde(default)]
    pub brake_record: BrakeRecord,
}

/// A deployment by hand on a weak subscription and what it leaves behind: the nodes it moved keep the
/// version they run while the subscription selects what it selected when the deployment started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// The deployment.
    pub deployment: DeploymentId,
    /// The subscription's selected version when it started (after a hold it lifted).
    pub selected: Option<u64>,
    /// The nodes it moved (took past pending, not skipped), filled when it ends.
    pub nodes: std::collections::BTreeSet<String>,
}

impl Kept {
    /// Node `node` keeps what it runs: the deployment moved it and `selected` is still the selection.
    pub fn keeps(&self, node: &str, selected: Option<u64>) -> bool {
        self.selected == selected && self.nodes.contains(node)
    }
}

/// A named group of nodes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Consumer {
    /// Its name, unique among consumers (1-200 bytes of letters, digits, '-', '_' and '.').
    pub name: String,
    /// Node ids; a node's ordinal is its index here.
    pub nodes: ChunkedVec<String>,
    /// Subscriptions by resource.
    pub subscriptions: BTreeMap<String, Subscription>,
    /// The active deployment per resource (at most one).
    pub active: BTreeMap<String, DeploymentId>,
    /// Versions held back per resource: rolled back by a deployment or stopped by a weak subscription's
    /// brake, never selected again until a person deploys them by hand or clears the hold.
    #[serde(default)]
    pub holds: BTreeMap<String, BTreeMap<u64, Hold>>,
    /// What happened to the consumer itself (a brake's hold put or lifted), oldest first, the last
    /// [`MAX_CONSUMER_EVENTS`].
    #[serde(default)]
    pub events: Vec<ConsumerEvent>,
}

/// The events a consumer keeps.
pub const MAX_CONSUMER_EVENTS: usize = 32;

/// Something that happened to a consumer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ConsumerEvent {
    /// When (leader-stamped ms).
    pub at: Timestamp,
    /// What: `held` (a brake held a version back) or `released` (a hold lifted).
    pub kind: ConsumerEventKind,
    /// Who did it (`system` for a brake).
    pub by: Actor,
    /// "version 7 of tool held back on edge by its brake: 3 of 10 nodes failed it within 10m, over 20%".
    pub message: String,
}

/// The kind of a [`ConsumerEvent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConsumerEventKind {
    /// A version was held back by a brake.
    Held,
    /// A hold that belongs to no deployment was lifted.
    Released,
}

impl Consumer {
    /// Records an event, keeping the last [`MAX_CONSUMER_EVENTS`].
    pub fn push_event(
        &mut self,
        at: Timestamp,
        kind: ConsumerEventKind,
        by: Actor,
        message: String,
    ) {
        if self.events.len() >= MAX_CONSUMER_EVENTS {
            self.events.remove(0);
        }
        self.events.push(ConsumerEvent {
            at,
            kind,
            by,
            message,
        });
    }

    /// Version `version` of `resource` is held back here.
    pub fn held(&self, resource: &str, version: u64) -> bool {
        self.holds
            .get(resource)
            .is_some_and(|h| h.contains_key(&version))
    }
}

/// Why a version is held back on a consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    /// What put it.
    pub origin: HoldOrigin,
    /// When it was put.
    pub at: Timestamp,
}

/// What put a hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HoldOrigin {
    /// This deployment rolled the version back.
    Rollback(DeploymentId),
    /// The weak subscription's brake: too many nodes failed the version within its window.
    Brake(Trip),
}

impl Hold {
    /// A hold put by deployment `id`'s rollback.
    pub fn rolled_back(id: DeploymentId, at: Timestamp) -> Hold {
        Hold {
            origin: HoldOrigin::Rollback(id),
            at,
        }
    }

    /// The deployment that put it, if a rollback did.
    pub fn deployment(&self) -> Option<DeploymentId> {
        match self.origin {
            HoldOrigin::Rollback(id) => Some(id),
            HoldOrigin::Brake(_) => None,
        }
    }

    /// What put it, as the API says: `rollback` or `brake`.
    pub fn by(&self) -> &'static str {
        match self.origin {
            HoldOrigin::Rollback(_) => "rollback",
            HoldOrigin::Brake(_) => "brake",
        }
    }

    /// "version 3 of app held back on web: rolled back by d-4", "version 7 of tool held back on edge by its
    /// brake: 3 of 10 nodes failed it within 10m, over 20%".
    pub fn reason(&self, consumer: &str, resource: &str, version: u64) -> String {
        match self.origin {
            HoldOrigin::Rollback(id) => {
                format!(
                    "version {version} of {resource} held back on {consumer}: rolled back by {id}"
                )
            }
            HoldOrigin::Brake(trip) => format!(
                "version {version} of {resource} held back on {consumer} by its brake: {trip}"
            ),
        }
    }
}

/// What a node holds of one version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct VersionProgress {
    /// The artifact is fetched and on the node's disk (at once for a version with nothing to
    /// fetch).
    #[serde(default)]
    pub downloaded: bool,
    /// The node switched to it; cleared when another version is installed over it or an install
    /// of it starts again.
    #[serde(default)]
    pub installed: bool,
    /// Installation finished (success if `error` is empty).
    #[serde(default)]
    pub done: bool,
    /// Why the attempt failed (download, install or run command, health check), in the node's
    /// words; `None` unless it failed.
    #[serde(default)]
    pub error: Option<String>,
    /// Health check result; `None` means the version has no health check (counts as healthy).
    #[serde(default)]
    pub healthy: Option<bool>,
}

impl VersionProgress {
    /// Finished with an error, or finished but reporting unhealthy.
    pub fn is_failure(&self) -> bool {
        self.done && (self.error.is_some() || self.healthy == Some(false))
    }

    /// Done without error and healthy.
    pub fn is_ok(&self) -> bool {
        self.done && self.error.is_none() && self.healthy != Some(false)
    }
}

/// A node's replicated state for one resource. `versions` is a small sorted map, encoded like a `BTreeMap`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NodeResource {
    /// Still wants the resource.
    pub interested: bool,
    /// The version it runs now.
    pub current: Option<u64>,
    /// The versions it holds.
    #[schema(value_type = std::collections::BTreeMap<String, VersionProgress>)]
    pub versions: VecMap<u64, VersionProgress>,
    /// The absolute path of the log file its app writes its stdout to on the node (its stderr is beside it,
    /// `<resource>.stderr.log`), as the agent last reported it; `null` when no agent reported one.
    #[serde(default)]
    pub log: Option<String>,
    /// The version it runs and since when its reports have shown it done without error and healthy (the
    /// first such report; replaced when it runs another version): a weak subscription's brake does not
    /// count a later failure of a version that succeeded before the brake's window (a health restart).
    #[serde(default)]
    pub ok_since: Option<OkSince>,
}

/// Since when a node has run a version done and healthy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OkSince {
    /// The version.
    pub version: u64,
    /// The leader-stamped time of the first report that showed it done without error and healthy.
    pub at: Timestamp,
}

impl Default for NodeResource {
    fn default() -> Self {
        NodeResource {
            interested: true,
            current: None,
            versions: VecMap::new(),
            log: None,
            ok_since: None,
        }
    }
}

/// A node's replicated state. Its collections are small sorted `Vec`s (one small block each instead of a B-tree
/// node of hundreds of bytes) that iterate and encode exactly like the `BTreeSet`/`BTreeMap`s they replaced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeState {
    /// Reporting (a node becomes inactive through `MarkInactive`).
    pub active: bool,
    /// Consumers it belongs to.
    pub consumers: VecSet<String, OneInline>,
    /// Per-resource state.
    pub resources: VecMap<String, NodeResource, OneInline>,
    /// Active deployments that contain it, with its position in each.
    pub deployments: VecMap<DeploymentId, u32>,
    /// Resources it must remove: it left the consumer that subscribed to them, or the subscription or the
    /// consumer was deleted, and no other consumer of it subscribes to them. Cleared when it reports them
    /// removed or a consumer of it subscribes to them again.
    #[serde(default)]
    pub removing: std::collections::BTreeSet<String>,
}

impl NodeState {
    /// Interested in `resource` (true until the node says otherwise).
    pub fn interested(&self, resource: &str) -> bool {
        self.resources.get(resource).is_none_or(|r| r.interested)
    }

    /// The version of `resource` it runs now.
    pub fn current(&self, resource: &str) -> Option<u64> {
        self.resources.get(resource).and_then(|r| r.current)
    }

    /// The version to name when telling it to remove `resource`: the one it runs, else the newest it
    /// holds; `None` when it has nothing of it.
    pub fn installed(&self, resource: &str) -> Option<u64> {
        let r = self.resources.get(resource)?;
        r.current.or_else(|| r.versions.keys().next_back().copied())
    }
}

/// A node's report for one resource: `None` fields leave the stored value unchanged; `versions` replaces.
/// A resource the node wants and holds nothing of (no `current`, no version) clears `current` as
/// `removed` does (`families::reports::holds_nothing`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ResourceReport {
    /// Still wants it.
    #[serde(default)]
    pub interested: Option<bool>,
    /// Runs this version now.
    #[serde(default)]
    pub current: Option<u64>,
    /// Every version it holds.
    #[serde(default)]
    pub versions: BTreeMap<u64, VersionProgress>,
    /// It removed the resource (uninstalled): it runs and holds no version of it any more.
    #[serde(default)]
    pub removed: bool,
    /// The absolute path of the log file its app writes to on the node (at most 1,024 bytes); `None`
    /// leaves the one stored unchanged. Stored only when it changes.
    #[serde(default)]
    pub log: Option<String>,
}

/// One node's report. A report is proof of life: `active: None` means active.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeReport {
    /// The reporting node's id; an id not seen before gets a new node entry.
    pub node: String,
    /// Active flag; `None` = active.
    #[serde(default)]
    pub active: Option<bool>,
    /// Per-resource state.
    #[serde(default)]
    pub resources: BTreeMap<String, ResourceReport>,
    /// Who sent it, as the API authenticated the caller: the token's name (`Actor::Token`), or `user`
    /// with auth off. The node events it causes are recorded with this actor.
    #[serde(default)]
    pub by: Actor,
}

/// A consumer group member.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
pub struct Member {
    /// The consumer whose nodes take the resource.
    pub consumer: String,
    /// Resource (at most once per group).
    pub resource: String,
}

/// A named set of (consumer, resource) members.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// Its name, unique among groups (1-200 bytes of letters, digits, '-', '_' and '.').
    pub name: String,
    /// Members, in the order given.
    pub members: Vec<Member>,
}
