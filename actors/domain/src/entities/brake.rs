//! A weak subscription's brake (DEPLOYMENTS.md §4, "the brake"): when more of the consumer's nodes than
//! `max_failed` fail the selected version within `window_ms`, the version is held back there by `brake`.
//! [`Brake`] is the setting, [`BrakeRecord`] the small bounded record of failures it counts, [`Trip`] what
//! the hold keeps of the count that put it. Pure: the time of each failure is the report's `at`.

use crate::values::ids::Timestamp;
use crate::values::invalid::Invalid;
use crate::values::threshold::FailedNodes;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The default share of a consumer's nodes that may fail the selected version within the window.
pub const DEFAULT_MAX_FAILED: FailedNodes = FailedNodes::Percent(20);
/// The default window: 10 minutes.
pub const DEFAULT_WINDOW_MS: u64 = 600_000;
/// The shortest window: 1 second.
pub const MIN_WINDOW_MS: u64 = 1_000;
/// The longest window: 7 days.
pub const MAX_WINDOW_MS: u64 = 7 * 86_400_000;
/// The default minimum of failed nodes a share needs: 3 (1 of 4 is over 20%, but one node is no evidence).
pub const DEFAULT_MIN_FAILED: u32 = 3;
/// The largest minimum a brake may ask for.
pub const MAX_MIN_FAILED: u32 = 100_000;
/// The failed nodes a brake's event names; the others are counted ("and 5 more").
pub const NAMED_NODES: usize = 10;

fn on() -> bool {
    true
}

fn default_max_failed() -> FailedNodes {
    DEFAULT_MAX_FAILED
}

fn default_window() -> u64 {
    DEFAULT_WINDOW_MS
}

fn default_min_failed() -> u32 {
    DEFAULT_MIN_FAILED
}

/// A weak subscription's brake; unset on a subscription, it is on at over 20% and at least 3 nodes within
/// 10 minutes. `{"enabled": false}` turns it off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Brake {
    /// Whether it acts at all (default true).
    #[serde(default = "on")]
    pub enabled: bool,
    /// The failed nodes tolerated within the window: a count (at least 1) or a percentage (1–100%) of the
    /// consumer's nodes; one more holds the version back. Default 20%.
    #[serde(default = "default_max_failed")]
    pub max_failed: FailedNodes,
    /// How far back failures count (ms, 1 s to 7 days; default 10 minutes). The API also takes `window`
    /// (`"10m"`).
    #[serde(default = "default_window")]
    pub window_ms: u64,
    /// With a percentage: the fewest failed nodes that trip it (1 to 100,000; default 3), so one node of a
    /// small consumer is no evidence against a version. A count is its own minimum (this is not used).
    #[serde(default = "default_min_failed")]
    pub min_failed: u32,
}

impl Default for Brake {
    fn default() -> Self {
        Brake {
            enabled: true,
            max_failed: DEFAULT_MAX_FAILED,
            window_ms: DEFAULT_WINDOW_MS,
            min_failed: DEFAULT_MIN_FAILED,
        }
    }
}

impl Brake {
    /// Refuses a count of 0, a percentage of 0 or over 100, a window outside 1 s to 7 days.
    pub fn validate(&self) -> Result<(), Invalid> {
        match self.max_failed {
            FailedNodes::Count(0) => {
                return Err(Invalid::new(
                    "brake.max_failed",
                    0,
                    "a count is at least 1 (turn the brake off with \"enabled\": false)",
                ))
            }
            FailedNodes::Percent(p) if p == 0 || p > 100 => {
                return Err(Invalid::new(
                    "brake.max_failed",
                    format!("{p}%"),
                    "a percentage is 1% to 100%",
                ))
            }
            _ => {}
        }
        if !(1..=MAX_MIN_FAILED).contains(&self.min_failed) {
            return Err(Invalid::new(
                "brake.min_failed",
                self.min_failed,
                "a minimum is 1 to 100000 nodes",
            ));
        }
        if !(MIN_WINDOW_MS..=MAX_WINDOW_MS).contains(&self.window_ms) {
            return Err(Invalid::new(
                "brake.window_ms",
                self.window_ms,
                "a window is 1 s to 7 days",
            ));
        }
        Ok(())
    }

