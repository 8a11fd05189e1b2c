//! Fast failover when the leader's process dies: a follower whose session from the leader closes
//! probes the leader's transport address, and if the leader's host refuses the connection
//! (nothing listens there any more) it stops waiting out the leader lease.
//!
//! Without it a follower elects only after the leader lease (openraft: the election timeout's
//! upper bound) plus a random election timeout have passed since the last heartbeat — 750–1000 ms
//! with the defaults. A crashed or killed process is visible much sooner: its kernel closes its
//! connections (the follower reads end-of-stream or a reset) and refuses new ones. Every
//! follower that sees this hands itself openraft's transfer-leader message *as if the dead
//! leader had sent it*, naming one successor all followers agree on (the lowest voter id other
//! than the dead leader): each follower drops its lease on the dead leader's vote, and the
//! successor campaigns at once with a vote request voters grant despite their lease. If the
//! successor's log is behind (voters refuse it) or it died too, the next voter by id campaigns
//! after [`RETRY_STEP`], and so on; the ordinary election timeout (now without the lease) stays
//! the last resort.
//!
//! Only a *refused* connection counts as death. A probe that connects, times out, or fails
//! otherwise (a partition that drops packets, a loaded host) changes nothing: those cases keep
//! the lease and the ordinary timeouts, so a live leader behind a lossy link is not deposed by
//! this path. Safety never depends on it: granting a vote still requires an up-to-date log.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use openraft::async_runtime::WatchReceiver;
use openraft::raft::TransferLeaderRequest;
use openraft::storage::RaftStateMachine;
use openraft::ServerState;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tracing::{debug, info, warn};

use crate::types::{NodeId, TypeConfig};

/// Longest wait for a probe's connection; a probe that takes longer proves nothing.
const PROBE_TIMEOUT: Duration = Duration::from_millis(200);
/// Probes of a leader whose session closed, [`PROBE_GAP`] apart, before it is taken as alive.
const PROBES: usize = 5;
/// The wait between two probes.
const PROBE_GAP: Duration = Duration::from_millis(20);
/// How long each follower in turn gives the ones before it to get elected.
const RETRY_STEP: Duration = Duration::from_millis(100);

/// Called by the transport server when an authenticated session from a peer ends.
#[derive(Clone)]
pub struct PeerClosed(Arc<dyn Fn(NodeId) + Send + Sync>);

impl PeerClosed {
    /// A hook calling `f` with the peer's id.
    pub fn new(f: impl Fn(NodeId) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Reports that a session from `peer` ended.
    pub fn closed(&self, peer: NodeId) {
        (self.0)(peer)
    }
}

impl std::fmt::Debug for PeerClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PeerClosed")
    }
}

/// The successor every follower names for a dead leader: the lowest voter id other than it.
pub fn successor(dead: NodeId, voters: &BTreeSet<NodeId>) -> Option<NodeId> {
    voters.iter().copied().find(|id| *id != dead)
}

/// What a probe of the leader's transport address found.
#[derive(Debug, PartialEq, Eq)]
pub enum Probe {
    /// The connection was refused: nothing listens at the address.
    Refused,
    /// Connected, timed out, or failed otherwise: no evidence of death.
    Inconclusive,
}

/// Tries to connect to `addr` once.
pub async fn probe(addr: &str) -> Probe {
    match tokio::time::timeout(PROBE_TIMEOUT, TcpStream::connect(addr)).await {
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => Probe::Refused,
        _ => Probe::Inconclusive,
    }
}

/// Starts the watch for server `me` over `raft`; returns the hook for the transport server.
pub fn spawn<SM>(me: NodeId, raft: openraft::Raft<TypeConfig, SM>) -> PeerClosed
where
    SM: RaftStateMachine<TypeConfig>,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<NodeId>();
    tokio::spawn(async move {
        while let Some(peer) = rx.recv().await {
            on_session_closed(me, &raft, peer).await;
            // Sessions close in bursts (one per connection): the probes above covered them.
            while rx.try_recv().is_ok() {}
        }
    });
    PeerClosed::new(move |peer| {
        let _ = tx.send(peer);
    })
}

/// Handles the end of a session from `peer`: if `peer` leads and its host refuses connections,
/// drops the lease and lets the agreed successor campaign.
async fn on_session_closed<SM>(me: NodeId, raft: &openraft::Raft<TypeConfig, SM>, peer: NodeId)
where
    SM: RaftStateMachine<TypeConfig>,
{
    let metrics = raft.metrics().borrow_watched().clone();
    if metrics.current_leader != Some(peer) || metrics.state != ServerState::Follower {
        debug!(peer, leader = ?metrics.current_leader, state = ?metrics.state, "failover: a session closed; not from the leader we follow");
        return;
    }
    let voters: BTreeSet<NodeId> = metrics.membership_config.membership().voter_ids().collect();
    let Some(addr) = metrics
        .membership_config
        .get_node(&peer)
        .map(|m| m.raft_addr.clone())
    else {
        return;
    };
    // A dying process closes its sessions a moment before its listening socket: probe a few
    // times before concluding that the leader lives.
    let mut refused = false;
    for _ in 0..PROBES {
        if probe(&addr).await == Probe::Refused {
            refused = true;
            break;
        }
        tokio::time::sleep(PROBE_GAP).await;
    }
    if !refused {
        debug!(leader = peer, %addr, "failover: leader's session closed but it still answers");
        return;
    }
    let Some(next) = successor(peer, &voters) else {
        return;
    };
    // The leader's vote as this follower holds it: the transfer applies only if unchanged.
    let vote = metrics.vote;
    info!(
        leader = peer,
        %addr,
        successor = next,
        campaign = next == me,
        "failover: the leader's host refuses connections; not waiting out its lease"
    );
    let request = TransferLeaderRequest::<TypeConfig>::new(vote, next, None);
    if let Err(e) = raft.handle_transfer_leader(request).await {
        warn!(error = %e, "failover: cannot hand the transfer to the raft core");
        return;
    }
    // If the successor cannot win (its log is behind, it is down too), the others campaign in
    // turn rather than waiting for a random election timeout: rank 1 after one step, and so on.
    let rank = voters
        .iter()
        .filter(|id| **id != peer)
        .position(|id| *id == me);
    let Some(rank) = rank.filter(|rank| *rank > 0) else {
        return;
    };
    tokio::time::sleep(RETRY_STEP * rank as u32).await;
    let now = raft.metrics().borrow_watched().clone();
    let led = now.current_leader.is_some_and(|leader| leader != peer);
    if !led && now.state == ServerState::Follower {
        info!(
            leader = peer,
            rank, "failover: no successor elected yet; campaigning"
        );
        if let Err(e) = raft.trigger().elect(true).await {
            warn!(error = %e, "failover: cannot start an election");
        }
    }
}

#[cfg(test)]
#[path = "failover_test.rs"]
mod tests;
