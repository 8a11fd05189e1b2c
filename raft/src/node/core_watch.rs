//! Watching the replica's raft core: the voters it knows (for the handshake's identity check and
//! the leader's record of what followers acknowledged) and whether the core still runs.
//!
//! openraft's core task owns the sender of its metrics: when the core ends other than by
//! [`super::RaftNode::shutdown`] (a panic, or a fatal error), the watch closes and the reason is
//! kept here, for readiness (`fatal`) and for the server, which exits at once.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use openraft::async_runtime::WatchReceiver;

use crate::identity::Identity;
use crate::network::client::{Network, SnapshotBytes};
use crate::sm_store::SmStore;
use crate::state_machine::StateMachine;
use crate::types::{NodeId, Raft};

/// Whether the raft core still runs.
#[derive(Debug, Default)]
pub struct CoreState {
    stopping: AtomicBool,
    stopped: OnceLock<String>,
}

impl CoreState {
    /// Why the core stopped on its own, if it did.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.get().map(String::as_str)
    }

    /// A planned stop begins: the core's end is not a failure.
    pub(super) fn stopping(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }
}

/// The voters of `raft`'s current membership, and every member (voters and learners).
fn members<S: StateMachine>(raft: &Raft<SmStore<S>>) -> (BTreeSet<NodeId>, BTreeSet<NodeId>) {
    let metrics = raft.metrics();
    let m = metrics.borrow_watched();
    let membership = m.membership_config.membership();
    let voters = membership.voter_ids().collect();
    let all = membership.nodes().map(|(id, _)| *id).collect();
    (voters, all)
}

/// Tells `identity` the voters now, before the transport serves anyone.
pub(super) fn prime<S: StateMachine>(raft: &Raft<SmStore<S>>, identity: &Identity) {
    identity.set_voters(members(raft).0);
}

/// Follows `raft`'s metrics until the core ends.
pub(super) fn spawn<S: StateMachine, D: SnapshotBytes + 'static>(
    raft: Raft<SmStore<S>>,
    identity: Arc<Identity>,
    network: Network<D>,
    core: Arc<CoreState>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut metrics = raft.metrics();
        let (mut voters, mut all) = members(&raft);
        loop {
            if metrics.changed().await.is_err() {
                if !core.stopping.load(Ordering::SeqCst) {
                    let why = "the raft core stopped unexpectedly (a panic or a fatal error, logged above)";
                    tracing::error!("{why}");
                    let _ = core.stopped.set(why.to_string());
                }
                return;
            }
            let (now_voters, now_all) = members(&raft);
            if now_voters != voters {
                identity.set_voters(now_voters.clone());
                voters = now_voters;
            }
            for gone in all.difference(&now_all) {
                network.forget_progress(*gone);
            }
            all = now_all;
        }
    })
}
