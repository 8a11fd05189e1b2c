//! Stopping a replica: handing leadership over before a planned stop, and shutting down.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use openraft::async_runtime::WatchReceiver;

use super::batcher::BATCH_QUEUE;
use super::RaftNode;
use crate::state_machine::StateMachine;
use crate::types::NodeId;

impl<S: StateMachine> RaftNode<S> {
    /// Before a planned stop: if this server leads, stops taking proposals (callers here and
    /// forwarding followers wait for the successor), waits until what it took is applied, hands
    /// leadership to the most up-to-date voter and waits until another server leads, all within
    /// `patience`. Returns the new leader, or `None` when this server was not leading, has no
    /// other voter, or the hand-over did not finish in time (the stop then costs an election).
    pub async fn hand_over(&self, patience: Duration) -> Option<NodeId> {
        if !self.is_leader() {
            return None;
        }
        let deadline = tokio::time::Instant::now() + patience;
        self.local.draining.store(true, Ordering::SeqCst);
        // What was proposed before the drain commits here, so that no write is cut off mid-way
        // and answered "not the leader" after all (a retry would apply it twice).
        let mut metrics = self.raft.metrics();
        let settled = |m: &openraft::RaftMetrics<crate::TypeConfig>| {
            m.last_applied.as_ref().map(|l| l.index) >= m.last_log_index
        };
        while tokio::time::Instant::now() < deadline {
            let idle = self.local.proposals.capacity() == BATCH_QUEUE;
            if idle && settled(&metrics.borrow_watched()) {
                break;
            }
            let _ = tokio::time::timeout(Duration::from_millis(10), metrics.changed()).await;
        }
        let m = self.raft.metrics().borrow_watched().clone();
        let voters: BTreeSet<NodeId> = m.membership_config.membership().voter_ids().collect();
        let replication = m.replication.clone().unwrap_or_default();
        let Some(to) = crate::handover::successor(self.id, &voters, &replication) else {
            tracing::info!("no other voter to hand leadership to");
            return None;
        };
        tracing::info!(to, "handing leadership over before stopping");
        if let Err(e) = self.raft.trigger().transfer_leader(to).await {
            tracing::warn!(to, error = %e, "leadership hand-over refused");
            return None;
        }
        let mut metrics = self.raft.metrics();
        loop {
            let leader = metrics.borrow_watched().current_leader;
            if let Some(leader) = leader.filter(|l| *l != self.id) {
                tracing::info!(leader, "leadership handed over");
                return Some(leader);
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                tracing::warn!(to, ?patience, "leadership hand-over did not finish in time");
                return None;
            }
            let _ = tokio::time::timeout(left, metrics.changed()).await;
        }
    }

    /// Stops raft and the transport; the data dir stays consistent. Returns once the transport's
    /// listener is closed, so that a server started again in this process can bind its address.
    pub async fn shutdown(&self) {
        self.core.stopping();
        self.snapshots.abort();
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(server) = &server {
            server.stop();
        }
        if let Err(e) = self.raft.shutdown().await {
            tracing::warn!(error = %e, "raft shutdown");
        }
        if let Some(server) = server {
            server.shutdown().await;
        }
    }
}
