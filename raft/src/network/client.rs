//! The client side of the transport: openraft's network factory and per-peer clients over pooled,
//! Noise-encrypted TCP sessions each bound to the server id it dialed, plus
//! [`Network::call_client`] for forwarding to the leader.
//!
//! Every RPC runs under one deadline covering connect, handshake, request and response. A
//! connection is returned to its peer's pool only after a complete exchange; any error drops it,
//! and the next call dials afresh. Connection failures map to openraft's `Unreachable` (so the
//! core backs off), deadlines to `Timeout`.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::future::Future;
use std::io::{self, Cursor, Read};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use openraft::error::{
    NetworkError, RPCError, ReplicationClosed, StreamingError, Timeout, Unreachable,
};
use openraft::network::{Backoff, RPCOption, RaftNetworkFactory, RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, TransferLeaderRequest,
    TransferLeaderResponse, VoteRequest, VoteResponse,
};
use openraft::type_config::alias::{SnapshotOf, VoteOf};
use openraft::{OptionalSend, RPCTypes};
use tokio::net::TcpStream;

use super::fault::{FaultAction, FaultPolicy, SharedFaultPolicy};
use super::frame::{FrameError, MAX_FRAME_BYTES};
use super::inbox::{DEFAULT_SNAPSHOT_CHUNK_BYTES, MAX_SNAPSHOT_CHUNK_BYTES};
use super::noise::{self, AuthError};
use super::sealed::Session;
use super::{ClientError, ClientRequest, ClientResponse, RpcRequest, RpcResponse};
use crate::types::{Member, NodeId, TypeConfig};

/// Snapshot data the transport can ship: read as a stream to send in chunks, rebuilt from the
/// complete file received (or, from older senders, from one frame's bytes).
///
/// The network's `SnapshotData` must equal the state machine's, so the transport is generic over
/// it; implemented for `Vec<u8>` and `Cursor<Vec<u8>>`.
pub trait SnapshotBytes: Send + Sync + 'static {
    /// Its length in bytes and a reader from its first byte, to send it chunk by chunk.
    fn into_snapshot_reader(self) -> (u64, Box<dyn Read + Send>);
    /// Rebuilds the snapshot data from bytes received in one frame.
    fn from_snapshot_bytes(bytes: Vec<u8>) -> Self;
    /// Rebuilds the snapshot data from a complete received file (positioned at its start).
    fn from_snapshot_file(file: File) -> io::Result<Self>
    where
        Self: Sized;
}

fn read_whole(mut file: File) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

impl SnapshotBytes for Vec<u8> {
    fn into_snapshot_reader(self) -> (u64, Box<dyn Read + Send>) {
        (self.len() as u64, Box::new(Cursor::new(self)))
    }
    fn from_snapshot_bytes(bytes: Vec<u8>) -> Self {
        bytes
    }
    fn from_snapshot_file(file: File) -> io::Result<Self> {
        read_whole(file)
    }
}

impl SnapshotBytes for Cursor<Vec<u8>> {
    fn into_snapshot_reader(self) -> (u64, Box<dyn Read + Send>) {
        self.into_inner().into_snapshot_reader()
    }
    fn from_snapshot_bytes(bytes: Vec<u8>) -> Self {
        Cursor::new(bytes)
    }
    fn from_snapshot_file(file: File) -> io::Result<Self> {
        read_whole(file).map(Cursor::new)
    }
}

