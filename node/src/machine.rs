//! The deployment engine plugged into the replicated log as its state machine.

use convoy_actors::domain::{ClusterState, Command, DomainError, Outcome, Response};
use std::io::{self, Read, Write};
use std::sync::{Mutex, PoisonError};

use convoy_raft::{codec, FrozenState, StateMachine};

/// The replicated state: the domain's [`ClusterState`], applied identically on every server, and
/// (local to this server, never replicated) what the applies since the leader's actors last looked
/// changed for them.
#[derive(Debug, Default)]
pub struct Machine {
    state: ClusterState,
    /// The merged [`Outcome`] of the applies not yet taken by [`Machine::take_outcome`].
    pending: Mutex<Outcome>,
    /// The latest leader-stamped `at` applied here (0 before the first apply since start or restore).
    leader_ms: u64,
}

impl Machine {
    /// A machine holding `state`, as restored from a snapshot of it: nothing pending but a re-sync, no
    /// leader time seen yet.
    pub fn from_state(state: ClusterState) -> Machine {
        Machine {
            state,
            pending: Mutex::new(Outcome::resync()),
            leader_ms: 0,
        }
    }

    /// The domain state, for reads.
    pub fn state(&self) -> &ClusterState {
        &self.state
    }

    /// The leader's clock as this server last saw it: the latest `at` it applied (ms since the epoch).
    pub fn leader_ms(&self) -> u64 {
        self.leader_ms
    }

    /// What the applies since the last call changed for the leader's actors (a re-sync after a
    /// snapshot replaced the state, or when too much changed to list).
    pub fn take_outcome(&self) -> Outcome {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl StateMachine for Machine {
    type Command = Command;
    /// A refusal travels back through the log to the proposer as the domain's own typed error.
    type Response = Result<Response, DomainError>;

    fn apply(&mut self, command: Command, at_ms: u64) -> Self::Response {
        self.leader_ms = self.leader_ms.max(at_ms);
        let (response, outcome) = self.state.apply_with_outcome(command, at_ms)?;
        for notice in outcome.notices() {
            // A weak subscription's brake held a version back (DEPLOYMENTS.md §4): every server says so.
            tracing::warn!(at_ms, "{notice}");
        }
        if !outcome.is_empty() {
            let pending = self
                .pending
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner);
            pending.merge(outcome);
        }
        Ok(response)
    }

    /// Streams the same bytes as [`ClusterState::snapshot_bytes`] (bincode, standard config).
    fn snapshot_to(&self, out: &mut dyn Write) -> io::Result<()> {
        codec::encode_into(&self.state, out)
            .map(drop)
            .map_err(io::Error::other)
    }

    /// Clones the state: every map and large vector in it is copy-on-write (`CowMap`, `ChunkedVec`), so the
    /// clone costs one pointer per group of chunks, and the snapshot is serialized from it after the apply lock is
    /// released.
    fn freeze(&self) -> Option<FrozenState> {
        let state = self.state.clone();
        Some(Box::new(move |out: &mut dyn Write| {
            codec::encode_into(&state, out)
                .map(drop)
                .map_err(io::Error::other)
        }))
    }

    /// Reads what [`Machine::snapshot_to`] wrote, up to [`codec::MAX_SNAPSHOT_BYTES`].
    fn restore_from(input: &mut dyn Read) -> Result<Self, String> {
        codec::decode_from(input)
            .map(Machine::from_state)
            .map_err(|e| e.to_string())
    }
}
