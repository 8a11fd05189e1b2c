//! Node liveness on the leader, one entry per node whatever the number of its consumers: when each
//! node last reported, and which active nodes have been silent longer than the node timeout.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// When each node last reported to this leader. Kept in memory only: a new leader starts with an
/// empty table and gives every node one full timeout from its own start.
#[derive(Debug)]
pub(crate) struct Liveness {
    /// Silence longer than this makes a node inactive.
    timeout: Duration,
    /// Since when this leader watches (the "last seen" of a node it has not heard from yet).
    since: Instant,
    /// Last report per node id.
    last_seen: HashMap<String, Instant>,
}

impl Liveness {
    /// An empty table watching from `now`.
    pub fn new(timeout: Duration, now: Instant) -> Self {
        Self {
            timeout,
            since: now,
            last_seen: HashMap::new(),
        }
    }

    /// Forgets everything and watches from `now` (this server just became leader).
    pub fn restart(&mut self, now: Instant) {
        self.since = now;
        self.last_seen.clear();
    }

    /// `node` reported at `now`.
    pub fn seen(&mut self, node: &str, now: Instant) {
        match self.last_seen.get_mut(node) {
            Some(t) => *t = now,
            None => {
                self.last_seen.insert(node.to_string(), now);
            }
        }
    }

    /// Of `active` (nodes the state holds active), those silent longer than the timeout at `now`.
    pub fn silent<'a>(
        &self,
        active: impl IntoIterator<Item = &'a str>,
        now: Instant,
    ) -> Vec<String> {
        active
            .into_iter()
            .filter(|n| {
                let seen = self.last_seen.get(*n).copied().unwrap_or(self.since);
                now.saturating_duration_since(seen) > self.timeout
            })
            .map(str::to_string)
            .collect()
    }

    /// Forgets reports older than the timeout at `now`, so the table stays bounded by the nodes heard
    /// from recently. Changes no answer of [`Liveness::silent`]: a forgotten node counts from `since`,
    /// which is older still, so it stays silent.
    pub fn forget_stale(&mut self, now: Instant) {
        let timeout = self.timeout;
        self.last_seen
            .retain(|_, seen| now.saturating_duration_since(*seen) <= timeout);
    }

    /// How long ago `node` last reported at `now`; `None` when not heard from since this leader started
    /// or longer ago than the timeout (forgotten).
    pub fn age(&self, node: &str, now: Instant) -> Option<Duration> {
        self.last_seen
            .get(node)
            .map(|seen| now.saturating_duration_since(*seen))
    }

    /// Nodes heard from and not yet forgotten.
    pub fn len(&self) -> usize {
        self.last_seen.len()
    }
}

#[cfg(test)]
#[path = "liveness_test.rs"]
mod tests;