/// Timeouts and pool sizes of the client side.
#[derive(Clone, Debug)]
pub struct NetworkConfig {
    /// Longest wait for a TCP connect (within the RPC's deadline).
    pub connect_timeout: Duration,
    /// Longest wait for the authentication handshake (within the RPC's deadline).
    pub handshake_timeout: Duration,
    /// The default deadline for forwarded client requests (see [`Network::client_timeout`]).
    pub client_timeout: Duration,
    /// At most this many idle connections are kept per peer address.
    pub max_idle_per_peer: usize,
    /// An idle pooled connection older than this is dropped rather than reused; keep it below
    /// the server's idle timeout so a reused connection is never one the server is closing.
    pub idle_expiry: Duration,
    /// First backoff openraft sleeps after an `Unreachable`; doubles up to `backoff_max`.
    pub backoff_min: Duration,
    /// Largest backoff between retries to an unreachable peer.
    pub backoff_max: Duration,
    /// The least time an AppendEntries may take. openraft allots it 3/4 of a heartbeat, which a
    /// follower applying a batch of big entries while catching up cannot meet: it would time out
    /// and be resent forever.
    pub append_timeout_floor: Duration,
    /// The size of the chunks a snapshot is streamed in (clamped to
    /// 1..=[`MAX_SNAPSHOT_CHUNK_BYTES`]); one chunk is in flight per peer. Lowered only by tests.
    pub snapshot_chunk_bytes: usize,
    /// The least time the receiver may take to verify and install a streamed snapshot once its
    /// last chunk arrived (restoring a large state takes seconds).
    pub snapshot_install_timeout: Duration,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(1),
            handshake_timeout: noise::DEFAULT_HANDSHAKE_TIMEOUT,
            client_timeout: Duration::from_secs(2),
            max_idle_per_peer: 64,
            idle_expiry: Duration::from_secs(30),
            backoff_min: Duration::from_millis(50),
            backoff_max: Duration::from_millis(500),
            append_timeout_floor: Duration::from_secs(1),
            snapshot_chunk_bytes: DEFAULT_SNAPSHOT_CHUNK_BYTES,
            snapshot_install_timeout: Duration::from_secs(120),
        }
    }
}

/// Why an RPC did not get an answer.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// TCP connect to `addr` failed or timed out.
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The peer address.
        addr: String,
        /// The socket error.
        source: std::io::Error,
    },
    /// The peer at `addr` failed authentication (wrong secret, wrong protocol, another server's
    /// id, silence).
    #[error("handshake with {addr} failed: {source}")]
    Handshake {
        /// The peer address.
        addr: String,
        /// Why.
        source: AuthError,
    },
    /// Sending the request or reading the response on the connection to `addr` failed.
    #[error("connection to {addr} failed: {source}")]
    Frame {
        /// The peer address.
        addr: String,
        /// Why.
        source: FrameError,
    },
    /// No answer from `addr` within the deadline.
    #[error("rpc to {addr} timed out after {after:?}")]
    Timeout {
        /// The peer address.
        addr: String,
        /// The deadline.
        after: Duration,
    },
    /// The raft core at `addr` refused the RPC (it is shutting down or failed).
    #[error("raft at {addr} refused the rpc: {reason}")]
    Remote {
        /// The peer address.
        addr: String,
        /// What the peer said.
        reason: String,
    },
    /// `addr` answered with a response of the wrong kind.
    #[error("{addr} answered {expected} with {got}")]
    UnexpectedResponse {
        /// The peer address.
        addr: String,
        /// The response kind expected.
        expected: &'static str,
        /// The response kind received.
        got: &'static str,
    },
    /// Preparing a request for `addr` failed on this side (e.g. reading the snapshot to send).
    #[error("cannot send to {addr}: {reason}")]
    Local {
        /// The peer address.
        addr: String,
        /// Why.
        reason: String,
    },
    /// The fault policy blocks traffic to node `target` at `addr`.
    #[error("rpc to node {target} at {addr} blocked by the fault policy")]
    Blocked {
        /// The peer address.
        addr: String,
        /// The blocked node.
        target: NodeId,
    },
}

impl TransportError {
    /// True when the RPC ran out of time (the request may or may not have been carried out).
    pub fn is_timeout(&self) -> bool {
        matches!(self, TransportError::Timeout { .. })
    }

    /// True when the request certainly never reached the peer's handler (connect refused or
    /// timed out, failed handshake, blocked by the fault policy): it is safe to retry.
    pub fn is_connect(&self) -> bool {
        matches!(
            self,
            TransportError::Connect { .. }
                | TransportError::Handshake { .. }
                | TransportError::Blocked { .. }
        )
    }
}

