//! The seam between the replicated log and the application: a deterministic state machine.

use std::io::{self, Read, Write};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Writes the snapshot of a state captured by [`StateMachine::freeze`], after the apply lock is
/// released; it must write the bytes [`StateMachine::snapshot_to`] would have written.
pub type FrozenState = Box<dyn FnOnce(&mut dyn Write) -> io::Result<()> + Send>;

/// An application state that every server rebuilds identically from the log.
///
/// `apply` must be deterministic: the same commands at the same times give the same state and
/// the same snapshot bytes on every server. It must not read a clock or do I/O.
///
/// Snapshots are streams: [`StateMachine::snapshot_to`] writes the state into a writer that
/// cuts it into checksummed chunks of a file, and [`StateMachine::restore_from`] reads it back
/// from a reader that verifies them, so no snapshot is ever held as one buffer or decoded under
/// the transport's frame cap. A state may be up to [`crate::codec::MAX_SNAPSHOT_BYTES`];
/// [`crate::codec::encode_into`] and [`crate::codec::decode_from`] implement both methods for a
/// serde state.
pub trait StateMachine: Default + Send + Sync + 'static {
    /// A command carried in the log.
    type Command: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The answer to a command, returned to whoever proposed it.
    type Response: Serialize + DeserializeOwned + Send + Sync + 'static;

    /// Applies one committed command at the leader-stamped time `at_ms` (monotonic).
    fn apply(&mut self, command: Self::Command, at_ms: u64) -> Self::Response;

    /// Writes the whole state for a snapshot into `out` (buffered and chunked by the caller).
    fn snapshot_to(&self, out: &mut dyn Write) -> io::Result<()>;

    /// Captures the state cheaply (a clone, a copy-on-write view) so that its snapshot is written
    /// after the apply lock is released: applying then stalls only for the capture, not for the
    /// serialization and the disk writes. `None` (the default) writes the snapshot with
    /// [`StateMachine::snapshot_to`] under the lock.
    fn freeze(&self) -> Option<FrozenState> {
        None
    }

    /// Rebuilds the state from what [`StateMachine::snapshot_to`] wrote; it must read exactly
    /// those bytes (the caller refuses a snapshot whose state is left partly unread).
    fn restore_from(input: &mut dyn Read) -> Result<Self, String>;
}
