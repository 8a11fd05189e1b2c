//! A secret's standing on this server: a valid token, an expired one, or none. Expiry is judged on the
//! replicated `expires_at` (the leader-stamped creation time plus the `ttl`) against the later of this
//! server's clock and the leader's latest stamp it applied, so a server whose clock is behind still refuses a
//! token once it has applied a later entry. A secret this server does not know may be a token it has not
//! applied yet: before refusing it, the server catches up to the leader's commit index (a read index) and
//! looks again, so a lagging server never refuses a valid token. Revocation keeps its promise: a revoked
//! token fails on each server from the log index that revokes it. Open streams ask [`still_valid`] on
//! every event and heartbeat.

use std::sync::{Arc, OnceLock};

use convoy_actors::domain::{ct_eq, SecretHash, Timestamp, Token};
use tokio::sync::Semaphore;

use crate::api::error::ApiError;
use crate::machine::Machine;
use crate::replica::Replica;

/// Catch-ups (read indexes for secrets this server does not know) in flight at once on one server; one more
/// is 503, so a flood of made-up secrets costs the leader at most this many quorum rounds at a time.
pub const MAX_CATCH_UPS: usize = 16;

/// What a secret is on this server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// A token that authenticates.
    Valid(Token),
    /// A token whose `ttl` ran out.
    Expired(Token),
    /// No token has this secret (never made, revoked, or not applied here yet).
    Unknown,
}

/// The time tokens are judged at: the later of this server's clock and the leader's latest stamp applied.
pub fn now_ms(machine: &Machine) -> Timestamp {
    convoy_time::Clock::wall_ms(&convoy_time::SystemClock).max(machine.leader_ms())
}

/// The standing of the secret hashing to `hash` in `machine`'s applied state.
pub fn standing(machine: &Machine, hash: &SecretHash) -> Standing {
    match machine.state().tokens().authenticate(hash) {
        None => Standing::Unknown,
        Some(token) if token.expired(now_ms(machine)) => Standing::Expired(token.clone()),
        Some(token) => Standing::Valid(token.clone()),
    }
}

/// The token of `hash`, catching up to the leader's commit index before calling it unknown; 401
/// `unauthenticated` (unknown or revoked) or `token_expired`, 503 when the leader cannot be asked. While this
/// server has not applied the bootstrap token it knows no token at all: an unknown one is then 503
/// `unavailable` with readiness's `bootstrapping` reason, never 401 (a client retries a 503).
pub async fn authenticate(replica: &Replica, hash: SecretHash) -> Result<Token, ApiError> {
    let mut found = replica.node().read(|m| standing(m, &hash));
    if found == Standing::Unknown {
        found = match catch_up(replica, hash).await {
            Err(_) if replica.bootstrapping() => Standing::Unknown,
            caught_up => caught_up?,
        };
    }
    match found {
        Standing::Unknown if replica.bootstrapping() => Err(ApiError::Unavailable(
            crate::readiness::NotReady::Bootstrapping.to_string(),
        )),
        Standing::Valid(token) => Ok(token),
        Standing::Expired(token) => Err(ApiError::TokenExpired(format!(
            "token {:?} expired at {} ms since the epoch: ask an admin for a new one",
            token.name,
            token.expires_at.unwrap_or_default()
        ))),
        Standing::Unknown => Err(ApiError::Unauthenticated("unknown or revoked token".into())),
    }
}

/// The standing after this server applied everything the leader had committed when asked.
async fn catch_up(replica: &Replica, hash: SecretHash) -> Result<Standing, ApiError> {
    static CATCH_UPS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    let _permit = CATCH_UPS
        .get_or_init(|| Arc::new(Semaphore::new(MAX_CATCH_UPS)))
        .clone()
        .try_acquire_owned()
        .map_err(|_| {
            ApiError::Unavailable(format!(
                "{MAX_CATCH_UPS} unknown secrets are being checked against the leader on this server: retry"
            ))
        })?;
    // `read(true, ..)` reads this server's state once it applied the leader's commit index (a read index).
    replica.read(true, |_| ()).await.map_err(|e| {
        ApiError::Unavailable(format!("cannot check the token with the leader: {e}"))
    })?;
    Ok(replica.node().read(|m| standing(m, &hash)))
}

/// Why an open stream ends before its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Ended {
    /// The token was revoked (or replaced by another of its name).
    #[error("token_revoked")]
    Revoked,
    /// The token's `ttl` ran out.
    #[error("token_expired")]
    Expired,
}

impl Ended {
    /// The final SSE event a stream sends: `event: closed` with the reason, then it ends.
    pub fn event(self, token: &str, index: u64) -> String {
        let message = match self {
            Ended::Revoked => format!("token {token:?} was revoked"),
            Ended::Expired => format!("token {token:?} expired"),
        };
        let data = serde_json::json!({"reason": self.to_string(), "message": message});
        format!("event: closed\nid: {index}\ndata: {data}\n\n")
    }
}

/// Whether `token` (the one a stream was opened with) still authenticates in `machine`'s applied state.
pub fn still_valid(machine: &Machine, token: &Token) -> Result<(), Ended> {
    let now = now_ms(machine);
    match machine.state().tokens().get(&token.name) {
        Some(current) if ct_eq(&current.hash, &token.hash) => {
            if current.expired(now) {
                Err(Ended::Expired)
            } else {
                Ok(())
            }
        }
        _ => Err(Ended::Revoked),
    }
}

#[cfg(test)]
#[path = "standing_test.rs"]
mod tests;
