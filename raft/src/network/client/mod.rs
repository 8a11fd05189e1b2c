//! The client side of the transport: openraft's network factory and per-peer clients over pooled,
//! Noise-encrypted TCP sessions each bound to the server id it dialed, plus
//! [`Network::call_client`] for forwarding to the leader.
//!
//! Every RPC runs under one deadline covering connect, handshake, request and response. A
//! connection is returned to its peer's pool only after a complete exchange; any error drops it,
//! and the next call dials afresh. Connection failures map to openraft's `Unreachable` (so the
//! core backs off), deadlines to `Timeout`.

mod config;
mod error;
mod peer;
mod pool;
mod reversion;
mod snapshot_data;
mod snapshot_send;

pub use config::NetworkConfig;
pub use error::TransportError;
pub use peer::PeerClient;
pub use snapshot_data::SnapshotBytes;

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use openraft::network::RaftNetworkFactory;

use super::fault::{FaultAction, FaultPolicy, SharedFaultPolicy};
use super::standing::Standing;
use super::{ClientError, ClientRequest, ClientResponse, RpcRequest, RpcResponse};
use crate::identity::{NoIdentity, PeerCheck};
use crate::types::{Member, NodeId, TypeConfig};
use pool::{exchange, Conn};
use reversion::Matched;

/// The name of a response's kind, for errors.
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

struct Inner {
    id: NodeId,
    secret: Arc<Vec<u8>>,
    config: NetworkConfig,
    /// Idle connections by the server id they authenticated and its address.
    pool: Mutex<HashMap<(NodeId, String), Vec<Conn>>>,
    faults: SharedFaultPolicy,
    /// What this server states about itself and how it judges its peers in the handshake.
    identity: Arc<dyn PeerCheck>,
    /// How this server stands with its peers (logged, and read by readiness).
    standing: Arc<Standing>,
    /// What each follower acknowledged under this leader's vote (see [`reversion`]).
    matched: Mutex<Matched>,
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

    /// A network for node `id` authenticating with the cluster `secret`; no fault injected, no
    /// identity stated or checked.
    pub fn with_config(id: NodeId, secret: Arc<Vec<u8>>, config: NetworkConfig) -> Self {
        Self::with_identity(
            id,
            secret,
            config,
            Arc::new(NoIdentity),
            Arc::new(Standing::default()),
        )
    }

    /// A network for node `id` that states and checks `identity` in its handshakes and records
    /// its peers' troubles in `standing` (shared with the transport's server).
    pub fn with_identity(
        id: NodeId,
        secret: Arc<Vec<u8>>,
        config: NetworkConfig,
        identity: Arc<dyn PeerCheck>,
        standing: Arc<Standing>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                id,
                secret,
                config,
                pool: Mutex::new(HashMap::new()),
                faults: Arc::new(RwLock::new(FaultPolicy::default())),
                identity,
                standing,
                matched: Mutex::new(Matched::default()),
            }),
            _snapshot: PhantomData,
        }
    }

    /// How this server stands with its peers.
    pub fn standing(&self) -> &Arc<Standing> {
        &self.inner.standing
    }

    /// Forgets what `target` acknowledged: it left the membership and may come back with an
    /// empty log (replaced), which is then not a log gone backwards.
    pub fn forget_progress(&self, target: NodeId) {
        self.inner.matched.lock().unwrap().forget(target);
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
            self.inner.standing.exchanged();
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
