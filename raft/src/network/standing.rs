//! How this server stands with its peers: which peers are down or refused, logged so that an
//! operator can read it, and whether the peers refuse this server (then it is not ready).
//!
//! A peer costs one WARN when it stops answering or refuses (with the reason), one when it is
//! back, and while it stays so at most one summary line per [`SUMMARY_EVERY`] with the count of
//! failures, never a line per heartbeat. Refusals *of this server* by its peers (another
//! cluster's id, a replaced data dir, a secret they do not hold) are what
//! [`Standing::refused_by_peers`] reports to readiness.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::identity::Refusal;
use crate::types::NodeId;

/// At most one summary line per peer that stays down or refused, per this period.
pub const SUMMARY_EVERY: Duration = Duration::from_secs(60);

/// A refusal of this server counts for readiness this long after it was last seen.
pub const REFUSAL_MEMORY: Duration = Duration::from_secs(10);

/// What went wrong with one peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trouble {
    /// It does not answer (connection refused, reset, timed out).
    Down,
    /// This server refuses it (its identity).
    WeRefuse,
    /// It refuses this server (its identity or its secret).
    RefusesUs,
}

#[derive(Debug)]
struct Bad {
    trouble: Trouble,
    reason: String,
    since: Instant,
    failures: u64,
    summarised: Instant,
    last: Instant,
}

/// One server's standing with its peers (module doc); shared by the transport's client and server.
#[derive(Debug)]
pub struct Standing {
    peers: Mutex<BTreeMap<NodeId, Bad>>,
    /// When this standing began: the origin of `exchanged`.
    born: Instant,
    /// Milliseconds after `born` of the last request answered either way (sessions are pooled, so
    /// a working server exchanges far more often than it shakes hands); 0: never.
    exchanged: AtomicU64,
    /// The last refusal of this server by a peer whose id is unknown (its handshake did not
    /// decrypt: it holds another secret).
    anonymous: Mutex<Option<(Instant, String)>>,
    /// Followers refused because their log went backwards (see `client::reversion`).
    reversions: AtomicU64,
    /// The last peer this server refused for belonging to another cluster, and why (issue 37: alone, it is the
    /// one on the wrong data).
    foreign: Mutex<Option<(Instant, String)>>,
}

impl Default for Standing {
    fn default() -> Self {
        Self {
            peers: Mutex::default(),
            born: Instant::now(),
            exchanged: AtomicU64::new(0),
            anonymous: Mutex::default(),
            reversions: AtomicU64::new(0),
            foreign: Mutex::default(),
        }
    }
}

/// How long a server must have worked with no peer before a refusal of another cluster's makes it the odd
/// one out.
const QUIET: Duration = Duration::from_secs(1);

impl Standing {
    /// A request was answered, sent or served: this server works with some peer.
    pub fn exchanged(&self) {
        // Rounded up, so that it is never before a refusal seen just before it.
        let ms = self.born.elapsed().as_millis() as u64 + 1;
        self.exchanged.store(ms, Ordering::Relaxed);
    }

