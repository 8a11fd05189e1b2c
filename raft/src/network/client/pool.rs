//! The connection pool: authenticated sessions per (server id, address), checked out for one
//! exchange and returned only after a complete one.

use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use super::{Network, TransportError};
use crate::network::frame::{FrameError, MAX_FRAME_BYTES};
use crate::network::noise::{self, AuthError};
use crate::network::sealed::Session;
use crate::network::standing::Trouble;
use crate::network::{RpcRequest, RpcResponse};
use crate::types::NodeId;

/// An authenticated connection resting in the pool.
pub(super) struct Conn {
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

impl<D> Network<D> {
    /// Takes a live pooled connection to `target` at `addr`, or dials and authenticates a new
    /// one.
    pub(super) async fn checkout(
        &self,
        target: NodeId,
        addr: &str,
    ) -> Result<Conn, TransportError> {
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
        let standing = &self.inner.standing;
        let connect_err = |source: std::io::Error| {
            standing.trouble(
                target,
                Trouble::Down,
                &format!("cannot connect to {addr}: {source}"),
            );
            TransportError::Connect {
                addr: addr.to_string(),
                source,
            }
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
        let session = noise::client_handshake_with(
            &mut stream,
            &self.inner.secret,
            self.inner.id,
            target,
            config.handshake_timeout,
            &*self.inner.identity,
        )
        .await
        .map_err(|source| {
            match &source {
                AuthError::Refused(r) => standing.we_refuse(target, r),
                AuthError::RefusedBy(r) => {
                    standing.trouble(target, Trouble::RefusesUs, &r.to_string())
                }
                // The server closes at once a handshake it cannot decrypt: another secret.
                AuthError::Frame(FrameError::Closed | FrameError::Io(_)) => standing.trouble(
                    target,
                    Trouble::RefusesUs,
                    &format!(
                        "server {target} at {addr} closed the handshake: it does not hold this server's cluster secret (or is stopping)"
                    ),
                ),
                other => standing.trouble(
                    target,
                    Trouble::Down,
                    &format!("handshake with {addr} failed: {other}"),
                ),
            }
            TransportError::Handshake {
                addr: addr.to_string(),
                source,
            }
        })?;
        standing.ok(target);
        Ok(Conn {
            stream,
            session,
            idle_since: Instant::now(),
        })
    }

    /// Returns a connection after a complete exchange, if the pool has room.
    pub(super) fn checkin(&self, target: NodeId, addr: &str, mut conn: Conn) {
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

/// Writes `req` on `conn` and reads the one response frame that answers it.
pub(super) async fn exchange(conn: &mut Conn, req: &RpcRequest) -> Result<RpcResponse, FrameError> {
    conn.session.write(&mut conn.stream, req).await?;
    conn.session.read(&mut conn.stream, MAX_FRAME_BYTES).await
}
