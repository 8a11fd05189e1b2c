//! The leader's housekeeping, as Nomad's `core_sched` keeps its garbage collection apart: forgetting
//! nodes (in no consumer and no active deployment, silent longer than `forget_nodes_after`:
//! `ForgetNodes`, domain `forget.rs`) and retention (more terminal deployments keep their node
//! detail than `deployment_history`: `Prune`, domain `retention.rs`). It decides what to propose
//! and when; the supervisor proposes it and hands the answer back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::host::{read_with, Host, ProposeError};
use super::liveness::Liveness;
use crate::domain::{Command, Response, MAX_NODES_PER_COMMAND};

/// Forgetting and retention, one proposal of each at a time.
pub struct Housekeeping {
    host: Arc<dyn Host>,
    /// Silence after which a node in no consumer is forgotten; zero: never.
    forget_after: Duration,
    /// Terminal deployments that keep their node detail.
    keep: u32,
    /// A `ForgetNodes` is being committed: the next check waits for it.
    forgetting: bool,
    /// Leadership began, or a `Prune` failed, since retention was last checked.
    retention_due: bool,
    /// Terminal deployments in the state when retention was last checked.
    terminal_seen: usize,
    /// A `Prune` is being committed.
    pruning: bool,
}

impl Housekeeping {
    /// Housekeeping that forgets nodes after `forget_after` (zero: never) and keeps the detail of
    /// `keep` terminal deployments.
    pub fn new(host: Arc<dyn Host>, forget_after: Duration, keep: u32) -> Self {
        Self {
            host,
            forget_after,
            keep,
            forgetting: false,
            retention_due: false,
            terminal_seen: 0,
            pruning: false,
        }
    }

    /// Leadership began: retention is checked whatever the count of terminal deployments.
    pub fn leadership_began(&mut self) {
        self.retention_due = true;
    }

    /// The `ForgetNodes` to propose at `now`, if any: nodes in no consumer and no active deployment
    /// that `liveness` finds silent longer than the forget time, at most [`MAX_NODES_PER_COMMAND`]
    /// of them. `None` while the previous one is being committed (until
    /// [`Housekeeping::forgotten`]).
    pub fn forget(&mut self, liveness: &Liveness, now: Instant) -> Option<Command> {
        if self.forgetting || self.forget_after.is_zero() {
            return None;
        }
        let mut forget: Vec<String> = read_with(&self.host, |s| {
            liveness.silent_to_forget(s.forgettable_nodes(), now)
        });
        if forget.is_empty() {
            return None;
        }
        forget.truncate(MAX_NODES_PER_COMMAND);
        tracing::info!(nodes = forget.len(), first = %forget[0], "forgetting nodes silent and in no consumer");
        self.forgetting = true;
        Some(Command::ForgetNodes { nodes: forget })
    }

    /// The `ForgetNodes` proposed by [`Housekeeping::forget`] was committed or not.
    pub fn forgotten(&mut self, result: Result<Response, ProposeError>) {
        self.forgetting = false;
        if let Err(e) = result {
            tracing::warn!(error = %e, "ForgetNodes not committed");
        }
    }

    /// The `Prune` to propose, if any: when deployments ended (or leadership began) and more
    /// terminal deployments keep their detail than `deployment_history`; one at a time (until
    /// [`Housekeeping::pruned`]). Counting terminal deployments is O(1); only a change scans them.
    pub fn prune(&mut self) -> Option<Command> {
        if self.pruning {
            return None;
        }
        let terminal = read_with(&self.host, |s| s.terminal_deployments());
        if terminal == self.terminal_seen && !self.retention_due {
            return None;
        }
        self.terminal_seen = terminal;
        self.retention_due = false;
        let keep = self.keep;
        if terminal <= keep as usize {
            return None;
        }
        let unpruned = read_with(&self.host, |s| s.unpruned_terminal());
        if unpruned <= keep as usize {
            return None;
        }
        tracing::info!(unpruned, keep, "pruning the oldest finished deployments");
        self.pruning = true;
        Some(Command::Prune { keep })
    }

    /// The `Prune` proposed by [`Housekeeping::prune`] was committed or not. `true`: look again
    /// now, since deployments that ended while it was committed were skipped by the checks
    /// meanwhile; a failed one is retried at the next state change.
    pub fn pruned(&mut self, result: Result<Response, ProposeError>) -> bool {
        self.pruning = false;
        match result {
            Ok(_) => true,
            Err(e) => {
                self.retention_due = true;
                tracing::warn!(error = %e, "Prune not committed");
                false
            }
        }
    }
}

#[cfg(test)]
#[path = "housekeeping_test.rs"]
mod tests;