fn kind(resp: &RpcResponse) -> &'static str {
    match resp {
        RpcResponse::AppendEntries(_) => "AppendEntries",
        RpcResponse::Vote(_) => "Vote",
        RpcResponse::Snapshot(_) => "Snapshot",
        RpcResponse::TransferLeader(_) => "TransferLeader",
        RpcResponse::Client(_) => "Client",
        RpcResponse::RaftError(_) => "RaftError",
        RpcResponse::SnapshotChunk { .. } => "SnapshotChunk",
    }
}

/// An authenticated connection resting in the pool.
struct Conn {
    stream: TcpStream,
    session: Session,
    idle_since: Instant,
}

impl Conn {
    /// A cheap liveness probe: an idle connection must have nothing to read and not be at EOF.
    fn looks_alive(&self, expiry: Duration) -> bool {
        if self.idle_since.elapsed() >= expiry {
            return false;
        }
        let mut probe = [0u8; 1];
        matches!(self.stream.try_read(&mut probe), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    }
}

struct Inner {
    id: NodeId,
    secret: Arc<Vec<u8>>,
    config: NetworkConfig,
    /// Idle connections by the server id they authenticated and its address.
    pool: Mutex<HashMap<(NodeId, String), Vec<Conn>>>,
    faults: SharedFaultPolicy,
}

/// The transport's client side: openraft's [`RaftNetworkFactory`] and the forwarding client.
///
/// Cheap to clone; clones share the connection pool and the fault policy. `D` is the snapshot
/// data type of the state machine (see [`SnapshotBytes`]).
pub struct Network<D = Vec<u8>> {
    inner: Arc<Inner>,
    _snapshot: PhantomData<fn() -> D>,
}

impl<D> Clone for Network<D> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            _snapshot: PhantomData,
        }
    }
}

