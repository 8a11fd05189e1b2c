//! The server side of the transport: accept, authenticate, then answer one frame with one frame.
//!
//! One task per connection. Until its handshake succeeds a connection is *pending*: capped per
//! source address and overall ([`super::admission`]), dropped after
//! [`ServerConfig::handshake_timeout`], and when refused only counted, with one summary line per
//! [`ServerConfig::refusal_log_interval`]. Authenticated sessions are capped at
//! [`ServerConfig::max_connections`]; each is bound to the server id its peer proved, and a raft
//! RPC naming another sender is refused. A frame that fails to decrypt, is oversized, truncated
//! or fails to decode, or an idle session closes that session only (logged with the peer
//! address); the accept loop and the other connections carry on. Raft RPCs go to a
//! [`RaftRpcTarget`] (openraft's `Raft` handle in production), forwarded client requests to a
//! [`ClientHandler`]. Snapshot chunks are written to files by the server's [`Inbox`] (idle
//! transfers swept on the same tick as the refusal summary) and a complete, verified file is
//! handed to [`RaftRpcTarget::install_snapshot_file`].

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openraft::vote::RaftLeaderId;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch, Semaphore};
use tokio::task::{JoinHandle, JoinSet};
use tracing::{debug, error, warn};

use super::admission::{Pending, Refusal, RefusalLog, Ticket};
use super::frame::{FrameError, MAX_FRAME_BYTES};
use super::heard::Heard;
use super::inbox::{self, Inbox};
use super::noise::{self, AuthError};
use super::standing::{Standing, Trouble};
use super::{admission, ClientHandler, RpcRequest, RpcResponse};
use crate::failover::PeerClosed;
use crate::identity::{NoIdentity, PeerCheck};
use crate::types::NodeId;

pub use super::rpc_target::RaftRpcTarget;

