//! Node liveness on the leader, one entry per node whatever the number of its consumers: when each
//! node last reported, which active nodes have been silent longer than the node timeout, and which
//! have been silent longer than `forget_nodes_after` (to be forgotten if they are in no consumer).

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The most nodes the table holds. Only nodes of a consumer are recorded, so the replicated node table
/// bounds it already; this bounds it whatever that holds. A node reporting while the table is full is
/// not recorded (it counts from the leader's start, as if it had not reported) and the refusal is logged
/// once per filling.
pub const MAX_LIVENESS_ENTRIES: usize = 4_000_000;

/// When each node last reported to this leader. Kept in memory only: a new leader starts with an
/// empty table and gives every node one full timeout from its own start.
#[derive(Debug)]
pub struct Liveness {
    /// Silence longer than this makes a node inactive.
    timeout: Duration,
    /// Since when this leader watches (the "last seen" of a node it has not heard from yet).
    since: Instant,
    /// Last report per node id.
    last_seen: HashMap<String, Instant>,
    /// Silence longer than this makes a node in no consumer forgotten; `None`: never.
    forget_after: Option<Duration>,
    /// The most entries (see [`MAX_LIVENESS_ENTRIES`]).
    limit: usize,
    /// The table refused a node since it was last below its limit (logged once).
    full: bool,
}

impl Liveness {
    /// An empty table watching from `now`.
    pub fn new(timeout: Duration, now: Instant) -> Self {
        Self {
            timeout,
            since: now,
            last_seen: HashMap::new(),
            forget_after: None,
            limit: MAX_LIVENESS_ENTRIES,
            full: false,
        }
    }

    /// The same table holding at most `limit` nodes (tests).
    #[cfg(test)]
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// The same table, also judging which nodes were silent longer than `after` (see
    /// [`Liveness::silent_to_forget`]); `Duration::ZERO` means never.
    pub fn forgetting_after(mut self, after: Duration) -> Self {
        self.forget_after = (!after.is_zero()).then_some(after);
        self
    }

    /// Of `candidates`, those not heard from for longer than the forget time at `now` (a node not
    /// heard from since this leader started counts from its start, so a new leader never forgets a
    /// node sooner than the forget time after it took over). Empty when forgetting is off.
    pub fn silent_to_forget<'a>(
        &self,
        candidates: impl IntoIterator<Item = &'a str>,
        now: Instant,
    ) -> Vec<String> {
        let Some(after) = self.forget_after else {
            return Vec::new();
        };
        candidates
            .into_iter()
            .filter(|n| {
                let seen = self.last_seen.get(*n).copied().unwrap_or(self.since);
                now.saturating_duration_since(seen) > after
            })
            .map(str::to_string)
            .collect()
    }

    /// Forgets everything and watches from `now` (this server just became leader).
    pub fn restart(&mut self, now: Instant) {
        self.since = now;
        self.last_seen.clear();
    }

    /// `node` reported at `now`.
    pub fn seen(&mut self, node: &str, now: Instant) {
        let len = self.last_seen.len();
        match self.last_seen.get_mut(node) {
            Some(t) => *t = now,
            None if len >= self.limit => {
                if !self.full {
                    tracing::warn!(
                        limit = self.limit,
                        "liveness table full: nodes reporting now are not recorded"
                    );
                    self.full = true;
                }
            }
            None => {
                self.full = false;
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

    /// Forgets reports older than the timeout (or the forget time, if longer) at `now`, so the table
    /// stays bounded by the nodes heard from recently. Changes no answer of [`Liveness::silent`] nor
    /// of [`Liveness::silent_to_forget`]: a forgotten report counts from `since`, which is older
    /// still, so its node stays silent.
    pub fn forget_stale(&mut self, now: Instant) {
        let timeout = self.timeout.max(self.forget_after.unwrap_or_default());
        self.last_seen
            .retain(|_, seen| now.saturating_duration_since(*seen) <= timeout);
    }

    /// How long ago `node` last reported at `now`; `None` when not heard from since this leader started
    /// or longer ago than the timeout (forgotten).
    pub fn age(&self, node: &str, now: Instant) -> Option<Duration> {
        self.last_seen
            .get(node)
            .map(|seen| now.saturating_duration_since(*seen))
            .filter(|age| *age <= self.timeout)
    }

    /// Nodes heard from and not yet forgotten.
    pub fn len(&self) -> usize {
        self.last_seen.len()
    }

    /// Whether no node was heard from (or all were forgotten).
    pub fn is_empty(&self) -> bool {
        self.last_seen.is_empty()
    }
}

#[cfg(test)]
#[path = "liveness_test.rs"]
mod tests;
