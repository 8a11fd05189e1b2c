//! The deployment domain as a pure, deterministic core: no I/O, no clock, no actix (DEPLOYMENTS.md in full).
//!
//! `ClusterState::apply(command, at)` is the only place state changes; every server applies the same log and
//! gets byte-identical snapshots. See `docs/ARCHITECTURE.md` ("Domain core") for the map from each section of
//! DEPLOYMENTS.md to modules and tests.

mod chunked;
mod command;
mod counters;
mod cow;
mod deployment;
mod errors;
pub mod explain;
mod fleet;
mod forget;
mod gauges;
mod group;
mod group_abort;
mod group_deployment;
mod ids;
mod invalid;
mod lifecycle;
mod model;
mod nodes;
mod outcome;
pub mod plan;
mod policy;
mod precheck;
mod progress;
mod pulse;
mod queries;
mod ranges;
mod reconverge;
mod registry;
mod removal;
mod reports;
mod retention;
mod retract;
mod schema;
mod seen;
mod selection;
mod settle;
mod starts;
mod state;
mod status;
mod strategy;
mod subscriptions;
pub mod summary;
mod targets;
mod threshold;
mod tokens;
mod vecmap;
mod views;

#[cfg(test)]
mod testkit;

#[cfg(test)]
#[path = "layers_test.rs"]
mod layers_test;

pub use chunked::ChunkedVec;
pub use command::{Command, DeploymentSpec, Response};
pub use counters::{ForwardCursor, RollbackCursor, Tally, Watches};
pub use cow::CowMap;
pub use deployment::{Deployment, DeploymentNode, Event, EventKind, NodePhase};
pub use errors::{
    check_message, check_name, clip, is_safe_name, quote, DomainError, ErrorKind, MAX_MESSAGE_LEN,
    MAX_NAME_BYTES,
};
pub use explain::{Decision, NodeHistory};
pub use fleet::{FleetPage, NodeLine};
pub use gauges::{ActiveGauges, Gauges, ALL_PHASES, ALL_STATUSES};
pub use group_deployment::{GroupDeployment, GroupStatus, StepItem};
pub use ids::{
    Actor, DeploymentId, Entity, GroupDeploymentId, Timestamp, UnknownId, RESERVED_ACTOR_NAMES,
};
pub use invalid::Invalid;
pub use model::{
    Artifact, Consumer, Dependency, Group, Hold, Member, Mode, NodeReport, NodeResource, NodeState,
    Resource, ResourceReport, Retraction, Subscription, Version, VersionProgress,
};
pub use outcome::{Outcome, MAX_OUTCOME_ENTRIES};
pub use plan::{
    DeploymentPlan, GroupPlanItem, PassedOver, PlannedNode, SkippedNode, VersionReason,
};
pub use policy::{Change, Policy, PolicyPatch};
pub use precheck::{check_sha256, precheck, MAX_NODES_PER_COMMAND};
pub use pulse::PulseAnswer;
pub use ranges::parse_ranges;
pub use reconverge::{Behind, FollowUp};
pub use seen::{Fact, Seen};
pub use state::{ClusterState, SNAPSHOT_LIMIT};
pub use status::{allowed, PausedBy, Status, TransitionRefused, TRANSITIONS};
pub use strategy::{
    default_strategy, Completion, Settings, Strategy, DEFAULT_DOWNLOAD_WINDOW,
    DEFAULT_INSTALL_WINDOW,
};
pub use summary::{
    FailingNode, NodePage, PageInfo, PhaseCounts, PulseView, SummaryView, WindowUse, Windows,
};
pub use threshold::FailedNodes;
pub use tokens::{
    check_token_name, check_token_nodes, ct_eq, glob_matches, Permission, Role, SecretHash, Token,
    TokenTable, BOOTSTRAP_TOKEN, HASH_LEN,
};
pub use vecmap::{OneInline, Pair, VecMap, VecSet};
pub use views::{
    ConsumerView, DeploymentFilter, DeploymentNodeView, DeploymentSummary, DeploymentView,
    EventView, GroupDeploymentView, GroupView, HoldView, NodeView, ResourceView, StatusFilter,
    StepItemView, SubscriptionView, Target, TokenView, VersionView,
};