/// Limits of the server side.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Authenticated sessions served at once; a session beyond this is closed right after its
    /// handshake (logged).
    pub max_connections: usize,
    /// Handshakes pending at once from all sources; when full, the oldest is dropped.
    pub max_pending_handshakes: usize,
    /// Handshakes pending at once from one source IP address; beyond it, that source's oldest
    /// is dropped.
    pub max_pending_per_ip: usize,
    /// At most one summary line about refused unauthenticated connections per interval.
    pub refusal_log_interval: Duration,
    /// Longest wait for the next request on a connection before closing it.
    pub idle_timeout: Duration,
    /// Longest a client may take to authenticate.
    pub handshake_timeout: Duration,
    /// Longest a response may take to be written (a peer that stops reading is dropped).
    pub write_timeout: Duration,
    /// Where snapshot chunks are written while a transfer is open; `None`: the system's
    /// temporary directory. A server puts them in its data dir's snapshot directory.
    pub snapshot_inbox: Option<PathBuf>,
    /// A snapshot transfer that receives no chunk for this long is dropped and its file removed.
    pub snapshot_transfer_idle: Duration,
    /// Told the peer's id when an authenticated session ends by the peer closing or resetting
    /// it (see [`crate::failover`]); not on idle timeouts or our own shutdown.
    pub peer_closed: Option<PeerClosed>,
    /// What this server states about itself and how it judges its peers in the handshake.
    pub identity: Arc<dyn PeerCheck>,
    /// Where peers' refusals and returns are recorded (shared with the client side).
    pub standing: Arc<Standing>,
    /// When each leading peer was last heard from (its AppendEntries and snapshot parts).
    pub heard: Arc<Heard>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_connections: 256,
            max_pending_handshakes: admission::DEFAULT_MAX_PENDING,
            max_pending_per_ip: admission::DEFAULT_MAX_PENDING_PER_IP,
            refusal_log_interval: admission::DEFAULT_REFUSAL_LOG_INTERVAL,
            idle_timeout: Duration::from_secs(60),
            handshake_timeout: noise::DEFAULT_HANDSHAKE_TIMEOUT,
            write_timeout: Duration::from_secs(30),
            snapshot_inbox: None,
            snapshot_transfer_idle: inbox::DEFAULT_TRANSFER_IDLE,
            peer_closed: None,
            identity: Arc::new(NoIdentity),
            standing: Arc::new(Standing::default()),
            heard: Arc::new(Heard::default()),
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
    /// Spawns [`serve`] on `listener` as server `id` with [`ServerConfig::default`].
    pub fn spawn<R: RaftRpcTarget>(
        listener: TcpListener,
        id: NodeId,
        raft: R,
        secret: Arc<Vec<u8>>,
        handler: Arc<dyn ClientHandler>,
    ) -> Self {
        Self::spawn_with(listener, id, raft, secret, handler, ServerConfig::default())
    }

    /// Spawns [`serve_with`] on `listener` as server `id` with `config`.
    pub fn spawn_with<R: RaftRpcTarget>(
        listener: TcpListener,
        id: NodeId,
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
            listener, id, raft, secret, handler, config, shutdown,
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

/// Serves the transport on `listener` as server `id` with [`ServerConfig::default`] until
/// `shutdown` completes.
///
/// See [`serve_with`].
pub async fn serve<R: RaftRpcTarget>(
    listener: TcpListener,
    id: NodeId,
    raft: R,
    secret: Arc<Vec<u8>>,
    handler: Arc<dyn ClientHandler>,
    shutdown: impl Future<Output = ()> + Send,
) {
    serve_with(
        listener,
        id,
        raft,
        secret,
        handler,
        ServerConfig::default(),
        shutdown,
    )
    .await
}

/// What every connection task of one server shares.
struct Shared<R> {
    id: NodeId,
    raft: R,
    secret: Arc<Vec<u8>>,
    handler: Arc<dyn ClientHandler>,
    config: ServerConfig,
    sessions: Arc<Semaphore>,
    /// Pending handshakes; dropping an entry's sender closes that connection.
    pending: Mutex<Pending<oneshot::Sender<()>>>,
    refusals: Mutex<RefusalLog>,
    local: Option<SocketAddr>,
    /// Snapshot transfers being received.
    inbox: Arc<Mutex<Inbox>>,
}

impl<R> Shared<R> {
    fn refused(&self, ip: IpAddr, why: Refusal) {
        self.refusals.lock().unwrap().refused(ip, why);
    }

    /// Logs the refusal summary if an interval ended (or, `at_exit`, whatever is left): at most
    /// one line per interval.
    fn log_refusals(&self, at_exit: bool) {
        let mut log = self.refusals.lock().unwrap();
        let now = Instant::now();
        let summary = if at_exit { log.take(now) } else { log.due(now) };
        drop(log);
        if let Some(summary) = summary {
            warn!(local = ?self.local, "transport: {summary}");
        }
    }
}

/// Removes a pending handshake from the table when its task is done with it (or dropped).
struct PendingGuard<'a, R> {
    shared: &'a Shared<R>,
    ticket: Ticket,
}

impl<R> Drop for PendingGuard<'_, R> {
    fn drop(&mut self) {
        self.shared.pending.lock().unwrap().finish(self.ticket);
    }
}

/// Serves the transport on `listener` as server `id` until `shutdown` completes, then closes
/// every connection.
///
/// Never returns early and never panics on bad input: accept errors are counted and retried
/// after a short pause, misbehaving connections are closed one by one. Unauthenticated
/// connections are admitted under [`ServerConfig::max_pending_per_ip`] and
/// [`ServerConfig::max_pending_handshakes`] and summarised in at most one log line per
/// [`ServerConfig::refusal_log_interval`].
pub async fn serve_with<R: RaftRpcTarget>(
    listener: TcpListener,
    id: NodeId,
    raft: R,
    secret: Arc<Vec<u8>>,
    handler: Arc<dyn ClientHandler>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) {
    let local = listener.local_addr().ok();
    let interval = config.refusal_log_interval.max(Duration::from_millis(1));
    let inbox_dir = config
        .snapshot_inbox
        .clone()
        .unwrap_or_else(std::env::temp_dir);
    let inbox = Inbox::new(inbox_dir, config.snapshot_transfer_idle);
    let shared = Arc::new(Shared {
        inbox: Arc::new(Mutex::new(inbox)),
        id,
        raft,
        secret,
        handler,
        sessions: Arc::new(Semaphore::new(config.max_connections)),
        pending: Mutex::new(Pending::new(
            config.max_pending_per_ip,
            config.max_pending_handshakes,
        )),
        refusals: Mutex::new(RefusalLog::new(interval, Instant::now())),
        config,
        local,
    });
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut connections = JoinSet::new();
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
            _ = tick.tick() => {
                shared.log_refusals(false);
                let dropped = shared.inbox.lock().unwrap().sweep(Instant::now());
                if dropped > 0 {
                    warn!(?local, dropped, "transport: dropped abandoned snapshot transfers");
                }
            }
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Typically out of file descriptors: count it, and pause rather than spin.
                        shared.refusals.lock().unwrap().accept_failed(&e);
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let (evict, evicted) = oneshot::channel();
                // A displaced handshake's sender is dropped here; its task sees it and closes.
                let (ticket, _displaced) = shared.pending.lock().unwrap().admit(peer.ip(), evict);
                connections.spawn(serve_connection(shared.clone(), stream, peer, ticket, evicted));
            }
        }
    }
    debug!(?local, open = connections.len(), "transport: shutting down");
    connections.shutdown().await;
    shared.log_refusals(true);
}

