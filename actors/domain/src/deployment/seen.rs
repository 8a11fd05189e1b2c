//! What a node's last report says about one deployment's versions, as a small typed set of [`Fact`]s: the
//! cache that lets admission and rollback decide without looking the node up again.

use serde::{Deserialize, Serialize};

/// One fact about a node and a deployment (target version `v`, rollback target `from`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Fact {
    /// It has `v` downloaded or installed, or runs it.
    Have = 1,
    /// It runs `v`, done without error and healthy.
    Ok = 2,
    /// `v` finished with an error or unhealthy.
    Fail = 4,
    /// `v` is done (installed, or failed for good).
    Done = 8,
    /// It runs `from` again (or, with no `from`, holds nothing), not failed.
    BackOk = 16,
    /// `from` failed on it.
    BackFail = 32,
    /// It runs `v`.
    Current = 64,
}

/// A set of [`Fact`]s. Encoded as one byte (the facts' bits), as the `u8` it replaced, so snapshots keep
/// their bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seen(u8);

impl Seen {
    /// No fact: never reported anything about these versions.
    pub const NOTHING: Seen = Seen(0);

    /// `self` with `fact` added.
    #[must_use]
    pub fn with(self, fact: Fact) -> Seen {
        Seen(self.0 | fact as u8)
    }

    /// Whether `fact` holds.
    pub fn has(self, fact: Fact) -> bool {
        self.0 & fact as u8 != 0
    }

    /// Whether any of `facts` holds.
    pub fn any(self, facts: &[Fact]) -> bool {
        facts.iter().any(|f| self.has(*f))
    }
}

#[cfg(test)]
#[path = "seen_test.rs"]
mod tests;
