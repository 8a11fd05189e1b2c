//! The leader's actors: thin actix shells over the pure domain, started when this server becomes
//! leader and stopped when it steps down. They never decide what the state becomes — `apply`
//! does; they only propose commands (batched node changes, `MarkInactive`, `TickDeployment`,
//! `ForgetNodes`, `Prune`) at the right time. The supervisor wires three jobs to leadership: its
//! children (started, stopped and re-armed from what each `apply` changed, its `Outcome`), report
//! routing with node liveness, and housekeeping (forgetting nodes, retention).

mod children;
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
mod routing;
mod supervisor;

pub use consumer::{ConsumerCore, REPORT_QUEUE_LIMIT};
pub use consumer_actor::ConsumerActor;
pub use deployment::DeploymentCore;
pub use deployment_actor::DeploymentActor;
pub use group::GroupCore;
pub use group_actor::GroupDeploymentActor;
pub use host::{Host, ProposeError};
// The supervisor's plain jobs, also driven directly by convoy-lab's deterministic simulation.
pub use housekeeping::Housekeeping;
pub use liveness::Liveness;
pub use supervisor::{
    Supervisor, SupervisorConfig, DEFAULT_DEPLOYMENT_HISTORY, DEFAULT_FORGET_NODES_AFTER,
};

#[cfg(test)]
mod testkit;