/// Authenticates one connection, then answers its requests until it closes or misbehaves.
async fn serve_connection<R: RaftRpcTarget>(
    shared: Arc<Shared<R>>,
    mut stream: TcpStream,
    peer: SocketAddr,
    ticket: Ticket,
    evicted: oneshot::Receiver<()>,
) {
    let _ = stream.set_nodelay(true);
    let config = &shared.config;
    let guard = PendingGuard {
        shared: &shared,
        ticket,
    };
    let handshake = tokio::select! {
        result = noise::server_handshake_with(&mut stream, &shared.secret, shared.id, config.handshake_timeout, &*config.identity) => Some(result),
        _ = evicted => None,
    };
    drop(guard);
    let standing = &config.standing;
    let mut session = match handshake {
        Some(Ok(session)) => {
            standing.ok(session.peer());
            session
        }
        Some(Err(AuthError::Refused(refusal))) => {
            standing.we_refuse(refusal.of(), &refusal);
            return;
        }
        Some(Err(AuthError::RefusedBy(refusal))) => {
            standing.trouble(refusal.by(), Trouble::RefusesUs, &refusal.to_string());
            return;
        }
        Some(Err(AuthError::BadSecret)) => {
            shared.refused(peer.ip(), Refusal::BadHandshake);
            standing.anonymous_refusal(&format!(
                "a peer at {peer} dialed this server with another cluster secret"
            ));
            return;
        }
        Some(Err(e @ (AuthError::Version { .. } | AuthError::Reflected { .. }))) => {
            // The peer holds the secret (its message decrypted): a misconfigured member, not a
            // stranger's flood, so it is worth a line of its own.
            warn!(%peer, error = %e, "transport: member refused, closing connection");
            return;
        }
        Some(Err(e)) => {
            let why = match e {
                AuthError::Timeout { .. } => Refusal::TimedOut,
                _ => Refusal::BadHandshake,
            };
            shared.refused(peer.ip(), why);
            debug!(%peer, error = %e, "transport: handshake failed, closing connection");
            return;
        }
        None => {
            shared.refused(peer.ip(), Refusal::Evicted);
            debug!(%peer, "transport: pending handshake dropped to make room");
            return;
        }
    };
    let Ok(_permit) = shared.sessions.clone().try_acquire_owned() else {
        warn!(%peer, max = config.max_connections, "transport: too many sessions, closing new one");
        return;
    };
    let id = session.peer();
    debug!(%peer, id, "transport: peer authenticated");
    loop {
        let next = tokio::time::timeout(
            config.idle_timeout,
            session.read::<_, RpcRequest>(&mut stream, MAX_FRAME_BYTES),
        )
        .await;
        let request = match next {
            Err(_) => {
                debug!(%peer, id, idle = ?config.idle_timeout, "transport: idle connection closed");
                return;
            }
            Ok(Err(FrameError::Closed)) => {
                debug!(%peer, id, "transport: peer closed connection");
                if let Some(hook) = &config.peer_closed {
                    hook.closed(id);
                }
                return;
            }
            Ok(Err(e)) => {
                warn!(%peer, id, error = %e, "transport: bad frame, closing session");
                if let (FrameError::Io(_), Some(hook)) = (&e, &config.peer_closed) {
                    hook.closed(id);
                }
                return;
            }
            Ok(Ok(request)) => request,
        };
        let response = dispatch(&shared, id, request).await;
        match tokio::time::timeout(config.write_timeout, session.write(&mut stream, &response))
            .await
        {
            Ok(Ok(())) => standing.exchanged(),
            Ok(Err(e)) => {
                warn!(%peer, id, error = %e, "transport: cannot send response, closing session");
                return;
            }
            Err(_) => {
                warn!(%peer, id, after = ?config.write_timeout, "transport: response write timed out, closing session");
                return;
            }
        }
    }
}

