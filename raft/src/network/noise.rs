//! The transport's handshake: the Noise protocol `Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s` keyed
//! by the cluster secret, binding each side's server id to the session.
//!
//! 1. Client → server: Noise message 1 (`psk, e`) whose payload, a [`Hello`] with the protocol
//!    version, the client's server id, cluster id and incarnation, is encrypted and authenticated
//!    under a key mixed from the PSK. A peer without the secret is refused here, before the server
//!    does any X25519.
//! 2. Server → client: Noise message 2 (`e, ee`) with the server's [`Hello`], which carries the
//!    server's verdict on the client's identity ([`PeerCheck`]): a refusal travels to the client,
//!    which logs it. The client checks the version, that the id is the one it dialed, and the
//!    server's identity; decrypting the message proves that the server holds the PSK and took
//!    part in this very exchange (the keys mix a fresh ephemeral Diffie-Hellman of both sides).
//! 3. Client → server: the first sealed frame of the session, [`CONFIRM`], or the client's
//!    refusal of the server ([`REFUSE`] and the reason). Decrypting it proves the client holds the
//!    ephemeral key of message 1: a replayed message 1 gets no further.
//!
//! So a server of another cluster, or a wiped member speaking as its old self, is refused with
//! one line on both sides, and never reaches the raft core. The identity fields come after the
//! version-2 fields of [`Hello`]: a server that predates them reads the first two and ignores
//! the rest, and one that does not send them is read as stating no identity.
//!
//! Every later frame is sealed with the session's keys ([`super::sealed`]): a frame that is
//! modified, replayed, reordered, dropped or injected fails to decrypt and ends the session.
//!
//! The PSK is `HMAC-SHA256(cluster secret, PSK_LABEL)`: 32 bytes whatever the secret's length,
//! and bound to this use of the secret. NN (no static keys) suffices because the cluster has no
//! per-server keys to pin: being a member means holding the secret, which psk0 checks first.
//! Handshake messages are plain frames capped at [`MAX_HANDSHAKE_FRAME`] bytes, and the whole
//! exchange runs under a timeout.

use std::time::Duration;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use snow::TransportState;
use tokio::io::{AsyncRead, AsyncWrite};

use super::frame::{read_frame, write_frame, FrameError};
use super::sealed::Session;
use crate::codec;
use crate::identity::{ClusterId, NoIdentity, PeerCheck, Refusal};
use crate::types::NodeId;

/// Version of the transport protocol, carried in both sides' [`Hello`].
pub const PROTOCOL_VERSION: u32 = 2;
/// The Noise protocol name.
pub const NOISE_PATTERN: &str = "Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s";
/// Mixed into the handshake hash by both sides: binds the session to this protocol.
pub const PROLOGUE: &[u8] = b"convoy raft transport";
/// The domain-separation label the PSK is derived with.
pub const PSK_LABEL: &[u8] = b"convoy/raft-transport/noise-psk/v2";
/// Largest handshake frame accepted: handshake messages are under a hundred bytes.
pub const MAX_HANDSHAKE_FRAME: u32 = 256;
/// The default time a handshake may take before the connection is dropped.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// The body of the client's first sealed frame, completing the handshake.
pub const CONFIRM: &[u8] = b"convoy-ready";
/// The start of the client's first sealed frame when it refuses the server; a [`Refusal`] follows.
pub const REFUSE: &[u8] = b"convoy-refuse:";
/// Largest first sealed frame the server reads: a confirmation or a refusal.
const MAX_CONFIRM_FRAME: u32 = 512;

/// What each side states about itself inside its (encrypted) handshake message.
#[derive(Debug, Serialize, Deserialize)]
pub struct Hello {
    /// The sender's [`PROTOCOL_VERSION`].
    pub version: u32,
    /// The sender's server id.
    pub id: NodeId,
    /// The sender's cluster, once it knows it (after the version-2 fields: see the module doc).
    pub cluster: Option<ClusterId>,
    /// The sender's data dir incarnation; 0: none stated.
    pub incarnation: u64,
    /// In the server's message only: why it refuses the client, if it does.
    pub refused: Option<Refusal>,
}

/// The [`Hello`] of a server that predates identities.
#[derive(Debug, Deserialize)]
struct HelloV2 {
    version: u32,
    id: NodeId,
}

impl Hello {
    fn new(id: NodeId, check: &dyn PeerCheck) -> Self {
        let (cluster, incarnation) = check.local();
        Self {
            version: PROTOCOL_VERSION,
            id,
            cluster,
            incarnation,
            refused: None,
        }
    }

