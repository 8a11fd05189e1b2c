//! Messages between the server and the leader's actors. The ones that only inspect an actor
//! (`Told`, `Steps`, `ListChildren`, `ArmedDeadline`) exist in test builds only.

use actix::Message;

use crate::domain::{NodeReport, Timestamp};

/// This server became leader (`true`) or stopped being leader (`false`).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Leadership(pub bool);

/// The applied state changed (up to this log index): the supervisor takes the outcome of the
/// applies from its host and starts, stops and re-arms only the children it names.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct StateChanged(pub u64);

/// A node's report, routed to the actor of (one of) its consumers.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), ReportRejected>")]
pub struct Report(pub NodeReport);

/// Many nodes' reports at once (a relay or a simulated fleet): each is taken exactly as if it came
/// alone, and each gets its own answer, in order.
#[derive(Debug, Message)]
#[rtype(result = "Vec<Result<(), ReportRejected>>")]
pub struct ReportBatch(pub Vec<NodeReport>);

/// Why a report was not taken.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReportRejected {
    /// This server is not the leader (the caller forwards to the leader).
    #[error("not the leader")]
    NotLeader,
    /// The consumer actor's queue of pending changes is full; the agent retries on its next report.
    #[error("consumer {consumer:?} has {pending} changes pending (limit {limit}); retry later")]
    Busy {
        /// The consumer.
        consumer: String,
        /// Changes waiting to be proposed.
        pending: usize,
        /// The bound.
        limit: usize,
    },
    /// The report is out of bounds (`check_report`): refused alone, the rest of its batch goes on.
    #[error("node {node:?}: {reason}")]
    Invalid {
        /// The reporting node.
        node: String,
        /// Which bound it broke, with the limit.
        reason: String,
    },
}

/// The deployment's deadline in the applied state now (`None`: no time-based rule): re-arm the
/// one timer there.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Rearm(pub Option<Timestamp>);

/// Inspect a deployment actor (tests): how many deadlines it was told (or read) since it started.
#[cfg(test)]
#[derive(Debug, Message)]
#[rtype(result = "u64")]
pub struct Told;

/// A group deployment's step (0-based) started in the applied state.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct StepStarted(pub u32);

/// Inspect a group-deployment actor (tests): the steps it saw start and when (leader clock), the
/// running one last.
#[cfg(test)]
#[derive(Debug, Message)]
#[rtype(result = "Vec<(u32, Timestamp)>")]
pub struct Steps;

/// Inspect the supervisor (tests): its deployment and group-deployment children.
#[cfg(test)]
#[derive(Debug, Message)]
#[rtype(result = "ChildList")]
pub struct ListChildren;

/// The supervisor's children, in id order.
#[cfg(test)]
#[derive(Debug, Default)]
pub struct ChildList {
    /// One actor per active deployment.
    pub deployments: Vec<(
        crate::domain::DeploymentId,
        actix::Addr<super::DeploymentActor>,
    )>,
    /// One actor per running group deployment.
    pub groups: Vec<(
        crate::domain::GroupDeploymentId,
        actix::Addr<super::GroupDeploymentActor>,
    )>,
}

/// Inspect a deployment actor's timer (tests): the deadline it is armed for.
#[cfg(test)]
#[derive(Debug, Message)]
#[rtype(result = "Option<Timestamp>")]
pub struct ArmedDeadline;

/// Stop this child now (leadership lost or its entity finished).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Stop;

/// On the leader: how many milliseconds ago each of these nodes last reported (`None`: not since this
/// leader started, or longer ago than the node timeout). The answer is `None` on a follower.
#[derive(Debug, Message)]
#[rtype(result = "Option<Vec<Option<u64>>>")]
pub struct LastReports(pub Vec<String>);
