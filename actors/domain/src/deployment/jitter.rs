//! A deployment's start jitter (DEPLOYMENTS.md §16): each node's first admission (to download or to install)
//! waits a deterministic offset in `[0, start_jitter_ms)` from the deployment's creation, so that a fleet
//! does not hit one artifact server at once. The offset is a hash of the deployment id and the node id (no
//! random number: every server computes the same), and the time is the leader's `at`. Admission keeps the
//! fixed order, so a node waits for the nodes before it too.

use crate::deployment::Deployment;
use crate::values::ids::{DeploymentId, Timestamp};

/// FNV-1a (64 bits) over `bytes`: stable across platforms and releases, unlike std's `DefaultHasher`.
pub(crate) fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Node `node`'s offset in deployment `id` under a jitter of `jitter_ms` (0: none): in `[0, jitter_ms)`.
pub fn offset(id: DeploymentId, node: &str, jitter_ms: u64) -> u64 {
    if jitter_ms == 0 {
        return 0;
    }
    let key =
        id.0.to_be_bytes()
            .into_iter()
            .chain([0])
            .chain(node.bytes());
    fnv1a(key) % jitter_ms
}

impl Deployment {
    /// When node `node` may first be admitted: the creation time plus its offset.
    pub fn jitter_start(&self, node: &str) -> Timestamp {
        self.created_at
            .saturating_add(offset(self.id, node, self.settings.start_jitter_ms))
    }

    /// When node `node` may first be admitted, if that is after `at` (its start jitter holds it).
    pub(crate) fn jitter_wait(&self, node: &str, at: Timestamp) -> Option<Timestamp> {
        if self.settings.start_jitter_ms == 0 {
            return None;
        }
        let start = self.jitter_start(node);
        (start > at).then_some(start)
    }
}

#[cfg(test)]
#[path = "jitter_test.rs"]
mod tests;
