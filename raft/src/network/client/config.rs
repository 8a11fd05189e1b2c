//! [`NetworkConfig`]: the client side's timeouts, pool sizes and snapshot chunking.

use std::time::Duration;

use crate::network::inbox::DEFAULT_SNAPSHOT_CHUNK_BYTES;
use crate::network::noise;

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
    /// 1..=[`MAX_SNAPSHOT_CHUNK_BYTES`](crate::network::inbox::MAX_SNAPSHOT_CHUNK_BYTES)); one chunk is in flight per peer. Lowered only by tests.
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
