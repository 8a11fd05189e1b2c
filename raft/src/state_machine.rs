//! The seam between the replicated log and the application: a deterministic state machine.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// An application state that every server rebuilds identically from the log.
///
/// `apply` must be deterministic: the same commands at the same times give the same state and
/// the same snapshot bytes on every server. It must not read a clock or do I/O.
pub trait StateMachine: Default + Send + Sync + 'static {
    /// A command carried in the log.
    type Command: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The answer to a command, returned to whoever proposed it.
    type Response: Serialize + DeserializeOwned + Send + Sync + 'static;

    /// Applies one committed command at the leader-stamped time `at_ms` (monotonic).
    fn apply(&mut self, command: Self::Command, at_ms: u64) -> Self::Response;

    /// Serializes the whole state for a snapshot.
    fn snapshot(&self) -> Vec<u8>;

    /// Rebuilds the state from [`StateMachine::snapshot`]'s bytes.
    fn restore(bytes: &[u8]) -> Result<Self, String>;
}
