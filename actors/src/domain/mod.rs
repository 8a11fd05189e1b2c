//! The deployment domain as a pure, deterministic core: no I/O, no clock, no actix (DEPLOYMENTS.md in full).
//!
//! `ClusterState::apply(command, at)` is the only place state changes; every server applies the same log and
//! gets byte-identical snapshots. See `docs/ARCHITECTURE.md` ("Domain core") for the map from each section of
//! DEPLOYMENTS.md to modules and tests.

mod command;
mod deployment;
mod errors;
pub mod explain;
mod fleet;
mod gauges;
mod group;
mod ids;
mod lifecycle;
mod model;
mod nodes;
mod outcome;
pub mod plan;
mod policy;
mod precheck;
mod progress;
mod pulse;
mod ranges;
mod registry;
mod removal;
mod retention;
mod retract;
mod selection;
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

pub use command::{Command, DeploymentSpec, GroupStatus, PulseAnswer, Response};
pub use deployment::{Deployment, DeploymentNode, Event, EventKind, NodePhase};
pub use errors::{
    check_message, check_name, clip, is_safe_name, quote, DomainError, Entity, ErrorKind,
    MAX_MESSAGE_LEN, MAX_NAME_BYTES,
};
pub use explain::{Decision, NodeHistory};
pub use fleet::{FleetPage, NodeLine};
pub use gauges::{ActiveGauges, Gauges, ALL_PHASES, ALL_STATUSES};
pub use group::{GroupDeployment, StepItem};
pub use ids::{Actor, DeploymentId, GroupDeploymentId, Timestamp, RESERVED_ACTOR_NAMES};
pub use model::{
    Artifact, Consumer, Dependency, Group, Hold, Member, Mode, NodeReport, NodeResource, NodeState,
    Resource, ResourceReport, Retraction, Subscription, Version, VersionProgress,
};
pub use outcome::{Outcome, MAX_OUTCOME_ENTRIES};
pub use plan::{
    DeploymentPlan, GroupPlanItem, PassedOver, PlannedNode, SkippedNode, VersionReason,
};
pub use policy::{
    default_strategy, Change, Policy, PolicyPatch, DEFAULT_DOWNLOAD_WINDOW, DEFAULT_INSTALL_WINDOW,
};
pub use precheck::{check_sha256, precheck, MAX_NODES_PER_COMMAND};
pub use ranges::parse_ranges;
pub use state::{ClusterState, SNAPSHOT_LIMIT};
pub use status::{allowed, PausedBy, Status, TRANSITIONS};
pub use strategy::{Completion, Settings, Strategy};
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
