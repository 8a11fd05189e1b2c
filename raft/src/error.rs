//! Errors of the replicated log as seen by its users.

use crate::network::ClientError;

/// What an operator does with a data dir that [`RaftError::Corrupt`] refuses (also part of
/// [`crate::log_store::StoreError::Corrupt`]'s message).
pub const REJOIN: &str = "stop this server, remove it from the cluster (`convoy cluster remove ID` on a healthy server), \
delete the directory (and the files in its log_wal_dir, if it has one), start this server again without bootstrapping, then add it back \
(`convoy cluster add ID --raft-addr A --http-addr B`); it catches up from the leader";

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
    /// The transport could not listen on this server's raft address (in use, not local, no
    /// permission).
    #[error("cannot listen on raft address {addr}: {reason}")]
    Listen {
        /// The address from `raft_addr`.
        addr: String,
        /// What the operating system said.
        reason: String,
    },
    /// The raft settings contradict each other (this server missing from `initial_cluster`,
    /// timeouts openraft refuses).
    #[error("invalid raft configuration: {0}")]
    Config(String),
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
    /// The data dir holds corrupt or foreign data (a damaged write-ahead log or SST, a truncated
    /// snapshot, a snapshot written for another data dir): the server refuses to start on it
    /// rather than silently drop acknowledged entries or the vote.
    #[error("data dir {path} is unusable: {what}: {reason}; wipe {path} and rejoin as a new member: {REJOIN}")]
    Corrupt {
        /// The data directory.
        path: String,
        /// What is damaged (`"raft log"`, `"snapshot file ..."`).
        what: String,
        /// What was found.
        reason: String,
    },
    /// The data dir's write-ahead log is kept in another directory than `log_wal_dir` names:
    /// opened there, RocksDB would start with an empty WAL and drop every entry not yet flushed.
    #[error("data dir {path} keeps its write-ahead log in {recorded}, but log_wal_dir is {configured}: \
set log_wal_dir to where the WAL is (recorded in {path}/convoy-wal-dir); to move it, stop the server, \
move the WAL's files and write the new path into both")]
    WalDirMismatch {
        /// The data directory.
        path: String,
        /// Where the data dir's WAL is, as recorded when the data dir was created.
        recorded: String,
        /// Where the configuration says it is.
        configured: String,
    },
    /// The raft core stopped (fatal error or shutdown).
    #[error("raft core stopped: {0}")]
    Stopped(String),
    /// The data dir's identity cannot be used (another server's or cluster's data dir).
    #[error(transparent)]
    Identity(#[from] crate::identity::IdentityError),
    /// An empty data dir with `initial_cluster_state = "new"` whose peers already know this
    /// server: its data was lost, and bootstrapping again would split the cluster.
    #[error("server {id} has an empty data dir but its peers know it: {refusal}. This server's data was lost; bootstrapping a new log would split the cluster. Restore its data dir from a backup, or run `convoy cluster replace-member {id}` against the cluster and start this server with initial_cluster_state = \"existing\"")]
    AlreadyBootstrapped {
        /// This server's id.
        id: crate::types::NodeId,
        /// What the peer said.
        refusal: crate::identity::Refusal,
    },
}
