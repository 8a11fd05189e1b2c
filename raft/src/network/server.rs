//! The server side of the transport: accept, authenticate, then answer one frame with one frame.
//!
//! One task per connection, at most [`ServerConfig::max_connections`] at a time. A failed
//! handshake, a frame that is oversized, truncated or fails to decode, or an idle connection
//! closes that connection only (logged with the peer address); the accept loop and the other
//! connections carry on. Raft RPCs go to a [`RaftRpcTarget`] (openraft's `Raft` handle in
//! production), forwarded client requests to a [`ClientHandler`].

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, TransferLeaderRequest,
    TransferLeaderResponse, VoteRequest, VoteResponse,
};
use openraft::storage::RaftStateMachine;
use openraft::type_config::alias::{SnapshotMetaOf, SnapshotOf, VoteOf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio::task::{JoinHandle, JoinSet};
use tracing::{debug, error, warn};

use super::auth;
use super::client::SnapshotBytes;
use super::frame::{read_frame, write_frame, FrameError, MAX_FRAME_BYTES};
use super::{ClientHandler, RpcRequest, RpcResponse};
use crate::types::TypeConfig;

/// The raft core as the server sees it: where incoming raft RPCs are delivered.
///
/// Implemented for openraft's `Raft` handle; tests implement it with a stub. Errors are the
/// core's refusal (shutting down, fatal error) as text, sent back as [`RpcResponse::RaftError`].
pub trait RaftRpcTarget: Send + Sync + 'static {
    /// Handles AppendEntries (and heartbeats).
    fn append_entries(
        &self,
        rpc: AppendEntriesRequest<TypeConfig>,
    ) -> impl Future<Output = Result<AppendEntriesResponse<TypeConfig>, String>> + Send;

    /// Handles RequestVote.
    fn vote(
        &self,
        rpc: VoteRequest<TypeConfig>,
    ) -> impl Future<Output = Result<VoteResponse<TypeConfig>, String>> + Send;

    /// Handles Pre-Vote: would this node grant the vote? Changes nothing.
    fn pre_vote(
        &self,
        rpc: VoteRequest<TypeConfig>,
    ) -> impl Future<Output = Result<VoteResponse<TypeConfig>, String>> + Send;

    /// Installs a whole snapshot sent by the leader with `vote`.
    fn install_full_snapshot(
        &self,
        vote: VoteOf<TypeConfig>,
        meta: SnapshotMetaOf<TypeConfig>,
        data: Vec<u8>,
    ) -> impl Future<Output = Result<SnapshotResponse<TypeConfig>, String>> + Send;

    /// Handles the leader's request that this node take over leadership.
    fn transfer_leader(
        &self,
        req: TransferLeaderRequest<TypeConfig>,
    ) -> impl Future<Output = Result<TransferLeaderResponse<TypeConfig>, String>> + Send;
}

