//! The deployment domain as a pure, deterministic core: no I/O, no clock, no actix (DEPLOYMENTS.md in full).
//!
//! `ClusterState::apply(command, at)` is the only place state changes; every server applies the same log and
//! gets byte-identical snapshots. `docs/ARCHITECTURE.md` maps each section of DEPLOYMENTS.md to modules and
//! tests ("Map: DEPLOYMENTS.md → modules → tests") and says where this crate sits in the crate graph.
//!
//! Invariant: this crate depends on no async runtime, actor framework or clock (its `Cargo.toml` lists none), so
//! the rules stay pure by construction. Its folders are layers, bottom to top (`layers_test.rs` checks them):
//! `values`, `errors`, `entities` and `deployment`, `command`, `families`, `state`, `views`; the generic
//! collections are the crate `convoy-collections`, below them all.

#![warn(missing_docs)]

pub mod analysis;
mod command;
mod deployment;
mod entities;
mod errors;
mod families;
mod policy;
mod state;
mod values;
mod views;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

#[cfg(test)]
#[path = "layers_test.rs"]
mod layers_test;

pub use views::analysis::DueMeasurement;
pub use views::{budgets, explain, finish, limits, plan, policies, summary, windows};

pub use command::{Command, DeploymentSpec, Response};
pub use convoy_collections::{ChunkedVec, CowMap, OneInline, Pair, VecMap, VecSet};
pub use deployment::counters::{ForwardCursor, RollbackCursor, Tally, Watches};
pub use deployment::pace::PaceView;
pub use deployment::pulse::PulseAnswer;
pub use deployment::reasons::{Wait, WaitView, Waits};
pub use deployment::seen::{Fact, Seen};
pub use deployment::{Deployment, DeploymentNode, Event, EventKind, NodePhase};
pub use entities::brake::{Brake, BrakeRecord, Named, Trip};
pub use entities::group_deployment::{GroupDeployment, GroupStatus, StepItem};
pub use entities::model::{
    Artifact, Consumer, ConsumerEvent, ConsumerEventKind, Dependency, Group, Hold, HoldOrigin,
    Member, Mode, NodeReport, NodeResource, NodeState, OkSince, Resource, ResourceReport,
    Retraction, Subscription, Version, VersionProgress, MAX_CONSUMER_EVENTS,
};
pub use entities::policy::{Change, Policy, PolicyPatch};
pub use entities::tokens::{
    check_token_consumers, check_token_name, check_token_nodes, check_token_ttl, ct_eq,
    glob_matches, Permission, Role, SecretHash, Token, TokenTable, BOOTSTRAP_TOKEN, HASH_LEN,
};
pub use errors::ranges::parse_ranges;
pub use errors::{
    check_message, check_name, clip, is_safe_name, quote, DomainError, ErrorKind, MAX_MESSAGE_LEN,
    MAX_NAME_BYTES,
};
pub use families::reconverge::{Behind, FollowUp};
pub use policy::admission::{verdict, windows_at, Verdict, WindowNow};
pub use policy::budget::Budget;
pub use policy::ledger::{Account, LISTED_NODES};
pub use policy::limits::{FleetLimits, FleetSetting, LimitSource, MAX_FLEET_LIMIT};
pub use policy::weak::{WeakGate, WeakWait};
pub use policy::weak_jitter::{offset as weak_jitter_offset, Spread, WeakJitter};
pub use policy::windows::{
    AppliesTo, Overrun, Schedule, Window, WindowKind, MAX_WINDOWS, MAX_WINDOW_MS,
};
pub use state::format::STATE_FORMAT;
pub use state::{ClusterState, SNAPSHOT_LIMIT};
pub use values::count::count;
pub use values::ids::{
    Actor, DeploymentId, Entity, GroupDeploymentId, Timestamp, UnknownId, RESERVED_ACTOR_NAMES,
};
pub use values::invalid::Invalid;
pub use values::outcome::{Outcome, MAX_OUTCOME_ENTRIES};
pub use values::status::{allowed, PausedBy, Status, TransitionRefused, TRANSITIONS};
pub use values::strategy::{
    default_strategy, Completion, Gate, OnTimeout, Pacing, Settings, Strategy,
    DEFAULT_DOWNLOAD_WINDOW, DEFAULT_HEALTHY_DEADLINE_MS, DEFAULT_INSTALL_WINDOW,
    MAX_START_JITTER_MS,
};
pub use values::text;
pub use values::threshold::FailedNodes;
pub use views::explain::{Decision, NodeHistory};
pub use views::fleet::{FleetPage, NodeLine};
pub use views::gauges::{ActiveGauges, Gauges, ALL_PHASES, ALL_STATUSES};
pub use views::pages::{Page, Paging, DEFAULT_PAGE};
pub use views::plan::{
    DeploymentPlan, GroupPlanItem, PassedOver, PlannedNode, SkippedNode, VersionReason,
};
pub use views::precheck::{check_sha256, precheck, MAX_NODES_PER_COMMAND};
pub use views::providers::check_providers;
pub use views::report_bounds::{
    check_report, cut_errors, node_consumers, report_cost, CUT_MARKER, MAX_ERROR_BYTES,
    MAX_LOG_PATH_BYTES, MAX_REPORT_BYTES,
};
pub use views::shows::{ConsumerShow, ResourceShow, SubscriptionEntry};
pub use views::summary::{
    FailingNode, NodePage, PageInfo, PhaseCounts, PulseView, SummaryView, WindowUse, Windows,
};
pub use views::{
    ConsumerView, DeploymentFilter, DeploymentNodeView, DeploymentSummary, DeploymentView,
    EventView, GroupDeploymentView, GroupView, HoldView, NodeView, ResourceView, StatusFilter,
    StepItemView, SubscriptionView, Target, TokenView, VersionView,
};
