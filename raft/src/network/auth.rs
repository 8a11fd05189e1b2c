//! Mutual challenge-response authentication with HMAC-SHA256 over the cluster secret.
//!
//! 1. The server sends a [`Challenge`]: the protocol version and a 32-byte random nonce.
//! 2. The client answers with `HMAC(secret, "client" || server_nonce)` and its own nonce.
//! 3. The server verifies the MAC (in constant time) and answers `HMAC(secret, "server" ||
//!    client_nonce)`, which the client verifies.
//!
//! The secret never crosses the wire; the role labels keep one side's proof from being replayed
//! as the other's. Handshake messages are frames capped at [`MAX_HANDSHAKE_FRAME`] bytes, and the
//! whole exchange runs under a timeout.

use std::time::Duration;

use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use tokio::io::{AsyncRead, AsyncWrite};

use super::frame::{read_frame, write_frame, FrameError};

/// Length of each side's random nonce.
pub const NONCE_LEN: usize = 32;
/// Version of the transport protocol, carried in the challenge.
pub const PROTOCOL_VERSION: u32 = 1;
/// Largest handshake frame accepted: handshake messages are a few dozen bytes.
pub const MAX_HANDSHAKE_FRAME: u32 = 256;
/// The default time a handshake may take before the connection is dropped.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

type HmacSha256 = Hmac<Sha256>;

/// Server → client: the first message on every connection.
#[derive(Debug, Serialize, Deserialize)]
struct Challenge {
    version: u32,
    nonce: [u8; NONCE_LEN],
}

/// Client → server: proof of the secret, and the client's own challenge.
#[derive(Debug, Serialize, Deserialize)]
struct ClientProof {
    mac: Vec<u8>,
    nonce: [u8; NONCE_LEN],
}

/// Server → client: proof of the secret.
#[derive(Debug, Serialize, Deserialize)]
struct ServerProof {
    mac: Vec<u8>,
}

/// Why a handshake failed. The connection must be closed.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The handshake did not finish in time.
    #[error("handshake timed out after {after:?}")]
    Timeout {
        /// The timeout in force.
        after: Duration,
    },
    /// The client's MAC does not match: it does not hold the cluster secret.
    #[error("client proof rejected: peer does not hold the cluster secret")]
    BadClientProof,
    /// The server's MAC does not match: it does not hold the cluster secret.
    #[error("server proof rejected: peer does not hold the cluster secret")]
    BadServerProof,
    /// The server speaks another protocol version.
    #[error("protocol version {got} not supported (expected {PROTOCOL_VERSION})")]
    Version {
        /// The version the server announced.
        got: u32,
    },
    /// A handshake message could not be read or written.
    #[error("handshake message: {0}")]
    Frame(#[from] FrameError),
}

fn nonce() -> [u8; NONCE_LEN] {
    let mut nonce = [0u8; NONCE_LEN];
    rand::rngs::OsRng.fill_bytes(&mut nonce);
    nonce
}

fn mac_for(secret: &[u8], role: &[u8], nonce: &[u8; NONCE_LEN]) -> HmacSha256 {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(role);
    mac.update(nonce);
    mac
}

fn prove(secret: &[u8], role: &[u8], nonce: &[u8; NONCE_LEN]) -> Vec<u8> {
    mac_for(secret, role, nonce)
        .finalize()
        .into_bytes()
        .to_vec()
}

fn verify(secret: &[u8], role: &[u8], nonce: &[u8; NONCE_LEN], proof: &[u8]) -> bool {
    mac_for(secret, role, nonce).verify_slice(proof).is_ok()
}

async fn with_timeout<F, T>(after: Duration, fut: F) -> Result<T, AuthError>
where
    F: std::future::Future<Output = Result<T, AuthError>>,
{
    tokio::time::timeout(after, fut)
        .await
        .unwrap_or(Err(AuthError::Timeout { after }))
}

/// Runs the server side of the handshake on a fresh connection.
///
/// On `Err` the caller must close the connection (and log the peer address).
pub async fn server_handshake<S>(
    stream: &mut S,
    secret: &[u8],
    timeout: Duration,
) -> Result<(), AuthError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    with_timeout(timeout, async {
        let server_nonce = nonce();
        let challenge = Challenge {
            version: PROTOCOL_VERSION,
            nonce: server_nonce,
        };
        write_frame(stream, &challenge).await?;
        let proof: ClientProof = read_frame(stream, MAX_HANDSHAKE_FRAME).await?;
        if !verify(secret, b"client", &server_nonce, &proof.mac) {
            return Err(AuthError::BadClientProof);
        }
        let answer = ServerProof {
            mac: prove(secret, b"server", &proof.nonce),
        };
        write_frame(stream, &answer).await?;
        Ok(())
    })
    .await
}

