//! When this server last heard from each peer that leads it: the moment the transport received an
//! AppendEntries (heartbeats included) or a snapshot part from that peer, recorded before the raft
//! core sees it. Readiness reads it to tell a follower cut off from its leader (which openraft
//! still names as leader while its pre-votes fail) from one that keeps up.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::types::NodeId;

/// The last leader RPC received from each peer (module doc); shared by the transport server and the
/// node that reports it.
#[derive(Debug)]
pub struct Heard {
    /// When this record began: what "never heard" counts from.
    born: Instant,
    last: Mutex<BTreeMap<NodeId, Instant>>,
}

impl Default for Heard {
    fn default() -> Self {
        Self::since(Instant::now())
    }
}

impl Heard {
    /// A record that began at `born`.
    pub fn since(born: Instant) -> Self {
        Self {
            born,
            last: Mutex::default(),
        }
    }

    /// `peer` sent this server a leader's RPC at `now`.
    pub fn from(&self, peer: NodeId, now: Instant) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let at = last.entry(peer).or_insert(now);
        *at = (*at).max(now);
    }

    /// How long before `now` this server last heard from `peer`; since the record began if never (a
    /// server that just started and knows its leader from disk is given the time any follower is).
    pub fn silence(&self, peer: NodeId, now: Instant) -> Duration {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        now.saturating_duration_since(last.get(&peer).copied().unwrap_or(self.born))
    }
}

#[cfg(test)]
#[path = "heard_test.rs"]
mod tests;