impl<SM> RaftRpcTarget for openraft::Raft<TypeConfig, SM>
where
    SM: RaftStateMachine<TypeConfig>,
    SM::SnapshotData: SnapshotBytes,
{
    async fn append_entries(
        &self,
        rpc: AppendEntriesRequest<TypeConfig>,
    ) -> Result<AppendEntriesResponse<TypeConfig>, String> {
        openraft::Raft::append_entries(self, rpc)
            .await
            .map_err(|e| e.to_string())
    }

    async fn vote(&self, rpc: VoteRequest<TypeConfig>) -> Result<VoteResponse<TypeConfig>, String> {
        openraft::Raft::vote(self, rpc)
            .await
            .map_err(|e| e.to_string())
    }

    async fn pre_vote(
        &self,
        rpc: VoteRequest<TypeConfig>,
    ) -> Result<VoteResponse<TypeConfig>, String> {
        openraft::Raft::pre_vote(self, rpc)
            .await
            .map_err(|e| e.to_string())
    }

    async fn install_full_snapshot(
        &self,
        vote: VoteOf<TypeConfig>,
        meta: SnapshotMetaOf<TypeConfig>,
        data: Vec<u8>,
    ) -> Result<SnapshotResponse<TypeConfig>, String> {
        let snapshot: SnapshotOf<TypeConfig, SM::SnapshotData> = openraft::Snapshot {
            meta,
            snapshot: SM::SnapshotData::from_snapshot_bytes(data),
        };
        openraft::Raft::install_full_snapshot(self, vote, snapshot)
            .await
            .map_err(|e| e.to_string())
    }

    async fn transfer_leader(
        &self,
        req: TransferLeaderRequest<TypeConfig>,
    ) -> Result<TransferLeaderResponse<TypeConfig>, String> {
        self.handle_transfer_leader(req)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Limits of the server side.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Connections served at once; further ones are accepted and closed at once (logged).
    pub max_connections: usize,
    /// Longest wait for the next request on a connection before closing it.
    pub idle_timeout: Duration,
    /// Longest a client may take to authenticate.
    pub handshake_timeout: Duration,
    /// Longest a response may take to be written (a peer that stops reading is dropped).
    pub write_timeout: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_connections: 256,
            idle_timeout: Duration::from_secs(60),
            handshake_timeout: auth::DEFAULT_HANDSHAKE_TIMEOUT,
            write_timeout: Duration::from_secs(30),
        }
    }
}

/// A transport server running in its own task; stopped by [`TransportServer::stop`] or on drop.
#[derive(Debug)]
pub struct TransportServer {
    local_addr: Option<SocketAddr>,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl TransportServer {
    /// Spawns [`serve`] on `listener` with [`ServerConfig::default`].
    pub fn spawn<R: RaftRpcTarget>(
        listener: TcpListener,
        raft: R,
        secret: Arc<Vec<u8>>,
        handler: Arc<dyn ClientHandler>,
    ) -> Self {
        Self::spawn_with(listener, raft, secret, handler, ServerConfig::default())
    }

    /// Spawns [`serve_with`] on `listener` with `config`.
    pub fn spawn_with<R: RaftRpcTarget>(
        listener: TcpListener,
        raft: R,
        secret: Arc<Vec<u8>>,
        handler: Arc<dyn ClientHandler>,
        config: ServerConfig,
    ) -> Self {
        let local_addr = listener.local_addr().ok();
        let (stop, mut stopped) = watch::channel(false);
        let shutdown = async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        };
        let task = tokio::spawn(serve_with(
            listener, raft, secret, handler, config, shutdown,
        ));
        Self {
            local_addr,
            stop,
            task: Some(task),
        }
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr
    }

    /// Stops accepting and closes every connection (in the background); idempotent.
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }

    /// Stops the server and waits until its task has ended.
    pub async fn shutdown(mut self) {
        self.stop();
        if let Some(task) = self.task.take() {
            if let Err(e) = task.await {
                error!(error = %e, "transport: server task failed");
            }
        }
    }
}

impl Drop for TransportServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Serves the transport on `listener` with [`ServerConfig::default`] until `shutdown` completes.
///
/// See [`serve_with`].
pub async fn serve<R: RaftRpcTarget>(
    listener: TcpListener,
    raft: R,
    secret: Arc<Vec<u8>>,
    handler: Arc<dyn ClientHandler>,
    shutdown: impl Future<Output = ()> + Send,
) {
    serve_with(
        listener,
        raft,
        secret,
        handler,
        ServerConfig::default(),
        shutdown,
    )
    .await
}