/// Runs the client side of the handshake on a fresh connection.
///
/// On `Err` the caller must close the connection.
pub async fn client_handshake<S>(
    stream: &mut S,
    secret: &[u8],
    timeout: Duration,
) -> Result<(), AuthError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    with_timeout(timeout, async {
        let challenge: Challenge = read_frame(stream, MAX_HANDSHAKE_FRAME).await?;
        if challenge.version != PROTOCOL_VERSION {
            return Err(AuthError::Version {
                got: challenge.version,
            });
        }
        let client_nonce = nonce();
        let proof = ClientProof {
            mac: prove(secret, b"client", &challenge.nonce),
            nonce: client_nonce,
        };
        write_frame(stream, &proof).await?;
        let answer: ServerProof = read_frame(stream, MAX_HANDSHAKE_FRAME).await?;
        if !verify(secret, b"server", &client_nonce, &answer.mac) {
            return Err(AuthError::BadServerProof);
        }
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(
        server_secret: &[u8],
        client_secret: &[u8],
    ) -> (Result<(), AuthError>, Result<(), AuthError>) {
        let (mut a, mut b) = tokio::io::duplex(1024);
        let t = Duration::from_secs(2);
        let server = async {
            let r = server_handshake(&mut a, server_secret, t).await;
            drop(a);
            r
        };
        let client = async {
            let r = client_handshake(&mut b, client_secret, t).await;
            drop(b);
            r
        };
        tokio::join!(server, client)
    }

    #[tokio::test]
    async fn same_secret_authenticates_both_ways() {
        let (s, c) = run(b"cluster-secret", b"cluster-secret").await;
        s.unwrap();
        c.unwrap();
    }

    #[tokio::test]
    async fn wrong_secret_is_rejected_by_the_server() {
        let (s, c) = run(b"cluster-secret", b"guess").await;
        assert!(matches!(s, Err(AuthError::BadClientProof)), "{s:?}");
        assert!(c.is_err());
    }

    #[tokio::test]
    async fn impostor_server_is_rejected_by_the_client() {
        // A fake server that accepts any client proof and answers with a guessed MAC.
        let (mut a, mut b) = tokio::io::duplex(1024);
        let impostor = async move {
            let challenge = Challenge {
                version: PROTOCOL_VERSION,
                nonce: nonce(),
            };
            write_frame(&mut a, &challenge).await.unwrap();
            let proof: ClientProof = read_frame(&mut a, MAX_HANDSHAKE_FRAME).await.unwrap();
            let answer = ServerProof {
                mac: prove(b"guess", b"server", &proof.nonce),
            };
            write_frame(&mut a, &answer).await.unwrap();
        };
        let client = client_handshake(&mut b, b"cluster-secret", Duration::from_secs(2));
        let ((), r) = tokio::join!(impostor, client);
        assert!(matches!(r, Err(AuthError::BadServerProof)), "{r:?}");
    }

    #[tokio::test]
    async fn other_protocol_version_is_refused() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        let challenge = Challenge {
            version: PROTOCOL_VERSION + 1,
            nonce: nonce(),
        };
        write_frame(&mut a, &challenge).await.unwrap();
        let r = client_handshake(&mut b, b"k", Duration::from_secs(2)).await;
        assert!(
            matches!(r, Err(AuthError::Version { got }) if got == PROTOCOL_VERSION + 1),
            "{r:?}"
        );
    }

    #[tokio::test]
    async fn proofs_are_bound_to_role_and_nonce() {
        let n = nonce();
        let p = prove(b"k", b"client", &n);
        assert!(verify(b"k", b"client", &n, &p));
        assert!(!verify(b"k", b"server", &n, &p));
        assert!(!verify(b"k", b"client", &nonce(), &p));
        assert!(!verify(b"other", b"client", &n, &p));
        assert!(!verify(b"k", b"client", &n, &p[..16]));
    }

    #[tokio::test]
    async fn silent_peer_times_out() {
        let (mut a, _b) = tokio::io::duplex(1024);
        let r = client_handshake(&mut a, b"k", Duration::from_millis(50)).await;
        assert!(matches!(r, Err(AuthError::Timeout { .. })), "{r:?}");
    }
}