/// The node a raft RPC names as its sender (the leader or candidate of its vote); `None` for a
/// forwarded client request, which any member may send.
fn named_sender(request: &RpcRequest) -> Option<NodeId> {
    let vote = match request {
        RpcRequest::AppendEntries(rpc) => &rpc.vote,
        RpcRequest::Vote(rpc) | RpcRequest::PreVote(rpc) => &rpc.vote,
        RpcRequest::FullSnapshot { vote, .. } => vote,
        RpcRequest::TransferLeader(req) => req.from_leader(),
        RpcRequest::SnapshotChunk { vote, .. } | RpcRequest::SnapshotDone { vote, .. } => vote,
        RpcRequest::Client(_) => return None,
    };
    Some(*vote.leader_id().node_id())
}

/// Whether only a leader sends `request` (AppendEntries, heartbeats, snapshots): what [`Heard`] records.
fn from_a_leader(request: &RpcRequest) -> bool {
    matches!(
        request,
        RpcRequest::AppendEntries(_)
            | RpcRequest::FullSnapshot { .. }
            | RpcRequest::SnapshotChunk { .. }
            | RpcRequest::SnapshotDone { .. }
    )
}

/// Hands one request to the raft core or the client handler and wraps the answer.
///
/// A raft RPC must name the session's proven peer as its sender: one that names another node is
/// refused, so a member cannot speak for another.
async fn dispatch<R: RaftRpcTarget>(
    shared: &Shared<R>,
    peer: NodeId,
    request: RpcRequest,
) -> RpcResponse {
    let (raft, handler, inbox) = (&shared.raft, &*shared.handler, &shared.inbox);
    if let Some(named) = named_sender(&request).filter(|named| *named != peer) {
        warn!(
            peer,
            named, "transport: rpc names another sender than the session's peer, refused"
        );
        return RpcResponse::RaftError(format!(
            "rpc names node {named} as its sender but this session authenticated node {peer}"
        ));
    }
    if from_a_leader(&request) {
        shared.config.heard.from(peer, Instant::now());
    }
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
        RpcRequest::SnapshotChunk {
            transfer,
            total,
            offset,
            data,
            ..
        } => {
            let inbox = inbox.clone();
            let written = tokio::task::spawn_blocking(move || {
                let mut inbox = inbox.lock().unwrap_or_else(|e| e.into_inner());
                inbox.chunk(peer, transfer, total, offset, &data, Instant::now())
            })
            .await;
            match written {
                Ok(Ok(received)) => RpcResponse::SnapshotChunk { received },
                Ok(Err(e)) => {
                    warn!(peer, error = %e, "transport: snapshot chunk refused");
                    RpcResponse::RaftError(e.to_string())
                }
                Err(e) => RpcResponse::RaftError(format!("snapshot chunk task: {e}")),
            }
        }
        RpcRequest::SnapshotDone {
            vote,
            transfer,
            meta,
            total,
            crc32,
        } => {
            let finished = inbox
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .finish(peer, transfer, total, crc32);
            match finished {
                Ok(file) => raft
                    .install_snapshot_file(vote, meta, file)
                    .await
                    .map_or_else(refused, RpcResponse::Snapshot),
                Err(e) => {
                    warn!(peer, error = %e, "transport: streamed snapshot refused");
                    RpcResponse::RaftError(e.to_string())
                }
            }
        }
    }
}