/// Serves the transport on `listener` until `shutdown` completes, then closes every connection.
///
/// Never returns early and never panics on bad input: accept errors are logged and retried after
/// a short pause, misbehaving connections are closed one by one.
pub async fn serve_with<R: RaftRpcTarget>(
    listener: TcpListener,
    raft: R,
    secret: Arc<Vec<u8>>,
    handler: Arc<dyn ClientHandler>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) {
    let raft = Arc::new(raft);
    let config = Arc::new(config);
    let permits = Arc::new(Semaphore::new(config.max_connections));
    let mut connections = JoinSet::new();
    let local = listener.local_addr().ok();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            Some(joined) = connections.join_next(), if !connections.is_empty() => {
                if let Err(e) = joined {
                    if e.is_panic() {
                        error!(error = %e, "transport: connection task panicked");
                    }
                }
            }
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Typically out of file descriptors: pause rather than spin.
                        warn!(error = %e, ?local, "transport: accept failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    warn!(%peer, max = config.max_connections, "transport: too many connections, closing new one");
                    continue;
                };
                let (raft, secret, handler, config) =
                    (raft.clone(), secret.clone(), handler.clone(), config.clone());
                connections.spawn(async move {
                    serve_connection(stream, peer, &*raft, &secret, &*handler, &config).await;
                    drop(permit);
                });
            }
        }
    }
    debug!(?local, open = connections.len(), "transport: shutting down");
    connections.shutdown().await;
}

/// Authenticates one connection, then answers its requests until it closes or misbehaves.
async fn serve_connection<R: RaftRpcTarget>(
    mut stream: TcpStream,
    peer: SocketAddr,
    raft: &R,
    secret: &[u8],
    handler: &dyn ClientHandler,
    config: &ServerConfig,
) {
    let _ = stream.set_nodelay(true);
    if let Err(e) = auth::server_handshake(&mut stream, secret, config.handshake_timeout).await {
        warn!(%peer, error = %e, "transport: handshake failed, closing connection");
        return;
    }
    debug!(%peer, "transport: peer authenticated");
    loop {
        let next = tokio::time::timeout(
            config.idle_timeout,
            read_frame::<RpcRequest, _>(&mut stream, MAX_FRAME_BYTES),
        )
        .await;
        let request = match next {
            Err(_) => {
                debug!(%peer, idle = ?config.idle_timeout, "transport: idle connection closed");
                return;
            }
            Ok(Err(FrameError::Closed)) => {
                debug!(%peer, "transport: peer closed connection");
                return;
            }
            Ok(Err(e)) => {
                warn!(%peer, error = %e, "transport: bad frame, closing connection");
                return;
            }
            Ok(Ok(request)) => request,
        };
        let response = dispatch(raft, handler, request).await;
        match tokio::time::timeout(config.write_timeout, write_frame(&mut stream, &response)).await
        {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                warn!(%peer, error = %e, "transport: cannot send response, closing connection");
                return;
            }
            Err(_) => {
                warn!(%peer, after = ?config.write_timeout, "transport: response write timed out, closing connection");
                return;
            }
        }
    }
}

/// Hands one request to the raft core or the client handler and wraps the answer.
async fn dispatch<R: RaftRpcTarget>(
    raft: &R,
    handler: &dyn ClientHandler,
    request: RpcRequest,
) -> RpcResponse {
    let refused = RpcResponse::RaftError;
    match request {
        RpcRequest::AppendEntries(rpc) => raft
            .append_entries(rpc)
            .await
            .map_or_else(refused, RpcResponse::AppendEntries),
        RpcRequest::Vote(rpc) => raft.vote(rpc).await.map_or_else(refused, RpcResponse::Vote),
        RpcRequest::PreVote(rpc) => raft
            .pre_vote(rpc)
            .await
            .map_or_else(refused, RpcResponse::Vote),
        RpcRequest::FullSnapshot { vote, meta, data } => raft
            .install_full_snapshot(vote, meta, data)
            .await
            .map_or_else(refused, RpcResponse::Snapshot),
        RpcRequest::TransferLeader(req) => raft
            .transfer_leader(req)
            .await
            .map_or_else(refused, RpcResponse::TransferLeader),
        RpcRequest::Client(req) => RpcResponse::Client(handler.handle(req).await),
    }
}
