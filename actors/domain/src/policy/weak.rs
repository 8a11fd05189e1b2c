//! Maintenance windows for weak subscriptions (issue 35 §6): a weak subscription's nodes move to its
//! selected version on their own, with no deployment, so the windows that hold a deployment of the same
//! resource on the same consumer must hold them too.
//!
//! Design. A weak node's target is computed at read time from the replicated state (`views/targets.rs`),
//! by whichever server answers the node's report; a server's own clock must never enter it, or two servers
//! would answer the same node differently around a window's edge. So the *decision* is replicated: at the
//! end of every apply while a window exists (the policies' pass, `state/handlers.rs`), [`WeakGate::refresh`]
//! judges every weak subscription with the windows' own [`verdict`] at the leader-stamped time and records
//! the ones held as a [`WeakWait`] (which windows, since when, whether rollbacks may pass), with the earliest
//! time any of the verdicts next changes (`check_at`). It judges at the end of an apply whose command can
//! change a verdict ([`rejudges`]: windows, subscriptions, consumers) and of any apply at or after
//! `check_at`; the leader proposes a `Tick` when that time comes (its supervisor arms a timer for it),
//! so a window that opens or closes on the clock takes effect with no other command. Reads only look the
//! record up ([`WeakGate::gate`]), so every server answers alike; between a window's edge and the first
//! apply after it (the `Tick`'s commit) the record still says what it said before the edge.
//!
//! While held, a node keeps the version it runs (its target says install nothing); the exceptions are a
//! node already on the way to the target (it holds that version, not finished: in flight, it finishes, as
//! `overrun: finish_in_flight` lets a deployment's installing nodes finish) and, unless a holding window says
//! `allow_rollback: false`, a move back to an older version (a hold or a retraction of what it runs). A
//! node that runs nothing gets nothing. Budgets and fleet limits hold weak nodes through their slots
//! (`weak_slots.rs`).

use crate::entities::model::{Consumer, Mode};
use crate::policy::admission::{verdict, WindowNow};
use crate::values::ids::Timestamp;
use convoy_collections::CowMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Why a weak subscription's nodes wait: the windows holding it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WeakWait {
    /// The windows holding it, by name.
    pub windows: Vec<String>,
    /// Since when (leader-stamped ms: the first apply that found it held).
    pub since: Timestamp,
    /// Whether a move back to an older version may pass (no holding window says `allow_rollback: false`).
    pub rollback: bool,
    /// When one of the windows that apply to it next opens or closes (ms; absent: never).
    #[serde(default)]
    pub next_change: Option<Timestamp>,
}

/// The replicated record of the weak subscriptions the windows hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeakGate {
    /// The held weak subscriptions, by (consumer, resource).
    #[serde(default)]
    pub waits: BTreeMap<(String, String), WeakWait>,
    /// The earliest time a window that applies to a weak subscription opens or closes: the leader
    /// ticks then.
    #[serde(default)]
    pub check_at: Option<Timestamp>,
}

impl WeakGate {
    /// Whether there is anything to judge: windows exist, or a record from when they did.
    pub fn in_use(&self, windows: usize) -> bool {
        windows > 0 || !self.waits.is_empty() || self.check_at.is_some()
    }

    /// Judges every weak subscription of `consumers` under the windows `now` (at `at`): records the held
    /// ones, forgets the others (and those of subscriptions gone or no longer weak), and keeps the earliest
    /// next window change. Answers whether anything changed.
    pub fn refresh(
        &mut self,
        consumers: &CowMap<String, Consumer>,
        now: &[WindowNow<'_>],
        at: Timestamp,
    ) -> bool {
        let mut waits = BTreeMap::new();
        let mut check_at: Option<Timestamp> = None;
        if !now.is_empty() {
            for (name, c) in consumers.iter() {
                for (r, sub) in &c.subscriptions {
                    if sub.mode != Mode::Weak {
                        continue;
                    }
                    let v = verdict(now, name, r);
                    if let Some(n) = v.next {
                        check_at = Some(check_at.map_or(n, |c| c.min(n)));
                    }
                    if !v.closed {
                        continue;
                    }
                    let key = (name.clone(), r.clone());
                    let since = self.waits.get(&key).map_or(at, |w| w.since);
                    waits.insert(
                        key,
                        WeakWait {
                            windows: v.by,
                            since,
                            rollback: !v.hold_rollback,
                            next_change: v.next,
                        },
                    );
                }
            }
        }
        let changed = waits != self.waits || check_at != self.check_at;
        if changed {
            self.waits = waits;
            self.check_at = check_at;
        }
        changed
    }

    /// Whether the windows hold `consumer`'s weak subscription to `resource`, and how.
    pub fn wait(&self, consumer: &str, resource: &str) -> Option<&WeakWait> {
        if self.waits.is_empty() {
            return None;
        }
        self.waits
            .get(&(consumer.to_string(), resource.to_string()))
    }

    /// Whether a tick is due at `now` (the leader's clock): a window change recorded has come.
    pub fn due(&self, now: Timestamp) -> bool {
        self.check_at.is_some_and(|t| t <= now)
    }
}

#[cfg(test)]
#[path = "weak_test.rs"]
mod tests;
