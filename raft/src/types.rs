//! The openraft type configuration shared by the log store, the transport and the node.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A server's id in the cluster.
pub type NodeId = u64;

/// What the cluster knows about a server: where its peers and its clients reach it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// Address of the internal bincode/TCP transport.
    pub raft_addr: String,
    /// Address of the HTTP API.
    pub http_addr: String,
}

impl fmt::Display for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "raft={} http={}", self.raft_addr, self.http_addr)
    }
}

/// One log entry's application payload: an encoded command stamped with the leader's clock.
///
/// The state machine store clamps `at_ms` so that applied times never go backwards, even across
/// leaders whose clocks differ a little.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposal {
    /// Milliseconds since the Unix epoch on the leader when it accepted the proposal.
    pub at_ms: u64,
    /// The command, encoded with [`crate::codec`]. One byte string ([`crate::codec::bytes`]): bincode writes
    /// the same bytes as for a sequence of `u8`s, but reads and writes them in one copy instead of
    /// one call per byte, which cost every entry of a large command several passes on each server.
    #[serde(with = "crate::codec::bytes")]
    pub command: Vec<u8>,
}

impl fmt::Display for Proposal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "proposal(at={}ms, {} bytes)",
            self.at_ms,
            self.command.len()
        )
    }
}

/// The state machine's answer to one proposal, encoded with [`crate::codec`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply(#[serde(with = "crate::codec::bytes")] pub Vec<u8>);

openraft::declare_raft_types!(
    /// convoy's openraft type configuration.
    pub TypeConfig:
        D = Proposal,
        R = Reply,
        NodeId = NodeId,
        Node = Member,
);

/// The bytes of a snapshot, as stored, sent and installed: `SnapshotData` of both the state
/// machine store and the network.
pub type SnapshotBytes = Vec<u8>;

/// Shorthand for openraft's Raft handle with convoy's types; `SM` is the state machine store.
pub type Raft<SM> = openraft::Raft<TypeConfig, SM>;

#[cfg(test)]
#[path = "types_test.rs"]
mod tests;
