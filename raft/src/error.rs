//! Errors of the replicated log as seen by its users.

use crate::network::ClientError;

/// Why a proposal, read or membership change did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum RaftError {
    /// No leader is known, even after waiting; the cluster may be electing or lack a quorum.
    #[error("no leader: {0}")]
    NoLeader(String),
    /// The leader refused or failed the request.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Forwarding to the leader at `addr` failed on the wire.
    #[error("cannot reach leader {leader} at {addr}: {reason}")]
    Unreachable {
        /// The leader's id.
        leader: u64,
        /// Its raft address.
        addr: String,
        /// What went wrong.
        reason: String,
    },
    /// Encoding or decoding a command or reply failed.
    #[error(transparent)]
    Codec(#[from] crate::codec::CodecError),
    /// Opening or using local storage failed.
    #[error("storage at {path}: {reason}")]
    Storage {
        /// The data directory.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The raft core stopped (fatal error or shutdown).
    #[error("raft core stopped: {0}")]
    Stopped(String),
}
