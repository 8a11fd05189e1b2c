//! The small answers the handlers send (serialized from these types), and the schemas of the answers they
//! assemble as JSON values (a view with a field added: marked "schema only"), which the response-validation
//! test (tests/it/openapi_responses.rs) checks against every real answer.

use std::collections::BTreeMap;

use convoy_actors::domain::{
    Actor, DeploymentId, GroupDeploymentId, GroupPlanItem, NodePhase, NodeResource, PulseAnswer,
    Role, Status, StepItem, Target, Timestamp,
};
use serde::Serialize;
use utoipa::ToSchema;

/// `{"status": "ok"}` (`/healthz`, fault injection) or `{"status": "ready"}` (`/readyz`).
#[derive(Serialize, ToSchema)]
pub struct StatusAnswer {
    /// `ok` or `ready`.
    pub status: &'static str,
}

/// One server of the cluster as `GET /v1/cluster` lists it.
#[derive(ToSchema)]
#[allow(dead_code)] // schema only: the handler adds fields to a view
pub struct MemberAnswer {
    /// The server's raft id.
    pub id: u64,
    /// Its raft (server-to-server) address.
    pub raft_addr: String,
    /// Its HTTP address.
    pub http_addr: String,
    /// `leader`, `follower`, `candidate`, `learner` or `unreachable`.
    pub role: String,
}

/// `GET /v1/cluster` (with `auth` and `version`) and the membership changes (without them).
#[derive(ToSchema)]
#[allow(dead_code)] // schema only: the handler adds fields to a view
pub struct ClusterAnswer {
    /// The answering server's id.
    pub id: u64,
    /// The leader it knows, if any.
    pub leader_id: Option<u64>,
    /// Its current term.
    pub term: u64,
    /// The last log index it applied.
    pub last_applied: u64,
    /// Every server in the membership it knows, voters and learners, each with its role.
    pub members: Vec<MemberAnswer>,
    /// The index of its last snapshot.
    pub snapshot: Option<u64>,
    /// The last purged log index.
    pub purged: Option<u64>,
    /// `on` when the server checks tokens, else `off` (`GET /v1/cluster` only).
    pub auth: Option<String>,
    /// The server's version (`GET /v1/cluster` only).
    pub version: Option<String>,
}

/// `GET /v1/cluster/digest`: the sha256 of the applied state and the index it reflects.
#[derive(Serialize, ToSchema)]
pub struct DigestAnswer {
    /// The answering server's id.
    pub id: u64,
    /// The index the digest reflects.
    pub last_applied: u64,
    /// Hex sha256 of the snapshot bytes.
    pub sha256: String,
    /// The length of those snapshot bytes.
    pub bytes: u64,
}

/// `POST /v1/deployments`: the new deployment.
#[derive(Serialize, ToSchema)]
pub struct DeploymentStarted {
    /// The new deployment's id (`d-N`).
    pub id: DeploymentId,
    /// Its first status.
    pub status: Status,
}

/// `POST /v1/deployments/{id}/pulse`.
#[derive(Serialize, ToSchema)]
pub struct PulseReply {
    /// `OK` (keep pulsing) or `STOP`.
    pub status: PulseAnswer,
    /// The deployment's status, `null` for an unknown deployment.
    pub state: Option<Status>,
}

/// `POST /v1/group-deployments`: the new group deployment and its steps.
#[derive(Serialize, ToSchema)]
pub struct GroupDeploymentStarted {
    /// The new group deployment's id (`g-N`).
    pub id: GroupDeploymentId,
    /// The planned steps, each a set of member deployments.
    pub steps: Vec<Vec<StepItem>>,
}

/// `POST /v1/group-deployments?dry_run=true`: what each step would deploy.
#[derive(Serialize, ToSchema)]
pub struct GroupPlan {
    /// The steps in order.
    pub steps: Vec<Vec<GroupPlanItem>>,
}

/// `POST /v1/resources/{name}/versions`: the new version and who takes it (with `?dry_run=true`: the
/// version it would be and who would take it; nothing published).
#[derive(Serialize, ToSchema)]
pub struct VersionPublished {
    /// The resource the version is published to.
    pub resource: String,
    /// The new version.
    pub version: u64,
    /// The consumers whose selection takes it.
    pub reach: Reach,
}

/// The consumers whose selection takes a new version (DEPLOYMENTS.md §3, §4), each list at most
/// [`Reach::MAX_LISTED`] long.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct Reach {
    /// Weak subscriptions: their nodes take it at once, each on its own, with no deployment.
    pub at_once: Vec<Taker>,
    /// The nodes of all those consumers (also of those past the list's end).
    pub nodes_at_once: u64,
    /// Weak subscriptions a maintenance window holds: their nodes keep what they run until no window
    /// holds them, then take it on their own (DEPLOYMENTS.md §16).
    pub waiting: Vec<WaitingTaker>,
    /// Strong subscriptions: it comes to their nodes through a deployment started automatically.
    pub by_deployment: Vec<Taker>,
    /// Consumers that take it but are left out of the two lists (past their length).
    pub unlisted: u64,
}