    /// Reads a hello, with or without the identity fields.
    fn decode(payload: &[u8]) -> Result<Self, codec::CodecError> {
        codec::decode::<Hello>(payload).or_else(|e| match codec::decode::<HelloV2>(payload) {
            Ok(old) => Ok(Hello {
                version: old.version,
                id: old.id,
                cluster: None,
                incarnation: 0,
                refused: None,
            }),
            Err(_) => Err(e),
        })
    }
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
    /// A handshake message failed to decrypt: the peer does not hold the cluster secret, or the
    /// message was altered or replayed on the way.
    #[error("handshake message rejected: peer does not hold the cluster secret, or the message was tampered with")]
    BadSecret,
    /// The peer speaks another protocol version.
    #[error("protocol version {got} not supported (expected {PROTOCOL_VERSION})")]
    Version {
        /// The version the peer announced.
        got: u32,
    },
    /// The server proved an id other than the one the client dialed.
    #[error("dialed server {expected} but the peer is server {got}")]
    WrongPeer {
        /// The id the client dialed.
        expected: NodeId,
        /// The id the peer stated.
        got: NodeId,
    },
    /// The client claims the server's own id: a connection reflected back to its origin.
    #[error("peer claims this server's own id {id}: refusing a reflected connection")]
    Reflected {
        /// The server's (and the claimed) id.
        id: NodeId,
    },
    /// The client's confirmation frame is not [`CONFIRM`].
    #[error("handshake confirmation missing or malformed")]
    BadConfirm,
    /// This side refuses the peer's identity (another cluster, a replaced data dir).
    #[error("{0}")]
    Refused(Refusal),
    /// The peer refuses this server's identity.
    #[error("{0}")]
    RefusedBy(Refusal),
    /// A decrypted handshake payload is not a [`Hello`].
    #[error("malformed handshake payload: {0}")]
    Payload(#[from] codec::CodecError),
    /// The Noise state machine refused an operation (should not happen with valid parameters).
    #[error("noise: {0}")]
    Noise(String),
    /// A handshake message could not be read or written.
    #[error("handshake message: {0}")]
    Frame(#[from] FrameError),
}

impl From<snow::Error> for AuthError {
    fn from(e: snow::Error) -> Self {
        match e {
            snow::Error::Decrypt => AuthError::BadSecret,
            other => AuthError::Noise(other.to_string()),
        }
    }
}

/// Derives the 32-byte Noise PSK from the cluster secret: `HMAC-SHA256(secret, PSK_LABEL)`.
pub fn derive_psk(secret: &[u8]) -> [u8; 32] {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(PSK_LABEL);
    mac.finalize().into_bytes().into()
}

fn builder(psk: &[u8; 32]) -> snow::Builder<'_> {
    let params = NOISE_PATTERN
        .parse()
        .expect("NOISE_PATTERN is a valid Noise protocol name");
    snow::Builder::new(params).psk(0, psk).prologue(PROLOGUE)
}

async fn with_timeout<F, T>(after: Duration, fut: F) -> Result<T, AuthError>
where
    F: std::future::Future<Output = Result<T, AuthError>>,
{
    tokio::time::timeout(after, fut)
        .await
        .unwrap_or(Err(AuthError::Timeout { after }))
}

/// Encrypts `hello` into the next handshake message and sends it as a plain frame.
async fn send_hello<S>(
    stream: &mut S,
    noise: &mut snow::HandshakeState,
    hello: &Hello,
) -> Result<(), AuthError>
where
    S: AsyncWrite + Unpin,
{
    let payload = codec::encode(hello)?;
    let mut message = vec![0u8; MAX_HANDSHAKE_FRAME as usize];
    let len = noise.write_message(&payload, &mut message)?;
    message.truncate(len);
    write_frame(stream, &message).await?;
    Ok(())
}

/// Reads the next handshake message and decrypts the peer's [`Hello`] from it.
async fn recv_hello<S>(stream: &mut S, noise: &mut snow::HandshakeState) -> Result<Hello, AuthError>
where
    S: AsyncRead + Unpin,
{
    let message: Vec<u8> = read_frame(stream, MAX_HANDSHAKE_FRAME).await?;
    let mut payload = vec![0u8; message.len()];
    // Too short, altered, or sealed under another PSK: all the same to the reader.
    let len = noise
        .read_message(&message, &mut payload)
        .map_err(|_| AuthError::BadSecret)?;
    Ok(Hello::decode(&payload[..len])?)
}

fn check_version(hello: &Hello) -> Result<(), AuthError> {
    if hello.version != PROTOCOL_VERSION {
        return Err(AuthError::Version { got: hello.version });
    }
    Ok(())
}

/// Runs the client side of the handshake as server `me`, dialing server `expected`, stating and
/// checking no identity (tools and tests; see [`client_handshake_with`]).
pub async fn client_handshake<S>(
    stream: &mut S,
    secret: &[u8],
    me: NodeId,
    expected: NodeId,
    timeout: Duration,
) -> Result<Session, AuthError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    client_handshake_with(stream, secret, me, expected, timeout, &NoIdentity).await
}

