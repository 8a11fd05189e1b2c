//! Wires the leader's actors to this server: the [`Host`] they propose and read through, and the
//! watchers that tell the supervisor about leadership and applied-state changes. Raft decides who
//! leads; the supervisor keeps the one leader-side copy of it (`leader/leadership.rs` in
//! convoy-actors), and the watcher here only carries raft's answer each time it turns.

use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use convoy_actors::domain::{ClusterState, Command, Outcome, Response, Timestamp};
use convoy_actors::leader::messages::{Leadership, StateChanged};
use convoy_actors::leader::{Host, ProposeError, Supervisor};
use convoy_raft::TypeConfig;
use futures::future::BoxFuture;
use futures::FutureExt;
use openraft::async_runtime::WatchReceiver;
use openraft::{RaftMetrics, ServerState};

use crate::replica::{Replica, ReplicaError};

/// Raft's metrics, watched.
type RaftMetricsWatch = openraft::alias::WatchReceiverOf<TypeConfig, RaftMetrics<TypeConfig>>;

/// The actors' view of this server: proposals go through the replicated log.
pub struct ServerHost {
    replica: Replica,
}

impl ServerHost {
    /// A host over `replica`.
    pub fn new(replica: Replica) -> Arc<Self> {
        Arc::new(Self { replica })
    }
}

impl Host for ServerHost {
    fn propose(&self, command: Command) -> BoxFuture<'static, Result<Response, ProposeError>> {
        let replica = self.replica.clone();
        async move {
            replica.propose(command).await.map_err(|e| match e {
                ReplicaError::Refused(refusal) => ProposeError::Refused(refusal),
                other @ (ReplicaError::NotAMember
                | ReplicaError::Raft(_)
                | ReplicaError::NotServing(_)
                | ReplicaError::Task(_)) => ProposeError::Unavailable(other.to_string()),
            })
        }
        .boxed()
    }

    fn read(&self, f: &mut dyn FnMut(&ClusterState)) {
        self.replica.node().read(|m| f(m.state()));
    }

    fn now_ms(&self) -> Timestamp {
        wall_ms()
    }

    fn take_outcome(&self) -> Outcome {
        self.replica.node().read(|m| m.take_outcome())
    }
}

/// Milliseconds since the Unix epoch.
pub fn wall_ms() -> u64 {
    convoy_time::Clock::wall_ms(&convoy_time::SystemClock)
}

/// Forwards leadership changes and applied-state changes to the supervisor, from the raft
/// runtime. State changes are coalesced: at most one notification per 5 ms.
pub fn watch(replica: &Replica, rt: &tokio::runtime::Handle, supervisor: Addr<Supervisor>) {
    let mut metrics = replica.node().metrics();
    let sup = supervisor.clone();
    rt.spawn(async move {
        // Raft starts every server as a follower, as the supervisor does: wait for it to lead,
        // then for it to stop, and so on.
        let mut leads = true;
        while until_raft_says(&mut metrics, leads).await {
            tracing::info!(leader = leads, "leadership changed");
            sup.do_send(Leadership(leads));
            leads = !leads;
        }
    });
    let mut applied = replica.node().applied().subscribe();
    rt.spawn(async move {
        while applied.changed().await.is_ok() {
            let index = *applied.borrow_and_update();
            supervisor.do_send(StateChanged(index));
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
}

/// Waits until raft's state says this server leads (`leads`) or not; `false` when raft shut down.
async fn until_raft_says(metrics: &mut RaftMetricsWatch, leads: bool) -> bool {
    loop {
        if (metrics.borrow_and_update().state == ServerState::Leader) == leads {
            return true;
        }
        if metrics.changed().await.is_err() {
            return false;
        }
    }
}