impl<D> fmt::Debug for Network<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network")
            .field("id", &self.inner.id)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl<D> Network<D> {
    /// A network authenticating with the cluster `secret`, with [`NetworkConfig::default`].
    ///
    /// Timeout errors handed to openraft name the local node as 0; use
    /// [`Network::with_config`] to give the real id.
    pub fn new(secret: Arc<Vec<u8>>) -> Self {
        Self::with_config(0, secret, NetworkConfig::default())
    }

    /// A network for node `id` authenticating with the cluster `secret`; no fault injected.
    pub fn with_config(id: NodeId, secret: Arc<Vec<u8>>, config: NetworkConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                id,
                secret,
                config,
                pool: Mutex::new(HashMap::new()),
                faults: Arc::new(RwLock::new(FaultPolicy::default())),
            }),
            _snapshot: PhantomData,
        }
    }

    /// The fault policy applied to every outgoing RPC; tests write rules into it.
    pub fn fault_policy(&self) -> SharedFaultPolicy {
        self.inner.faults.clone()
    }

    /// The configured default deadline for [`Network::call_client`].
    pub fn client_timeout(&self) -> Duration {
        self.inner.config.client_timeout
    }

    /// Forwards `req` to server `target` at raft address `addr` and returns its answer.
    ///
    /// The outer `Err` is a transport failure (the request may or may not have been carried out
    /// if it is a timeout; a peer proving another id than `target` is a handshake failure); the
    /// inner result is the leader's own answer.
    pub async fn call_client(
        &self,
        target: NodeId,
        addr: &str,
        req: ClientRequest,
        timeout: Duration,
    ) -> Result<Result<ClientResponse, ClientError>, TransportError> {
        match self
            .call(addr, target, &RpcRequest::Client(req), timeout)
            .await?
        {
            RpcResponse::Client(answer) => Ok(answer),
            RpcResponse::RaftError(reason) => Err(TransportError::Remote {
                addr: addr.to_string(),
                reason,
            }),
            other => Err(TransportError::UnexpectedResponse {
                addr: addr.to_string(),
                expected: "Client",
                got: kind(&other),
            }),
        }
    }

    /// Sends one request to server `target` at `addr` and reads its response, all within
    /// `timeout`.
    ///
    /// The session must prove `target`'s id. `target` also selects the fault rule to apply. A
    /// raft RPC the rule duplicates is sent twice on one connection and answered with the first
    /// response; client requests are never duplicated.
    pub async fn call(
        &self,
        addr: &str,
        target: NodeId,
        req: &RpcRequest,
        timeout: Duration,
    ) -> Result<RpcResponse, TransportError> {
        let action = self.inner.faults.read().unwrap().decide(target);
        // Duplication models a network repeating raft messages; a forwarded client request sent
        // twice would be a client retry (proposed twice), which is another experiment.
        let action = match (action, req) {
            (FaultAction::Duplicate(delay), RpcRequest::Client(_)) => FaultAction::Deliver(delay),
            (action, _) => action,
        };
        let exchange = async {
            let (delay, copies) = match action {
                FaultAction::Block => {
                    return Err(TransportError::Blocked {
                        addr: addr.to_string(),
                        target,
                    })
                }
                FaultAction::Drop => return std::future::pending().await,
                FaultAction::Deliver(delay) => (delay, 1),
                FaultAction::Duplicate(delay) => (delay, 2),
            };
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            let mut conn = self.checkout(target, addr).await?;
            let frame_err = |source| TransportError::Frame {
                addr: addr.to_string(),
                source,
            };
            let resp = exchange(&mut conn, req).await.map_err(frame_err)?;
            // A duplicate is the same frame again on the same connection; its answer is read (so
            // the connection stays in step) and discarded, as a retransmission's would be.
            for _ in 1..copies {
                exchange(&mut conn, req).await.map_err(frame_err)?;
            }
            self.checkin(target, addr, conn);
            Ok(resp)
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or_else(|_| {
                Err(TransportError::Timeout {
                    addr: addr.to_string(),
                    after: timeout,
                })
            })
    }

    /// Takes a live pooled connection to `target` at `addr`, or dials and authenticates a new
    /// one.
    async fn checkout(&self, target: NodeId, addr: &str) -> Result<Conn, TransportError> {
        let expiry = self.inner.config.idle_expiry;
        {
            let mut pool = self.inner.pool.lock().unwrap();
            if let Some(idle) = pool.get_mut(&(target, addr.to_string())) {
                while let Some(conn) = idle.pop() {
                    if conn.looks_alive(expiry) {
                        return Ok(conn);
                    }
                }
            }
        }
        let config = &self.inner.config;
        let connect_err = |source| TransportError::Connect {
            addr: addr.to_string(),
            source,
        };
        let mut stream = tokio::time::timeout(config.connect_timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| {
                connect_err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("connect timed out after {:?}", config.connect_timeout),
                ))
            })?
            .map_err(connect_err)?;
        let _ = stream.set_nodelay(true);
        let session = noise::client_handshake(
            &mut stream,
            &self.inner.secret,
            self.inner.id,
            target,
            config.handshake_timeout,
        )
        .await
        .map_err(|source| TransportError::Handshake {
            addr: addr.to_string(),
            source,
        })?;
        Ok(Conn {
            stream,
            session,
            idle_since: Instant::now(),
        })
    }

    /// Returns a connection after a complete exchange, if the pool has room.
    fn checkin(&self, target: NodeId, addr: &str, mut conn: Conn) {
        conn.idle_since = Instant::now();
        let mut pool = self.inner.pool.lock().unwrap();
        let idle = pool.entry((target, addr.to_string())).or_default();
        if idle.len() < self.inner.config.max_idle_per_peer {
            idle.push(conn);
        }
    }

    /// How many idle connections to `addr` are pooled (for tests and metrics).
    pub fn idle_connections(&self, addr: &str) -> usize {
        self.inner
            .pool
            .lock()
            .unwrap()
            .iter()
            .filter(|((_, a), _)| a == addr)
            .map(|(_, idle)| idle.len())
            .sum()
    }

    /// Drops every pooled connection (e.g. after the cluster secret changed).
    pub fn clear_pool(&self) {
        self.inner.pool.lock().unwrap().clear();
    }
}

impl<D: SnapshotBytes> RaftNetworkFactory<TypeConfig> for Network<D> {
    type Network = PeerClient<D>;

    async fn new_client(&mut self, target: NodeId, node: &Member) -> PeerClient<D> {
        PeerClient {
            net: self.clone(),
            target,
            addr: node.raft_addr.clone(),
        }
    }
}

