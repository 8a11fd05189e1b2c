//! Node progress inside a deployment: window/batch admission, observation of reports, failure, rollback, outcome.
//!
//! Every step touches one node position and O(1) counters (plus O(log n) for watches), so a node report costs
//! O(log n) and never scans the node set. Admission walks cursors over the fixed order; each node is passed once.

use super::deployment::{Deployment, EventKind, NodePhase};
use super::errors::DomainError;
use super::ids::{Actor, Timestamp};
use super::model::{NodeResource, NodeState};
use super::status::{PausedBy, Status};
use super::strategy::Strategy;
use std::collections::BTreeMap;

/// The node store, as passed from `ClusterState`.
pub(crate) type Nodes = BTreeMap<String, NodeState>;

fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}

impl Deployment {
    fn resource_of<'a>(&self, nodes: &'a Nodes, p: usize) -> Option<&'a NodeResource> {
        nodes.get(&self.nodes[p].id).and_then(|n| n.resources.get(&self.resource))
    }

    fn node_event(&mut self, at: Timestamp, kind: EventKind, p: usize, message: Option<String>) {
        self.push_event(at, kind, Some(p as u32), Actor::System, message);
    }

    /// Admits nodes and evaluates the outcome. Only ROLLING_* statuses make progress.
    pub(crate) fn advance(&mut self, at: Timestamp, nodes: &Nodes) {
        for _ in 0..4 {
            let before = self.status;
            match before {
                Status::RollingForward => {
                    self.admit_forward(at, nodes);
                    self.evaluate_forward(at);
                }
                Status::RollingBack => {
                    self.admit_back(at, nodes);
                    self.evaluate_back(at);
                }
                _ => return,
            }
            if self.status == before {
                return;
            }
        }
    }

    fn admit_install(&mut self, p: usize, at: Timestamp, nodes: &Nodes) {
        if matches!(self.nodes[p].phase, NodePhase::Downloading | NodePhase::Downloaded) {
            self.download_used -= 1;
        }
        self.nodes[p].phase = NodePhase::Installing;
        self.touched.push(p as u32);
        self.install_used += 1;
        self.batch_open += 1;
        self.node_event(at, EventKind::Install, p, None);
        let nr = self.resource_of(nodes, p);
        self.observe(p, nr, at);
    }

    fn admit_forward(&mut self, at: Timestamp, nodes: &Nodes) {
        let n = self.nodes.len() as u32;
        let waiting = |ph: NodePhase| matches!(ph, NodePhase::Pending | NodePhase::Downloading | NodePhase::Downloaded);
        match self.settings.strategy.clone() {
            Strategy::Batch { sizes, autopause } => {
                if self.batch_open > 0 {
                    return;
                }
                while self.install_cursor < n && !waiting(self.nodes[self.install_cursor as usize].phase) {
                    self.install_cursor += 1;
                }
                if self.install_cursor >= n {
                    return;
                }
                let formed = self.batches.len() as u32;
                if autopause && formed > 0 && self.autopaused < formed {
                    self.autopaused = formed;
                    let msg = format!("batch {formed} finished");
                    if self.transition(Status::RollForwardPaused, at, Actor::System, Some(msg)).unwrap_or(false) {
                        self.paused_by = Some(PausedBy::Auto);
                    }
                    return;
                }
                let size = Strategy::batch_size(&sizes, self.batches.len());
                let mut count = 0;
                while count < size && self.install_cursor < n {
                    let p = self.install_cursor as usize;
                    self.install_cursor += 1;
                    if waiting(self.nodes[p].phase) {
                        count += 1;
                        self.admit_install(p, at, nodes);
                    }
                }
                self.batches.push(count);
            }
            strategy => {
                let (iw, dw) = match strategy {
                    Strategy::Rolling { install_window, download_window } => (install_window, download_window),
                    _ => (u32::MAX, 0),
                };
                while self.install_used < iw && self.install_cursor < n {
                    let p = self.install_cursor as usize;
                    self.install_cursor += 1;
                    if waiting(self.nodes[p].phase) {
                        self.admit_install(p, at, nodes);
                    }
                }
                self.download_cursor = self.download_cursor.max(self.install_cursor);
                while self.download_used < dw && self.download_cursor < n {
                    let p = self.download_cursor as usize;
                    self.download_cursor += 1;
                    if self.nodes[p].phase == NodePhase::Pending {
                        self.nodes[p].phase = NodePhase::Downloading;
                        self.download_used += 1;
                        self.node_event(at, EventKind::Download, p, None);
                        let nr = self.resource_of(nodes, p);
                        self.observe(p, nr, at);
                    }
                }
            }
        }
    }

    /// Reacts to the node's replicated state for this resource (after a report or on admission).
    pub(crate) fn observe(&mut self, p: usize, nr: Option<&NodeResource>, at: Timestamp) {
        let v = self.version;
        let current = nr.and_then(|r| r.current);
        match self.nodes[p].phase {
            NodePhase::Downloading => {
                let have = current == Some(v) || nr.and_then(|r| r.versions.get(&v)).is_some_and(|x| x.downloaded || x.installed);
                if have {
                    self.nodes[p].phase = NodePhase::Downloaded;
                }
            }
            phase @ (NodePhase::Installing | NodePhase::Watching) => {
                let vp = nr.and_then(|r| r.versions.get(&v));
                let failure = vp.is_some_and(|x| x.is_failure()) || (phase == NodePhase::Watching && current != Some(v));
                if failure {
                    if !self.nodes[p].error_seen {
                        self.nodes[p].error_seen = true;
                        let reason = vp.and_then(|x| x.error.as_deref()).map(clip).unwrap_or_else(|| "unhealthy".into());
                        self.attempt_failed(p, at, reason);
                    }
                    return;
                }
                let Some(vp) = vp.filter(|x| x.done) else {
                    self.nodes[p].error_seen = false;
                    return;
                };
                if vp.is_ok() && current == Some(v) && phase == NodePhase::Installing {
                    self.nodes[p].error_seen = false;
                    if self.settings.min_healthy_ms == 0 {
                        self.succeed(p, at);
                    } else {
                        let until = at.saturating_add(self.settings.min_healthy_ms);
                        self.nodes[p].phase = NodePhase::Watching;
                        self.nodes[p].watch_until = Some(until);
                        self.watches.insert((until, p as u32));
                        self.node_event(at, EventKind::Watch, p, None);
                    }
                }
            }
            NodePhase::RollingBack => {
                let Some(from) = self.nodes[p].from_version else { return };
                let fp = nr.and_then(|r| r.versions.get(&from));
                if current == Some(from) && !fp.is_some_and(|x| x.is_failure()) {
                    self.nodes[p].phase = NodePhase::RolledBack;
                    self.rb_used -= 1;
                    self.node_event(at, EventKind::RolledBack, p, None);
                } else if fp.is_some_and(|x| x.is_failure()) {
                    self.nodes[p].phase = NodePhase::Failed;
                    self.rb_used -= 1;
                    self.rb_failed += 1;
                    let reason = fp.and_then(|x| x.error.as_deref()).map(clip).unwrap_or_else(|| "unhealthy".into());
                    self.node_event(at, EventKind::Failed, p, Some(format!("rollback to version {from} failed: {reason}")));
                }
            }
            _ => {}
        }
    }

    fn unwatch(&mut self, p: usize) {
        if let Some(until) = self.nodes[p].watch_until.take() {
            self.watches.remove(&(until, p as u32));
        }
    }

    pub(crate) fn succeed(&mut self, p: usize, at: Timestamp) {
        self.unwatch(p);
        self.nodes[p].phase = NodePhase::Succeeded;
        self.succeeded += 1;
        self.install_used -= 1;
        self.batch_open = self.batch_open.saturating_sub(1);
        self.node_event(at, EventKind::Succeeded, p, None);
    }

    fn attempt_failed(&mut self, p: usize, at: Timestamp, reason: String) {
        self.unwatch(p);
        self.nodes[p].failures += 1;
        let failures = self.nodes[p].failures;
        if failures > self.settings.max_failures_per_node {
            // A failed node keeps its install slot (rolling); it finishes its batch.
            self.nodes[p].phase = NodePhase::Failed;
            self.failed += 1;
            self.batch_open = self.batch_open.saturating_sub(1);
            self.node_event(at, EventKind::Failed, p, Some(format!("attempt {failures} failed: {reason}")));
        } else {
            self.nodes[p].phase = NodePhase::Installing;
            self.node_event(at, EventKind::Retry, p, Some(format!("attempt {failures} failed: {reason}")));
        }
    }

    /// The node's activity, interest or membership changed: it leaves its window and counts as neither.
    pub(crate) fn skip(&mut self, p: usize, at: Timestamp, reason: &str) {
        match self.nodes[p].phase {
            NodePhase::Pending => {}
            NodePhase::Downloading | NodePhase::Downloaded => self.download_used -= 1,
            NodePhase::Installing | NodePhase::Watching => {
                self.unwatch(p);
                self.install_used -= 1;
                self.batch_open = self.batch_open.saturating_sub(1);
            }
            NodePhase::RollingBack => self.rb_used -= 1,
            NodePhase::Succeeded | NodePhase::Failed | NodePhase::Skipped | NodePhase::RolledBack => return,
        }
        self.nodes[p].phase = NodePhase::Skipped;
        self.skipped += 1;
        self.node_event(at, EventKind::Skipped, p, Some(reason.to_string()));
    }

    /// Watches that ended by `at` succeed.
    pub(crate) fn finish_watches(&mut self, at: Timestamp) {
        while let Some(&(until, p)) = self.watches.first() {
            if until > at {
                break;
            }
            let p = p as usize;
            if self.nodes[p].phase == NodePhase::Watching {
                self.succeed(p, at);
            } else {
                self.watches.pop_first();
                self.nodes[p].watch_until = None;
            }
        }
    }

    fn evaluate_forward(&mut self, at: Timestamp) {
        let n = self.nodes.len() as u32;
        let tolerated = self.settings.failed_nodes_tolerated();
        if let Strategy::Rolling { install_window, .. } = self.settings.strategy {
            if self.failed >= install_window {
                let msg = format!("install window of {install_window} is entirely taken by failed nodes");
                return self.fail(at, msg);
            }
        }
        if self.failed > tolerated {
            return self.fail(at, format!("{} nodes failed; {tolerated} tolerated", self.failed));
        }
        let needed = self.settings.completion.needed(n - self.skipped);
        let quorum = self.settings.completion.quorum.is_some();
        if quorum && self.succeeded >= needed {
            let msg = format!("quorum met: {} of {} nodes succeeded", self.succeeded, n - self.skipped);
            let _ = self.transition(Status::RolledForward, at, Actor::System, Some(msg));
            return;
        }
        if self.succeeded + self.failed + self.skipped >= n {
            if !quorum || self.succeeded >= needed {
                let _ = self.transition(Status::RolledForward, at, Actor::System, None);
            } else {
                self.fail(at, format!("quorum not met: {} of {needed} needed nodes succeeded", self.succeeded));
            }
        }
    }

    /// Completion timeout: ROLLED_FORWARD if the quorum (default: all nodes) is met, FAILED otherwise.
    pub(crate) fn complete_on_timeout(&mut self, at: Timestamp) {
        let considered = self.nodes.len() as u32 - self.skipped;
        let needed = self.settings.completion.needed(considered);
        let msg = format!("completion timeout: {} of {considered} nodes succeeded, {needed} needed", self.succeeded);
        let to = if self.succeeded >= needed { Status::RolledForward } else { Status::Failed };
        let _ = self.transition(to, at, Actor::Timer, Some(msg));
    }

    /// Failure going forward: roll back or FAILED; failure going back: FAILED.
    fn fail(&mut self, at: Timestamp, message: String) {
        if self.status.is_forward() && self.settings.rollback_on_failure {
            let _ = self.start_rollback(at, Actor::System, Some(message));
        } else {
            let _ = self.transition(Status::Failed, at, Actor::System, Some(message));
        }
    }

    /// → ROLLING_BACK: stops prefetching and prepares to re-target touched nodes in reverse order.
    pub(crate) fn start_rollback(&mut self, at: Timestamp, by: Actor, message: Option<String>) -> Result<bool, DomainError> {
        if !self.transition(Status::RollingBack, at, by, message)? {
            return Ok(false);
        }
        for p in self.install_cursor..self.download_cursor {
            let node = &mut self.nodes[p as usize];
            if matches!(node.phase, NodePhase::Downloading | NodePhase::Downloaded) {
                node.phase = NodePhase::Pending;
            }
        }
        self.download_used = 0;
        if self.coordinated() && self.pulse_expired(at) {
            self.block_on_pulse(at);
        }
        Ok(true)
    }

    fn admit_back_one(&mut self, at: Timestamp, nodes: &Nodes) {
        let t = self.touched.len();
        let p = self.touched[t - 1 - self.rb_cursor as usize] as usize;
        self.rb_cursor += 1;
        if self.nodes[p].phase == NodePhase::Skipped {
            return;
        }
        self.unwatch(p);
        if self.nodes[p].from_version.is_none() {
            self.nodes[p].phase = NodePhase::RolledBack;
            self.node_event(at, EventKind::RolledBack, p, Some("no previous version to restore".into()));
            return;
        }
        self.nodes[p].phase = NodePhase::RollingBack;
        self.rb_used += 1;
        self.node_event(at, EventKind::Rollback, p, None);
        let nr = self.resource_of(nodes, p);
        self.observe(p, nr, at);
    }

    fn admit_back(&mut self, at: Timestamp, nodes: &Nodes) {
        let t = self.touched.len() as u32;
        match self.settings.strategy.clone() {
            Strategy::Batch { .. } => {
                while self.rb_used == 0 && self.rb_cursor < t && self.rb_failed == 0 {
                    let k = self.batches.len() - 1 - (self.rb_batch as usize).min(self.batches.len() - 1);
                    let size = self.batches[k];
                    self.rb_batch += 1;
                    for _ in 0..size {
                        if self.rb_cursor < t {
                            self.admit_back_one(at, nodes);
                        }
                    }
                }
            }
            strategy => {
                let iw = match strategy {
                    Strategy::Rolling { install_window, .. } => install_window,
                    _ => u32::MAX,
                };
                while self.rb_used < iw && self.rb_cursor < t && self.rb_failed == 0 {
                    self.admit_back_one(at, nodes);
                }
            }
        }
    }

    fn evaluate_back(&mut self, at: Timestamp) {
        if self.rb_failed > 0 {
            let msg = format!("{} nodes failed to roll back", self.rb_failed);
            let _ = self.transition(Status::Failed, at, Actor::System, Some(msg));
        } else if self.rb_cursor as usize >= self.touched.len() && self.rb_used == 0 {
            let _ = self.transition(Status::RolledBack, at, Actor::System, None);
        }
    }
}

#[cfg(test)]
#[path = "progress_test.rs"]
mod tests;