impl Reach {
    /// Consumers listed at most, in each list.
    pub const MAX_LISTED: usize = 100;
}

/// One consumer a new version reaches.
#[derive(Debug, Serialize, ToSchema)]
pub struct Taker {
    /// The consumer.
    pub consumer: String,
    /// How many nodes it has.
    pub nodes: u64,
    /// The deployment that takes it there (strong subscriptions, not in a dry run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentId>,
}

/// A weak consumer a new version reaches once no maintenance window holds it.
#[derive(Debug, Serialize, ToSchema)]
pub struct WaitingTaker {
    /// The consumer.
    pub consumer: String,
    /// How many nodes it has.
    pub nodes: u64,
    /// The windows holding it, by name.
    pub windows: Vec<String>,
    /// When one of the windows that apply to it next opens or closes (ms since the epoch; absent: never).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_change: Option<Timestamp>,
}

/// `POST /v1/nodes/{id}/report`: what the node should do now, per resource.
#[derive(Serialize, ToSchema)]
pub struct TargetsAnswer {
    /// Resource → target.
    pub targets: BTreeMap<String, Target>,
}

/// `POST /v1/tokens`: the new token, with its secret (shown this once).
#[derive(ToSchema)]
#[allow(dead_code)] // schema only: the handler adds fields to a view
pub struct TokenCreated {
    /// The token's name (1-64 characters of `A-Z a-z 0-9 . _ -`); events name it as the actor.
    pub name: String,
    /// What it may do: `admin`, `operator`, `pulser`, `agent` or `reader`.
    pub role: Role,
    /// Agent tokens: the node-id glob.
    pub nodes: Option<String>,
    /// Creation time (leader-stamped ms).
    pub created_at: Timestamp,
    /// Who created it.
    pub created_by: Actor,
    /// With a `ttl`: when it expires (ms since the epoch, `created_at` plus the ttl); absent: never.
    pub expires_at: Option<Timestamp>,
    /// The bearer secret; only its hash is stored.
    pub secret: String,
}

/// One node of `GET /v1/nodes`.
#[derive(ToSchema)]
#[allow(dead_code)] // schema only: the handler adds fields to a view
pub struct NodeLineAnswer {
    /// The node's id, as consumers list it and its reports name it.
    pub id: String,
    /// Whether it is active.
    pub active: bool,
    /// The consumers it belongs to.
    pub consumers: Vec<String>,
    /// Resource → the version it runs (`null`: none).
    pub versions: BTreeMap<String, Option<u64>>,
    /// Active deployment → its phase there.
    pub phases: BTreeMap<String, NodePhase>,
    /// Milliseconds since its last report, as the leader saw it (`null`: unknown).
    pub last_report_ms: Option<u64>,
}

/// `GET /v1/nodes`: a page of nodes.
#[derive(ToSchema)]
#[allow(dead_code)] // schema only: the handler adds fields to a view
pub struct NodeListAnswer {
    /// How many nodes match, over all pages.
    pub total: u64,
    /// At most `limit` nodes from `offset`, in id order (a consumer's nodes: in ordinal order).
    pub nodes: Vec<NodeLineAnswer>,
}

/// `GET /v1/nodes/{id}`: a node, its targets, its phases and its last report age.
#[derive(ToSchema)]
#[allow(dead_code)] // schema only: the handler adds fields to a view
pub struct NodeAnswer {
    /// The node's id, as consumers list it and its reports name it.
    pub id: String,
    /// Whether it is active.
    pub active: bool,
    /// The consumers it belongs to.
    pub consumers: Vec<String>,
    /// What it reported per resource.
    pub resources: BTreeMap<String, NodeResource>,
    /// The deployments that hold it.
    pub deployments: Vec<DeploymentId>,
    /// What it should do per resource.
    pub targets: BTreeMap<String, Target>,
    /// Active deployment → its phase there.
    pub phases: Option<BTreeMap<String, NodePhase>>,
    /// Milliseconds since its last report (`null`: unknown).
    pub last_report_ms: Option<u64>,
}

/// `GET /v1/watch`, event `applied`: this server's applied index moved.
#[derive(ToSchema)]
#[allow(dead_code)] // schema only: the feed writes it as JSON
pub struct AppliedEvent {
    /// The applied log index (also the event's `id`).
    pub applied: u64,
    /// The answering server's id.
    pub server: u64,
    /// The leader it knows, if any.
    pub leader: Option<u64>,
    /// Its current term.
    pub term: u64,
}

/// Event `closed`, the last of a stream whose token no longer authenticates.
#[derive(ToSchema)]
#[allow(dead_code)] // schema only: the feed writes it as JSON
pub struct ClosedEvent {
    /// `revoked` or `expired`.
    pub reason: String,
    /// The token and what happened to it.
    pub message: String,
}

/// `GET /v1/deployments/{id}/watch`, event `end`: the deployment reached this terminal status; the
/// stream ends.
#[derive(ToSchema)]
#[allow(dead_code)] // schema only: the feed writes it as JSON
pub struct EndEvent {
    /// The deployment.
    pub id: DeploymentId,
    /// Its terminal status.
    pub status: Status,
}
