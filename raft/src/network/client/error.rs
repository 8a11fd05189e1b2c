//! [`TransportError`]: why an RPC did not get an answer, and which failures are safe to retry.

use std::time::Duration;

use crate::network::frame::FrameError;
use crate::network::noise::AuthError;
use crate::types::NodeId;

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
        /// How the handshake failed: timeout, wrong secret, protocol version, peer id, malformed
        /// message.
        source: AuthError,
    },
    /// Sending the request or reading the response on the connection to `addr` failed.
    #[error("connection to {addr} failed: {source}")]
    Frame {
        /// The peer address.
        addr: String,
        /// How the exchange failed: connection closed or reset, frame too large, undecodable or
        /// not authentic.
        source: FrameError,
    },
    /// No answer from `addr` within the deadline.
    #[error("rpc to {addr} timed out after {after:?}")]
    Timeout {
        /// The peer address.
        addr: String,
        /// The timeout the whole call runs under, connecting and handshake included.
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
        /// What failed on this side, e.g. `cannot read the snapshot at byte N: ...`.
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