    /// `failed` of `nodes` nodes is more than the brake tolerates: over a count, or over a share and at
    /// least `min_failed`.
    pub fn exceeded(&self, failed: u32, nodes: u32) -> bool {
        match self.max_failed {
            FailedNodes::Count(n) => failed > n,
            FailedNodes::Percent(p) => {
                failed >= self.min_failed
                    && u64::from(failed) * 100 > u64::from(p) * u64::from(nodes)
            }
        }
    }
}

/// The failures of one version that a weak subscription's brake counts: each node once, with the time of
/// the report that showed its failure. It keeps only failures within the window and never more than the
/// count that trips the brake (it is cleared when it trips), so it is bounded by the consumer's size.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrakeRecord {
    /// The version these failures are of; a failure of another version starts the record again.
    pub version: u64,
    /// The failed nodes and when their failure was reported, oldest first.
    pub failures: Vec<(String, Timestamp)>,
}

impl BrakeRecord {
    /// Records that `node` (of a consumer of `nodes` nodes) failed `version` at `at`, forgetting what fell
    /// out of the window. Answers the trip, and the nodes it names, when the failures within the window now
    /// exceed the brake; the record is then cleared (the hold it puts never flaps: only a person lifts it).
    pub fn record(
        &mut self,
        brake: &Brake,
        nodes: u32,
        node: &str,
        version: u64,
        at: Timestamp,
    ) -> Option<(Trip, Named)> {
        if !brake.enabled {
            self.failures.clear();
            return None;
        }
        if self.version != version {
            self.version = version;
            self.failures.clear();
        }
        self.failures
            .retain(|(_, t)| at.saturating_sub(*t) < brake.window_ms);
        if !self.failures.iter().any(|(n, _)| n == node) {
            self.failures.push((node.to_string(), at));
        }
        let failed = self.failures.len() as u32;
        if !brake.exceeded(failed, nodes) {
            return None;
        }
        let named = Named::of(self.failures.drain(..).map(|(n, _)| n));
        Some(Trip {
            failed,
            nodes,
            max_failed: brake.max_failed,
            window_ms: brake.window_ms,
        })
        .map(|trip| (trip, named))
    }
}

/// The failed nodes a brake's event names: the first [`NAMED_NODES`] (oldest failure first), and how many
/// more there were. Not replicated on the hold: the event's message carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Named {
    /// The first nodes.
    pub first: Vec<String>,
    /// How many more failed.
    pub more: usize,
}

impl Named {
    /// The first [`NAMED_NODES`] of `nodes` and the count of the rest.
    pub fn of(nodes: impl IntoIterator<Item = String>) -> Named {
        let mut named = Named::default();
        for n in nodes {
            if named.first.len() < NAMED_NODES {
                named.first.push(n);
            } else {
                named.more += 1;
            }
        }
        named
    }
}

impl fmt::Display for Named {
    /// "c-0, c-1, c-2", "c-0, ..., c-9 and 5 more".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.first.join(", "))?;
        if self.more > 0 {
            write!(f, " and {} more", self.more)?;
        }
        Ok(())
    }
}

/// What tripped a brake: the count that put the hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trip {
    /// Nodes that failed the version within the window.
    pub failed: u32,
    /// The consumer's nodes then.
    pub nodes: u32,
    /// The brake's tolerance.
    pub max_failed: FailedNodes,
    /// The brake's window (ms).
    pub window_ms: u64,
}

impl fmt::Display for Trip {
    /// "3 of 10 nodes failed it within 10m, over 20%".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} nodes failed it within {}, over {}",
            self.failed,
            self.nodes,
            Span(self.window_ms),
            self.max_failed
        )
    }
}

/// A duration in ms written in its largest whole unit: `10m`, `1h`, `7d`, `90s`, `1500ms`.
pub struct Span(pub u64);

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0;
        for (unit, size) in [
            ("d", 86_400_000),
            ("h", 3_600_000),
            ("m", 60_000),
            ("s", 1_000),
        ] {
            if ms != 0 && ms.is_multiple_of(size) {
                return write!(f, "{}{unit}", ms / size);
            }
        }
        write!(f, "{ms}ms")
    }
}

#[cfg(test)]
#[path = "brake_test.rs"]
mod tests;