/// Runs the client side of the handshake as server `me` with identity `check`, dialing server
/// `expected`.
///
/// Returns the session, bound to `expected`. On `Err` the caller must close the connection.
pub async fn client_handshake_with<S>(
    stream: &mut S,
    secret: &[u8],
    me: NodeId,
    expected: NodeId,
    timeout: Duration,
    check: &dyn PeerCheck,
) -> Result<Session, AuthError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    with_timeout(timeout, async {
        let psk = derive_psk(secret);
        let mut noise = builder(&psk).build_initiator()?;
        send_hello(stream, &mut noise, &Hello::new(me, check)).await?;
        let theirs = recv_hello(stream, &mut noise).await?;
        check_version(&theirs)?;
        if theirs.id != expected {
            return Err(AuthError::WrongPeer {
                expected,
                got: theirs.id,
            });
        }
        if let Some(refusal) = theirs.refused {
            return Err(AuthError::RefusedBy(refusal));
        }
        let mut session = Session::new(transport(noise)?, expected);
        if let Err(refusal) = check.check(expected, theirs.cluster, theirs.incarnation) {
            let mut body = REFUSE.to_vec();
            body.extend(codec::encode(&refusal)?);
            // The refusal is a courtesy to the server's log: this side refuses either way.
            let _ = session.write_body(stream, &body).await;
            return Err(AuthError::Refused(refusal));
        }
        session.write_body(stream, CONFIRM).await?;
        Ok(session)
    })
    .await
}

/// Runs the server side of the handshake as server `me` on a fresh connection, stating and
/// checking no identity (tools and tests; see [`server_handshake_with`]).
pub async fn server_handshake<S>(
    stream: &mut S,
    secret: &[u8],
    me: NodeId,
    timeout: Duration,
) -> Result<Session, AuthError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    server_handshake_with(stream, secret, me, timeout, &NoIdentity).await
}

/// Runs the server side of the handshake as server `me` with identity `check` on a fresh
/// connection.
///
/// Returns the session, bound to the id the client proved. On `Err` the caller must close the
/// connection.
pub async fn server_handshake_with<S>(
    stream: &mut S,
    secret: &[u8],
    me: NodeId,
    timeout: Duration,
    check: &dyn PeerCheck,
) -> Result<Session, AuthError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    with_timeout(timeout, async {
        let psk = derive_psk(secret);
        let mut noise = builder(&psk).build_responder()?;
        let theirs = recv_hello(stream, &mut noise).await?;
        let mut hello = Hello::new(me, check);
        // Only a member speaking this version under another id is judged.
        if theirs.version == PROTOCOL_VERSION && theirs.id != me {
            hello.refused = check
                .check(theirs.id, theirs.cluster, theirs.incarnation)
                .err();
        }
        send_hello(stream, &mut noise, &hello).await?;
        check_version(&theirs)?;
        if theirs.id == me {
            return Err(AuthError::Reflected { id: me });
        }
        if let Some(refusal) = hello.refused {
            return Err(AuthError::Refused(refusal));
        }
        let mut session = Session::new(transport(noise)?, theirs.id);
        let confirm = session
            .read_body(stream, MAX_CONFIRM_FRAME)
            .await
            .map_err(|e| match e {
                FrameError::Decrypt => AuthError::BadSecret,
                FrameError::TooLarge { .. } => AuthError::BadConfirm,
                other => AuthError::Frame(other),
            })?;
        if let Some(refusal) = confirm.strip_prefix(REFUSE) {
            let refusal: Refusal = codec::decode(refusal).map_err(|_| AuthError::BadConfirm)?;
            return Err(AuthError::RefusedBy(refusal));
        }
        if confirm != CONFIRM {
            return Err(AuthError::BadConfirm);
        }
        Ok(session)
    })
    .await
}

fn transport(noise: snow::HandshakeState) -> Result<TransportState, AuthError> {
    Ok(noise.into_transport_mode()?)
}

#[cfg(test)]
#[path = "noise_test.rs"]
mod tests;
