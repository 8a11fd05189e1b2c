//! The leader's actors: thin actix shells over the pure domain, started when this server becomes
//! leader and stopped when it steps down. They never decide what the state becomes — `apply`
//! does; they only propose commands (batched node changes, `MarkInactive`, `TickDeployment`) at the
//! right time. What each `apply` changed (its `Outcome`) tells the supervisor which children to
//! start, stop or re-arm.

mod consumer;
pub mod counters;
mod deployment;
mod group;
mod host;
mod liveness;
pub mod messages;
mod supervisor;

pub use consumer::{ConsumerActor, REPORT_QUEUE_LIMIT};
pub use deployment::DeploymentActor;
pub use group::GroupDeploymentActor;
pub use host::{Host, ProposeError};
pub use supervisor::{
    Supervisor, SupervisorConfig, DEFAULT_DEPLOYMENT_HISTORY, DEFAULT_FORGET_NODES_AFTER,
};

#[cfg(test)]
mod tests;
