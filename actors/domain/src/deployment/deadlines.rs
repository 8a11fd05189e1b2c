//! Deadlines (DEPLOYMENTS.md §14). Per node: `healthy_deadline_ms` from its install start (admitted to install
//! and holding the version, not while it downloads) to its success, and the optional `download_deadline_ms`
//! from its admission to install without the version until it holds it; a node past either counts one failed
//! attempt (by `timer`) and uses its retries, so a node that reports but never finishes cannot hold its slot
//! forever. Per deployment: `progress_deadline_ms`, reset when a node succeeds; past it the deployment takes the
//! failure path. Every deadline is a point in active time (`active.rs`): waiting uses none of it.

use crate::deployment::pace::NodeClock;
use crate::deployment::seen::Fact;
use crate::deployment::{Deployment, NodePhase};
use crate::values::ids::{Actor, Timestamp};
use convoy_collections::CowMap;

impl Deployment {
    /// The deadline node `p` should be on now: forward only, by its phase and whether it holds the version.
    fn wanted_clock(&self, p: usize) -> Option<NodeClock> {
        if !self.status.is_forward() {
            return None;
        }
        let node = &self.nodes[p];
        match node.phase {
            NodePhase::Installing | NodePhase::Watching if node.seen.has(Fact::Have) => {
                Some(NodeClock::Healthy)
            }
            NodePhase::Installing => self
                .settings
                .pacing
                .download_deadline_ms
                .map(|_| NodeClock::Download),
            _ => None,
        }
    }

    fn clock_ms(&self, clock: NodeClock) -> u64 {
        match clock {
            NodeClock::Healthy => self.settings.healthy_deadline_ms(),
            NodeClock::Download => self
                .settings
                .pacing
                .download_deadline_ms
                .unwrap_or(u64::MAX),
        }
    }

    /// Puts node `p` on the deadline its phase calls for, from `at` when it changes (a node that keeps its
    /// kind of deadline keeps its time); O(log n).
    pub(crate) fn sync_node_clock(&mut self, p: usize, at: Timestamp) {
        let want = self.wanted_clock(p);
        let key = p as u32;
        let current = self.pace.nodes.get(&key).copied();
        if current.map(|(_, kind)| kind) == want {
            return;
        }
        if let Some((t, _)) = current {
            self.pace.due.remove(&(t, key));
            self.pace.nodes.remove(&key);
        }
        if let Some(kind) = want {
            let t = self.active_at(at).saturating_add(self.clock_ms(kind));
            self.pace.due.insert((t, key), kind);
            self.pace.nodes.insert(key, (t, kind));
        }
    }

    /// Node `p` starts its deadline again from `at` (it failed an attempt and retries).
    pub(crate) fn restart_node_clock(&mut self, p: usize, at: Timestamp) {
        let key = p as u32;
        if let Some((t, _)) = self.pace.nodes.remove(&key) {
            self.pace.due.remove(&(t, key));
        }
        self.sync_node_clock(p, at);
    }

    /// Drops every node deadline (the deployment rolls back or ended).
    pub(crate) fn clear_node_clocks(&mut self) {
        if !self.pace.nodes.is_empty() {
            self.pace.due = CowMap::new();
            self.pace.nodes = CowMap::new();
        }
    }

    /// The deadline of node `p` as a wall time, if it is on one and the deployment moves (waiting, its
    /// deadline stands still).
    pub fn node_deadline(&self, p: usize) -> Option<Timestamp> {
        let (t, _) = self.pace.nodes.get(&(p as u32))?;
        self.active_wall(*t)
    }

    /// Nodes past their deadline at `at` count one failed attempt each (by `timer`).
    pub(crate) fn expire_node_clocks(&mut self, at: Timestamp) {
        let now = self.active_at(at);
        while let Some((&(t, key), &kind)) = self.pace.due.first_key_value() {
            if t > now {
                return;
            }
            self.pace.due.remove(&(t, key));
            self.pace.nodes.remove(&key);
            let p = key as usize;
            if self.wanted_clock(p) != Some(kind) {
                continue;
            }
            let ms = self.clock_ms(kind);
            let reason = match kind {
                NodeClock::Healthy => {
                    format!("not done and healthy within its healthy deadline of {ms} ms from its install start")
                }
                NodeClock::Download => {
                    format!("did not hold the version within its download deadline of {ms} ms")
                }
            };
            self.deadline_passed(p, at, reason);
        }
    }

    /// A node succeeded at `at`: the progress deadline starts again.
    pub(crate) fn progress_made(&mut self, at: Timestamp) {
        let Some(ms) = self.settings.pacing.progress_deadline_ms else {
            return;
        };
        if self.pace.progress.is_some() {
            self.pace.progress = Some(self.active_at(at).saturating_add(ms));
        }
    }

    /// Past the progress deadline at `at`: the failure path (by `timer`).
    pub(crate) fn expire_progress(&mut self, at: Timestamp) {
        let Some(until) = self.pace.progress else {
            return;
        };
        if until > self.active_at(at) {
            return;
        }
        self.pace.progress = None;
        let ms = self
            .settings
            .pacing
            .progress_deadline_ms
            .unwrap_or_default();
        self.fail_by(
            at,
            Actor::Timer,
            format!("progress deadline: no node succeeded for {ms} ms"),
        );
    }
}

#[cfg(test)]
#[path = "deadlines_test.rs"]
mod tests;
