//! Stream slots shared fairly on one server: at most `total` streams of a kind, at most `per_token` held by
//! one token, and the last `reserved` for admin and operator tokens only, so one reader (or agent) cannot
//! take every slot and an operator's dashboard still gets its feed. With auth off every caller is the same
//! anonymous one: only `total` applies.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use convoy_actors::domain::Role;

use super::auth::Caller;
use super::error::ApiError;

/// The bounds of one kind of stream on one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Streams open at once on this server.
    pub total: usize,
    /// Streams one token may hold at once.
    pub per_token: usize,
    /// Of `total`, the last ones only admin and operator tokens (or anybody with auth off) may take.
    pub reserved: usize,
}

/// Why a stream is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Every slot is taken.
    #[error("{total} {what} are open on this server: retry later or watch another member")]
    Full {
        /// The kind of stream.
        what: &'static str,
        /// [`Limits::total`].
        total: usize,
    },
    /// Only reserved slots are left and the token is neither admin nor operator.
    #[error(
        "only {left} of this server's {total} {what} are left, kept for admin and operator tokens \
         (token {token:?} is {role}): retry later or watch another member"
    )]
    Reserved {
        /// The kind of stream.
        what: &'static str,
        /// Slots still free.
        left: usize,
        /// [`Limits::total`].
        total: usize,
        /// The token's name.
        token: String,
        /// Its role.
        role: Role,
    },
    /// The token already holds its share.
    #[error(
        "token {token:?} already holds {per_token} {what} on this server, the most one token may: \
         close one first"
    )]
    PerToken {
        /// The kind of stream.
        what: &'static str,
        /// [`Limits::per_token`].
        per_token: usize,
        /// The token's name.
        token: String,
    },
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> Self {
        ApiError::Unavailable(r.to_string())
    }
}

/// The slots of one kind of stream (a `static` per kind).
#[derive(Debug)]
pub struct Slots {
    what: &'static str,
    limits: Limits,
    held: Mutex<Held>,
}

/// What is taken: the count, and per token name the count of each token holding any (never more entries
/// than `total`, since an entry goes with its token's last slot).
#[derive(Debug, Default)]
struct Held {
    open: usize,
    by_token: BTreeMap<String, usize>,
}

/// One taken slot, given back when dropped (the stream ended or the client went away).
#[derive(Debug)]
pub struct Slot {
    slots: &'static Slots,
    token: Option<String>,
}

impl Slots {
    /// Slots of the kind `what` (as messages name it: `"/v1/watch streams"`) within `limits`.
    pub const fn new(what: &'static str, limits: Limits) -> Self {
        Self {
            what,
            limits,
            held: Mutex::new(Held {
                open: 0,
                by_token: BTreeMap::new(),
            }),
        }
    }

    /// The bounds.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// A slot for `caller`, or why not.
    pub fn claim(&'static self, caller: &Caller) -> Result<Slot, Refusal> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let token = match caller {
            Caller::Anonymous => None,
            Caller::Token(t) => Some((t.name.as_str(), t.role)),
        };
        let holds = token.map(|(name, _)| held.by_token.get(name).copied().unwrap_or(0));
        self.admit(held.open, token, holds)?;
        held.open += 1;
        if let Some((name, _)) = token {
            *held.by_token.entry(name.to_string()).or_insert(0) += 1;
        }
        Ok(Slot {
            slots: self,
            token: token.map(|(name, _)| name.to_string()),
        })
    }

    /// The rule: `open` slots taken, `token` (name, role) holding `holds` of them (`None`: auth is off).
    fn admit(
        &self,
        open: usize,
        token: Option<(&str, Role)>,
        holds: Option<usize>,
    ) -> Result<(), Refusal> {
        let Limits {
            total,
            per_token,
            reserved,
        } = self.limits;
        if open >= total {
            return Err(Refusal::Full {
                what: self.what,
                total,
            });
        }
        let Some((name, role)) = token else {
            return Ok(());
        };
        if holds.unwrap_or(0) >= per_token {
            return Err(Refusal::PerToken {
                what: self.what,
                per_token,
                token: name.to_string(),
            });
        }
        let privileged = matches!(role, Role::Admin | Role::Operator);
        if !privileged && open >= total.saturating_sub(reserved) {
            return Err(Refusal::Reserved {
                what: self.what,
                left: total - open,
                total,
                token: name.to_string(),
                role,
            });
        }
        Ok(())
    }

    /// Slots taken now (for tests).
    pub fn open(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .open
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self
            .slots
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        held.open = held.open.saturating_sub(1);
        if let Some(name) = &self.token {
            if let Some(n) = held.by_token.get_mut(name) {
                *n -= 1;
                if *n == 0 {
                    held.by_token.remove(name);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "stream_slots_test.rs"]
mod tests;
