//! The leader's actors: thin actix shells over plain handlers, started when this server becomes
//! leader and stopped when it steps down. They never decide what the state becomes — `apply`
//! does; they only propose commands (batched node changes, `MarkInactive`, `TickDeployment`,
//! `ForgetNodes`, `Prune`) at the right time. The supervisor wires three jobs to leadership: its
//! children (started, stopped and re-armed from what each `apply` changed, its `Outcome`), report
//! routing with node liveness, and housekeeping (forgetting nodes, retention). Each actor's logic
//! is a handler taking time as a parameter (`supervisor.rs`, `consumer.rs`, `deployment.rs`,
//! `group.rs`), its actix shell beside it (`*_actor.rs`); convoy-lab's deterministic simulation
//! drives the handlers directly.

mod actix_kin;
pub mod children;
pub mod consumer;
mod consumer_actor;
pub mod deployment;
mod deployment_actor;
pub mod group;
mod group_actor;
mod host;
mod housekeeping;
pub mod ingest_stats;
mod leadership;
mod liveness;
pub mod messages;
pub mod refusals;
pub mod routing;
pub mod supervisor;
mod supervisor_actor;
mod weak_tick;

pub use children::{Children, Kin};
pub use consumer::{ConsumerCore, REPORT_QUEUE_LIMIT};
pub use consumer_actor::ConsumerActor;
pub use deployment::DeploymentCore;
pub use deployment_actor::DeploymentActor;
pub use group::GroupCore;
pub use group_actor::GroupDeploymentActor;
pub use host::{read_with, Host, ProposeError};
// The supervisor's plain jobs, also driven directly by convoy-lab's deterministic simulation.
pub use housekeeping::Housekeeping;
pub use liveness::Liveness;
pub use supervisor::{
    Job, SupervisorConfig, SupervisorCore, DEFAULT_DEPLOYMENT_HISTORY, DEFAULT_FORGET_NODES_AFTER,
};
pub use supervisor_actor::Supervisor;

#[cfg(test)]
mod testkit;
