//! The one answer, on the leader side, to "does this server lead?": the supervisor owns it, and its
//! parts and timers ask it instead of keeping a flag of their own.

/// Whether this server leads, as the leader's actors see it. Raft decides (the server's watcher in
/// `node/src/leader.rs` reads raft's state and caches nothing); the supervisor holds the one copy,
/// changed only by the [`Leadership`](super::messages::Leadership) message; children, report
/// routing, housekeeping and the liveness timer ask it through the supervisor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Role {
    leader: bool,
}

/// A change of [`Role`]: what the supervisor does about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// This server became leader: start the children from the applied state.
    Became,
    /// This server stopped leading: stop them all.
    SteppedDown,
}

impl Role {
    /// Whether this server leads now.
    pub fn is_leader(self) -> bool {
        self.leader
    }

    /// Raft says this server leads (`true`) or not: the change, if it is one (a repeated notice
    /// changes nothing).
    pub fn change(&mut self, leads: bool) -> Option<Change> {
        if self.leader == leads {
            return None;
        }
        self.leader = leads;
        Some(if leads {
            Change::Became
        } else {
            Change::SteppedDown
        })
    }
}

#[cfg(test)]
#[path = "leadership_test.rs"]
mod tests;