/// Writes `req` on `conn` and reads the one response frame that answers it.
async fn exchange(conn: &mut Conn, req: &RpcRequest) -> Result<RpcResponse, FrameError> {
    conn.session.write(&mut conn.stream, req).await?;
    conn.session.read(&mut conn.stream, MAX_FRAME_BYTES).await
}

/// What kind of openraft error a transport failure is.
enum Failure {
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
    net: Network<D>,
    target: NodeId,
    addr: String,
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
    async fn call(&self, req: RpcRequest, ttl: Duration) -> Result<RpcResponse, Failure> {
        match self.net.call(&self.addr, self.target, &req, ttl).await? {
            RpcResponse::RaftError(reason) => Err(Failure::Unreachable(TransportError::Remote {
                addr: self.addr.clone(),
                reason,
            })),
            resp => Ok(resp),
        }
    }

    fn unexpected(&self, expected: &'static str, got: &RpcResponse) -> Failure {
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

    /// Sends `snapshot` as a stream of chunks (each under `ttl`), then its end; returns the
    /// peer's answer to the end. Never holds more than one chunk of it in memory.
    async fn stream_snapshot(
        &self,
        vote: VoteOf<TypeConfig>,
        snapshot: SnapshotOf<TypeConfig, D>,
        ttl: Duration,
    ) -> Result<SnapshotResponse<TypeConfig>, Failure>
    where
        D: SnapshotBytes,
    {
        let chunk_bytes = self
            .net
            .inner
            .config
            .snapshot_chunk_bytes
            .clamp(1, MAX_SNAPSHOT_CHUNK_BYTES);
        let (total, mut reader) = snapshot.snapshot.into_snapshot_reader();
        let transfer: u64 = rand::random();
        let mut crc = crc32fast::Hasher::new();
        let mut offset = 0u64;
        let started = Instant::now();
        loop {
            let want = usize::try_from(total - offset)
                .unwrap_or(usize::MAX)
                .min(chunk_bytes);
            let (back, data) = tokio::task::spawn_blocking(move || {
                let mut data = vec![0u8; want];
                let read = reader.read_exact(&mut data);
                (reader, read.map(|()| data))
            })
            .await
            .map_err(|e| self.local_failure(format!("snapshot reader task: {e}")))?;
            reader = back;
            let data = data.map_err(|e| {
                self.local_failure(format!("cannot read the snapshot at byte {offset}: {e}"))
            })?;
            crc.update(&data);
            let len = data.len() as u64;
            let req = RpcRequest::SnapshotChunk {
                vote,
                transfer,
                total,
                offset,
                data,
            };
            match self.call(req, ttl).await? {
                RpcResponse::SnapshotChunk { received } if received == offset + len => {}
                RpcResponse::SnapshotChunk { received } => {
                    return Err(self.local_failure(format!(
                        "snapshot chunk {offset}+{len} acknowledged as {received} bytes received"
                    )))
                }
                other => return Err(self.unexpected("SnapshotChunk", &other)),
            }
            offset += len;
            if offset >= total {
                break;
            }
        }
        let req = RpcRequest::SnapshotDone {
            vote,
            transfer,
            meta: snapshot.meta,
            total,
            crc32: crc.finalize(),
        };
        let install = ttl.max(self.net.inner.config.snapshot_install_timeout);
        match self.call(req, install).await? {
            RpcResponse::Snapshot(resp) => {
                let ms = started.elapsed().as_millis() as u64;
                tracing::info!(
                    target = self.target,
                    bytes = total,
                    chunk_bytes,
                    ms,
                    "sent a snapshot"
                );
                Ok(resp)
            }
            other => Err(self.unexpected("Snapshot", &other)),
        }
    }

    /// A failure on this side (reading the snapshot), reported to openraft as a network error.
    fn local_failure(&self, reason: String) -> Failure {
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
        let failure = match self
            .call(
                RpcRequest::AppendEntries(rpc),
                option
                    .soft_ttl()
                    .max(self.net.inner.config.append_timeout_floor),
            )
            .await
        {
            Ok(RpcResponse::AppendEntries(resp)) => return Ok(resp),
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
