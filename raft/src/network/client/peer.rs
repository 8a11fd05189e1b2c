//! openraft's client for one peer ([`PeerClient`]): each raft RPC under its deadline, transport
//! failures mapped to openraft's `Timeout`, `Unreachable` (back off) or `Network` errors.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use openraft::error::{
    NetworkError, RPCError, ReplicationClosed, StreamingError, Timeout, Unreachable,
};
use openraft::network::{Backoff, RPCOption, RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, TransferLeaderRequest,
    TransferLeaderResponse, VoteRequest, VoteResponse,
};
use openraft::type_config::alias::{SnapshotOf, VoteOf};
use openraft::{OptionalSend, RPCTypes};

use super::reversion::{Sent, Verdict};
use super::{kind, Network, SnapshotBytes, TransportError};
use crate::network::frame::FrameError;
use crate::network::standing::Trouble;
use crate::network::{RpcRequest, RpcResponse};
use crate::types::{NodeId, TypeConfig};

/// What kind of openraft error a transport failure is.
pub(super) enum Failure {
    Timeout(Duration),
    Unreachable(TransportError),
    Network(TransportError),
}

impl From<TransportError> for Failure {
    fn from(e: TransportError) -> Self {
        match e {
            TransportError::Timeout { after, .. } => Failure::Timeout(after),
            // A garbled or mismatched answer: retrying at once is reasonable.
            TransportError::UnexpectedResponse { .. }
            | TransportError::Frame {
                source: FrameError::Codec(_) | FrameError::TooLarge { .. },
                ..
            } => Failure::Network(e),
            // Refused, reset, closed, unauthenticated, shutting down or partitioned: back off.
            _ => Failure::Unreachable(e),
        }
    }
}

/// openraft's client for one peer, made by [`Network::new_client`].
pub struct PeerClient<D = Vec<u8>> {
    pub(super) net: Network<D>,
    pub(super) target: NodeId,
    pub(super) addr: String,
}

impl<D> fmt::Debug for PeerClient<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeerClient")
            .field("target", &self.target)
            .field("addr", &self.addr)
            .finish()
    }
}

impl<D> PeerClient<D> {
    pub(super) async fn call(
        &self,
        req: RpcRequest,
        ttl: Duration,
    ) -> Result<RpcResponse, Failure> {
        match self.net.call(&self.addr, self.target, &req, ttl).await? {
            RpcResponse::RaftError(reason) => Err(Failure::Unreachable(TransportError::Remote {
                addr: self.addr.clone(),
                reason,
            })),
            resp => Ok(resp),
        }
    }

    pub(super) fn unexpected(&self, expected: &'static str, got: &RpcResponse) -> Failure {
        Failure::Network(TransportError::UnexpectedResponse {
            addr: self.addr.clone(),
            expected,
            got: kind(got),
        })
    }

    fn rpc_error(&self, action: RPCTypes, failure: Failure) -> RPCError<TypeConfig> {
        match failure {
            Failure::Timeout(timeout) => RPCError::Timeout(Timeout {
                action,
                id: self.net.inner.id,
                target: self.target,
                timeout,
            }),
            Failure::Unreachable(e) => RPCError::Unreachable(Unreachable::new(&e)),
            Failure::Network(e) => RPCError::Network(NetworkError::new(&e)),
        }
    }
}

impl<D> PeerClient<D> {
    /// The follower's log went backwards: refused, counted and reported (module `reversion`).
    fn reverted(&self, matched: u64, conflict: u64) -> Failure {
        let standing = &self.net.inner.standing;
        standing.reverted();
        let reason = format!(
            "follower {} at {} lost log entries it had acknowledged (it acknowledged up to index {matched}, now lacks index {conflict}): its log went backwards, so it is refused; restore its data dir or run `convoy cluster replace-member {}`",
            self.target, self.addr, self.target
        );
        standing.trouble(self.target, Trouble::WeRefuse, &reason);
        Failure::Unreachable(TransportError::Local {
            addr: self.addr.clone(),
            reason,
        })
    }

    /// A failure on this side (reading the snapshot), reported to openraft as a network error.
    pub(super) fn local_failure(&self, reason: String) -> Failure {
        Failure::Network(TransportError::Local {
            addr: self.addr.clone(),
            reason,
        })
    }

    async fn vote_like(
        &self,
        req: RpcRequest,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        let result = match self.call(req, option.soft_ttl()).await {
            Ok(RpcResponse::Vote(resp)) => return Ok(resp),
            Ok(other) => self.unexpected("Vote", &other),
            Err(failure) => failure,
        };
        Err(self.rpc_error(RPCTypes::Vote, result))
    }
}

impl<D: SnapshotBytes> RaftNetworkV2<TypeConfig> for PeerClient<D> {
    type SnapshotData = D;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        let sent = Sent::of(&rpc);
        let failure = match self
            .call(
                RpcRequest::AppendEntries(rpc),
                option
                    .soft_ttl()
                    .max(self.net.inner.config.append_timeout_floor),
            )
            .await
        {
            Ok(RpcResponse::AppendEntries(resp)) => {
                let verdict =
                    self.net
                        .inner
                        .matched
                        .lock()
                        .unwrap()
                        .judge(self.target, &sent, &resp);
                match verdict {
                    Verdict::Pass => return Ok(resp),
                    Verdict::Reverted { matched, conflict } => self.reverted(matched, conflict),
                }
            }
            Ok(other) => self.unexpected("AppendEntries", &other),
            Err(failure) => failure,
        };
        Err(self.rpc_error(RPCTypes::AppendEntries, failure))
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.vote_like(RpcRequest::Vote(rpc), option).await
    }

    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.vote_like(RpcRequest::PreVote(rpc), option).await
    }

    /// Streams the snapshot in chunks of [`NetworkConfig::snapshot_chunk_bytes`], each sent
    /// after the previous one was acknowledged, then asks the peer to install it.
    async fn full_snapshot(
        &mut self,
        vote: VoteOf<TypeConfig>,
        snapshot: SnapshotOf<TypeConfig, D>,
        cancel: impl Future<Output = ReplicationClosed> + OptionalSend + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let failure = tokio::select! {
            closed = cancel => return Err(StreamingError::Closed(closed)),
            result = self.stream_snapshot(vote, snapshot, option.soft_ttl()) => match result {
                Ok(resp) => return Ok(resp),
                Err(failure) => failure,
            },
        };
        Err(self.rpc_error(RPCTypes::InstallSnapshot, failure).into())
    }

    async fn transfer_leader(
        &mut self,
        req: TransferLeaderRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<TransferLeaderResponse<TypeConfig>, RPCError<TypeConfig>> {
        let failure = match self
            .call(RpcRequest::TransferLeader(req), option.soft_ttl())
            .await
        {
            Ok(RpcResponse::TransferLeader(resp)) => return Ok(resp),
            Ok(other) => self.unexpected("TransferLeader", &other),
            Err(failure) => failure,
        };
        Err(self.rpc_error(RPCTypes::TransferLeader, failure))
    }

    fn backoff(&self) -> Option<Backoff> {
        let (min, max) = (
            self.net.inner.config.backoff_min,
            self.net.inner.config.backoff_max,
        );
        Some(Backoff::new(std::iter::successors(Some(min), move |d| {
            Some((*d * 2).min(max))
        })))
    }
}
