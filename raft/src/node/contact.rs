//! How long since this replica last had word that a quorum stands behind its leader: on the leader, since a
//! quorum of voters last acknowledged it (openraft's `last_quorum_acked`, or its election while none has);
//! on a follower, since it last heard from the leader it names ([`crate::network::heard::Heard`]). openraft
//! keeps naming a leader that lost its quorum, and a follower keeps naming a leader it no longer hears
//! while its pre-votes fail, so readiness judges this instead.

use std::time::{Duration, Instant};

use openraft::type_config::alias::SerdeInstantOf;
use openraft::ServerState;

use crate::network::heard::Heard;
use crate::types::{NodeId, TypeConfig};

/// Word of a quorum, as this replica has it (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contact {
    /// Nothing to judge: no leader is known, or this leader is a quorum by itself.
    Unjudged,
    /// This server leads: how long since a quorum of voters last acknowledged it.
    Leading {
        /// Since the last acknowledgement (since its election while none has come).
        silent: Duration,
    },
    /// This server follows `leader`: how long since it last heard from it.
    Following {
        /// The leader it names.
        leader: NodeId,
        /// Since its last AppendEntries or snapshot part (since this process started if none came).
        silent: Duration,
    },
}

/// What [`contact`] is judged from, taken out of openraft's metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// This server's id.
    pub id: NodeId,
    /// Whether it leads.
    pub leading: bool,
    /// The leader it knows.
    pub leader: Option<NodeId>,
    /// The voters of its membership.
    pub voters: Vec<NodeId>,
    /// On a leader: when a quorum last acknowledged it.
    pub quorum_acked: Option<Instant>,
    /// On a leader: its own entry of openraft's clock progress (set at its election, then at each
    /// heartbeat it sends that is acknowledged).
    pub own_clock: Option<Instant>,
}

impl Seen {
    /// The fields of `metrics` that [`contact`] needs, their times as `now` minus their age.
    pub fn of(metrics: &openraft::RaftMetrics<TypeConfig>, now: Instant) -> Self {
        let std = |at: &SerdeInstantOf<TypeConfig>| {
            now.checked_sub(openraft::Instant::elapsed(&**at))
                .unwrap_or(now)
        };
        Self {
            id: metrics.id,
            leading: metrics.state == ServerState::Leader,
            leader: metrics.current_leader,
            voters: metrics.membership_config.membership().voter_ids().collect(),
            quorum_acked: metrics.last_quorum_acked.as_ref().map(std),
            own_clock: metrics
                .heartbeat
                .as_ref()
                .and_then(|h| h.get(&metrics.id).copied().flatten())
                .as_ref()
                .map(std),
        }
    }
}

/// Word of a quorum at `now` (module doc).
pub fn contact(seen: &Seen, heard: &Heard, now: Instant) -> Contact {
    let since = |at: Instant| now.saturating_duration_since(at);
    if seen.leading {
        if seen.voters == [seen.id] {
            return Contact::Unjudged;
        }
        // openraft sets the leader's own clock at its election: before any acknowledgement, the
        // silence counts from then.
        return match seen.quorum_acked.or(seen.own_clock) {
            Some(at) => Contact::Leading { silent: since(at) },
            None => Contact::Unjudged,
        };
    }
    match seen.leader {
        Some(leader) if leader != seen.id => Contact::Following {
            leader,
            silent: heard.silence(leader, now),
        },
        _ => Contact::Unjudged,
    }
}

#[cfg(test)]
#[path = "contact_test.rs"]
mod tests;
