//! The internal transport: bincode frames over Noise-encrypted TCP sessions, no gRPC.
//!
//! Wire protocol, per connection: a Noise `NNpsk0` handshake keyed by the cluster secret, in
//! which each side states its server id ([`noise`]); then the client sends [`RpcRequest`] frames
//! and reads one [`RpcResponse`] frame for each, every frame encrypted and authenticated with
//! the session's keys ([`sealed`]). A frame's length is checked against the cap before its body
//! is read. Unauthenticated connections are capped and their refusals summarised
//! ([`admission`]). A snapshot travels as a stream of bounded chunks, one in flight per peer,
//! into the receiver's [`inbox`], and is installed only once complete and its checksum verifies.

pub mod admission;
pub mod client;
pub mod fault;
pub mod frame;
pub mod heard;
pub mod inbox;
pub mod noise;
pub mod overtaken;
pub mod rpc_target;
pub mod sealed;
pub mod server;
pub mod standing;

use serde::{Deserialize, Serialize};

use crate::types::{Member, NodeId, Reply, TypeConfig};

/// A request a client (a follower or a peer's raft core) sends to a server.
#[derive(Debug, Serialize, Deserialize)]
pub enum RpcRequest {
    /// openraft: append entries / heartbeat.
    AppendEntries(openraft::raft::AppendEntriesRequest<TypeConfig>),
    /// openraft: request a vote.
    Vote(openraft::raft::VoteRequest<TypeConfig>),
    /// openraft: pre-vote (does not disturb the current leader).
    PreVote(openraft::raft::VoteRequest<TypeConfig>),
    /// openraft: install a whole snapshot (vote, meta, bytes) sent in one frame. Sent by versions
    /// before [`RpcRequest::SnapshotChunk`]; still accepted (snapshots under the frame cap).
    FullSnapshot {
        /// The sender's vote.
        vote: openraft::type_config::alias::VoteOf<TypeConfig>,
        /// What the snapshot covers.
        meta: openraft::type_config::alias::SnapshotMetaOf<TypeConfig>,
        /// The snapshot bytes (one byte string, as [`crate::types::Proposal::command`]).
        #[serde(with = "crate::codec::bytes")]
        data: Vec<u8>,
    },
    /// openraft: the leader hands leadership to the receiver.
    TransferLeader(openraft::raft::TransferLeaderRequest<TypeConfig>),
    /// An application request forwarded by a follower to the leader.
    Client(ClientRequest),
    /// Part of a snapshot file streamed by the leader: bytes `offset..offset + data.len()` of
    /// `total`. Answered with [`RpcResponse::SnapshotChunk`].
    SnapshotChunk {
        /// The sender's vote.
        vote: openraft::type_config::alias::VoteOf<TypeConfig>,
        /// The sender's random id of this transfer.
        transfer: u64,
        /// The whole file's length.
        total: u64,
        /// Where `data` starts in the file.
        offset: u64,
        /// At most [`inbox::MAX_SNAPSHOT_CHUNK_BYTES`] bytes (one byte string, as
        /// [`crate::types::Proposal::command`]).
        #[serde(with = "crate::codec::bytes")]
        data: Vec<u8>,
    },
    /// The end of a streamed snapshot: install it if all `total` bytes arrived with this CRC32.
    /// Answered like [`RpcRequest::FullSnapshot`].
    SnapshotDone {
        /// The sender's vote.
        vote: openraft::type_config::alias::VoteOf<TypeConfig>,
        /// The transfer's id.
        transfer: u64,
        /// What the snapshot covers.
        meta: openraft::type_config::alias::SnapshotMetaOf<TypeConfig>,
        /// The whole file's length.
        total: u64,
        /// CRC32 of the whole file.
        crc32: u32,
    },
}

/// A server's answer to one [`RpcRequest`].
#[derive(Debug, Serialize, Deserialize)]
pub enum RpcResponse {
    /// Answer to [`RpcRequest::AppendEntries`].
    AppendEntries(openraft::raft::AppendEntriesResponse<TypeConfig>),
    /// Answer to [`RpcRequest::Vote`] and [`RpcRequest::PreVote`].
    Vote(openraft::raft::VoteResponse<TypeConfig>),
    /// Answer to [`RpcRequest::FullSnapshot`].
    Snapshot(openraft::raft::SnapshotResponse<TypeConfig>),
    /// Answer to [`RpcRequest::TransferLeader`]: accepted, or why the target refused it.
    TransferLeader(openraft::raft::TransferLeaderResponse<TypeConfig>),
    /// Answer to [`RpcRequest::Client`].
    Client(Result<ClientResponse, ClientError>),
    /// The raft core refused the RPC (shutting down, or a fatal error); the message says why.
    RaftError(String),
    /// Answer to [`RpcRequest::SnapshotChunk`]: how many bytes of the transfer arrived so far.
    SnapshotChunk {
        /// Bytes received, from the start of the file.
        received: u64,
    },
}

/// What a client of the cluster can ask the leader to do.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum ClientRequest {
    /// Propose an encoded application command; the leader stamps its time on it.
    Propose(#[serde(with = "crate::codec::bytes")] Vec<u8>),
    /// Add a server: as a learner first, then as a voter once it has caught up.
    AddMember {
        /// The new server's id.
        id: NodeId,
        /// Its addresses.
        member: Member,
    },
    /// Remove a server from the voters and the cluster.
    RemoveMember {
        /// The id of the server to remove.
        id: NodeId,
    },
    /// Confirm leadership and return the log index a linearizable read must wait for.
    ReadIndex,
}

/// The leader's answer to a [`ClientRequest`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum ClientResponse {
    /// The state machine's reply to [`ClientRequest::Propose`], and the log index it was applied at.
    Applied {
        /// The proposal's log index.
        index: u64,
        /// What the state machine answered.
        reply: Reply,
    },
    /// The membership change is committed.
    MembershipChanged,
    /// Reads are linearizable once this index is applied locally.
    ReadIndex(u64),
}

/// Why a forwarded client request failed. Travels over the wire, so it is plain data.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// No leader is known (an election is in progress); retry shortly.
    #[error("no leader is known yet")]
    NoLeader,
    /// The receiver is not the leader; `leader` is who it believes leads.
    #[error("server is not the leader (leader is {leader:?})")]
    NotLeader {
        /// The believed leader, if any.
        leader: Option<(NodeId, Member)>,
    },
    /// The request was invalid (e.g. removing an unknown member).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The leader failed to carry it out (storage error, shutdown, timeout).
    #[error("leader failed: {0}")]
    Failed(String),
    /// The leader could not hear from a quorum (a partition, or most servers down); retry.
    #[error("no quorum: {0}")]
    NoQuorum(String),
}

/// What the transport's server calls for [`RpcRequest::Client`]: implemented by [`crate::RaftNode`].
pub trait ClientHandler: Send + Sync + 'static {
    /// Carries out `request` on this server as leader (never forwards again).
    fn handle(
        &self,
        request: ClientRequest,
    ) -> futures::future::BoxFuture<'static, Result<ClientResponse, ClientError>>;
}