    /// When a request was last answered either way, if ever.
    fn last_exchange(&self) -> Option<Instant> {
        match self.exchanged.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(self.born + Duration::from_millis(ms)),
        }
    }

    /// A session with `peer` was established: logs its return if it was down or refused.
    pub fn ok(&self, peer: NodeId) {
        let now = Instant::now();
        self.exchanged();
        if let Some(bad) = self.peers.lock().unwrap().remove(&peer) {
            tracing::warn!(
                peer,
                after = ?now.duration_since(bad.since),
                failures = bad.failures,
                "peer {peer} is back"
            );
        }
    }

    /// Something went wrong with `peer`: the first time (or a new kind of trouble) is a WARN with
    /// the reason, later ones only counted and summarised.
    pub fn trouble(&self, peer: NodeId, trouble: Trouble, reason: &str) {
        if trouble != Trouble::Down {
            crate::stats::stats().identity_refusals.inc();
        }
        let now = Instant::now();
        let mut peers = self.peers.lock().unwrap();
        match peers.get_mut(&peer) {
            Some(bad) if bad.trouble == trouble => {
                bad.failures += 1;
                bad.last = now;
                bad.reason = reason.to_string();
                if now.duration_since(bad.summarised) >= SUMMARY_EVERY {
                    tracing::warn!(
                        peer,
                        for_secs = now.duration_since(bad.since).as_secs(),
                        failures = bad.failures,
                        "peer {peer} still {}: {reason}",
                        words(trouble)
                    );
                    bad.summarised = now;
                }
            }
            _ => {
                tracing::warn!(peer, "peer {peer} {}: {reason}", words(trouble));
                peers.insert(
                    peer,
                    Bad {
                        trouble,
                        reason: reason.to_string(),
                        since: now,
                        failures: 1,
                        summarised: now,
                        last: now,
                    },
                );
            }
        }
    }

    /// This server refused a peer's identity: counted as [`Trouble::WeRefuse`], and remembered for
    /// [`Standing::refuses_peers`] when the peer belongs to another cluster.
    pub fn we_refuse(&self, peer: NodeId, refusal: &Refusal) {
        let reason = refusal.to_string();
        self.trouble(peer, Trouble::WeRefuse, &reason);
        if matches!(refusal, Refusal::OtherCluster { .. }) {
            *self.foreign.lock().unwrap() = Some((Instant::now(), reason));
        }
    }

    /// Why this server refuses its peers as another cluster's, when it has lately and it has exchanged
    /// nothing with any peer since: then it is the odd one out (started on another cluster's data, or
    /// with another founders' list), serving a cluster its peers are not in (issue 37). A server that
    /// works with some peer stays ready whatever a stray one says.
    pub fn refuses_peers(&self) -> Option<String> {
        let exchanged = self.last_exchange();
        self.foreign
            .lock()
            .unwrap()
            .as_ref()
            // Quiet: no exchange since the refusal, nor in the last second. A leader that keeps working with
            // its other peers exchanges many times a second, so a stray server refusing it (or refused by it)
            // never makes it stop serving between two heartbeats.
            .filter(|(at, _)| {
                at.elapsed() < REFUSAL_MEMORY
                    && exchanged.is_none_or(|a| a < *at && a.elapsed() >= QUIET)
            })
            .map(|(_, why)| why.clone())
    }

    /// A peer whose id is unknown refused this server or was refused by it because they hold
    /// different secrets.
    pub fn anonymous_refusal(&self, reason: &str) {
        let mut last = self.anonymous.lock().unwrap();
        let first = last.is_none();
        *last = Some((Instant::now(), reason.to_string()));
        if first {
            tracing::warn!("{reason}");
        }
    }

    /// Why this server's peers refuse it, when they have lately and it has exchanged nothing with
    /// any peer since (a server that works with its peers stays ready whatever a stray one says).
    pub fn refused_by_peers(&self) -> Option<String> {
        let now = Instant::now();
        let exchanged = self.last_exchange();
        let recent = |at: Instant| {
            now.duration_since(at) < REFUSAL_MEMORY
                && exchanged.is_none_or(|a| a < at && now.duration_since(a) >= QUIET)
        };
        let peers = self.peers.lock().unwrap();
        let by_peer = peers
            .values()
            .filter(|bad| bad.trouble == Trouble::RefusesUs && recent(bad.last))
            .max_by_key(|bad| bad.last)
            .map(|bad| bad.reason.clone());
        drop(peers);
        by_peer.or_else(|| {
            self.anonymous
                .lock()
                .unwrap()
                .as_ref()
                .filter(|(at, _)| recent(*at))
                .map(|(_, why)| why.clone())
        })
    }

    /// Counts a follower refused because its log went backwards.
    pub fn reverted(&self) {
        self.reversions.fetch_add(1, Ordering::Relaxed);
        crate::stats::stats().follower_reversions.inc();
    }

    /// How many times a follower was refused because its log went backwards.
    pub fn reversions(&self) -> u64 {
        self.reversions.load(Ordering::Relaxed)
    }

    /// The peers that are down or refused now, with the reason.
    pub fn troubled(&self) -> Vec<(NodeId, Trouble, String)> {
        self.peers
            .lock()
            .unwrap()
            .iter()
            .map(|(id, bad)| (*id, bad.trouble, bad.reason.clone()))
            .collect()
    }
}

fn words(trouble: Trouble) -> &'static str {
    match trouble {
        Trouble::Down => "is unreachable",
        Trouble::WeRefuse => "is refused",
        Trouble::RefusesUs => "refuses this server",
    }
}

#[cfg(test)]
#[path = "standing_test.rs"]
mod tests;
