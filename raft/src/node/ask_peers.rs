//! Before bootstrapping on an empty data dir: ask the founding peers whether they know this
//! server. A peer that knows it under another incarnation means its data was lost, and
//! bootstrapping a new log would split the cluster (or make its raft core meet a follower whose
//! log went backwards); the server refuses to start instead, naming the recovery. A peer of
//! another cluster (another secret's founders, or another initial_cluster) stops it too.
//!
//! A peer that does not answer, or does not know this server (a founder starting after the
//! others formed the cluster without it), lets the bootstrap go on as before.

use std::time::Duration;

use tokio::net::TcpStream;

use super::RaftConfig;
use crate::error::RaftError;
use crate::identity::{Identity, Refusal};
use crate::network::noise::{client_handshake_with, AuthError};

/// How long each peer may take to connect and answer the handshake.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// Asks every other founder of `config` in turn; `Err` if one knows this server or belongs to
/// another cluster.
pub(super) async fn ask_peers(config: &RaftConfig, identity: &Identity) -> Result<(), RaftError> {
    for (peer, member) in config
        .initial_cluster
        .iter()
        .filter(|(p, _)| **p != config.id)
    {
        let answer = tokio::time::timeout(ASK_TIMEOUT, async {
            let mut stream = TcpStream::connect(&member.raft_addr).await.ok()?;
            let handshake = client_handshake_with(
                &mut stream,
                &config.secret,
                config.id,
                *peer,
                ASK_TIMEOUT,
                identity,
            )
            .await;
            Some(handshake)
        })
        .await;
        let refusal = match answer {
            Ok(Some(Err(AuthError::RefusedBy(refusal) | AuthError::Refused(refusal)))) => refusal,
            Ok(Some(Ok(_))) => {
                tracing::info!(peer, "founder {peer} does not know this server yet");
                continue;
            }
            other => {
                tracing::debug!(peer, answer = ?other.map(|a| a.map(|r| r.map(|_| ()))), "founder did not answer");
                continue;
            }
        };
        return Err(match refusal {
            Refusal::Replaced { .. } => RaftError::AlreadyBootstrapped {
                id: config.id,
                refusal,
            },
            Refusal::OtherCluster { .. } => RaftError::Config(refusal.to_string()),
        });
    }
    Ok(())
}
