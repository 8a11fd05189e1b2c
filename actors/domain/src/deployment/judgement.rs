//! How a deployment judges itself going forward (DEPLOYMENTS.md §5): failures against the tolerance and the
//! window rule, quorums, "no success is never ROLLED_FORWARD", and the completion timeout that finishes.

use crate::deployment::seen::Fact;
use crate::deployment::{Deployment, EventKind, NodePhase};
use crate::values::ids::{Actor, Timestamp};
use crate::values::status::Status;
use crate::values::strategy::OnTimeout;

/// Failed nodes a failure event names (then "and N more").
pub const NAMED_FAILED: usize = 10;
/// Longest reason of a failed node a failure event gives, in characters.
pub const NAMED_REASON: usize = 100;

impl Deployment {
    /// Judges going forward (DEPLOYMENTS.md §5): more failed nodes than tolerated (none unless
    /// `max_failed_nodes` says so), or a window that can no longer move, take the failure path; a quorum
    /// completes early; once every node is done it is ROLLED_FORWARD if a node succeeded and the quorum (if
    /// set) is met. All-at-once without `fail_fast` judges failures only once every node is done.
    pub(crate) fn evaluate_forward(&mut self, at: Timestamp) {
        let n = self.nodes.len() as u32;
        let tolerated = self.settings.failed_nodes_tolerated(n);
        let admission = self.settings.strategy.admission();
        let t = self.tally.clone();
        let done = t.ended() >= n;
        if done || !admission.judge_when_done {
            if let (Some(install_window), false) = (admission.window_rule, done) {
                // Every slot that could still be used is taken by a failed node while nodes wait: the
                // window can no longer move. (Once every node is done the tolerance judges.)
                let usable = install_window.min(n - t.succeeded - t.skipped);
                if t.failed >= usable {
                    let msg = format!(
                        "install window of {install_window} is entirely taken by failed nodes ({} failed); {}",
                        t.failed,
                        self.failed_named()
                    );
                    return self.fail(at, msg);
                }
            }
            if t.failed > tolerated {
                let named = self.failed_named();
                return self.fail(
                    at,
                    format!(
                        "{} failed; {tolerated} tolerated; {named}",
                        crate::values::count::count(t.failed, "node")
                    ),
                );
            }
        }
        let considered = t.considered(n);
        let needed = self.settings.completion.needed(considered);
        let quorum = self.settings.completion.quorum.is_some();
        if quorum && t.succeeded >= needed && t.succeeded > 0 && t.failed <= tolerated {
            // The quorum ends it early only once its analysis passed (DEPLOYMENTS.md §15): per_batch
            // measures the last batch formed and waits for its verdict; background waits for a success.
            if self.analysis_holds(self.analysis_last_phase(), at)
                || self.analysis_unpassed().is_some()
            {
                return;
            }
            let msg = format!(
                "quorum met: {} of {considered} nodes succeeded",
                t.succeeded
            );
            let _ = self.transition(Status::RolledForward, at, Actor::System, Some(msg));
            return;
        }
        if done
            && t.succeeded > 0
            && (self.analysis_holds(self.analysis_last_phase(), at) || self.await_analysis(at))
        {
            return;
        }
        if done {
            // Skipped nodes are not successes: a deployment of nodes none of which succeeded failed
            // (one with no node at all has nothing to fail).
            if t.succeeded == 0 && n > 0 {
                let msg = format!("no node succeeded: {}", self.ended_counts(0));
                self.fail(at, msg);
            } else if !quorum || t.succeeded >= needed {
                let msg = (t.succeeded < n).then(|| self.ended_counts(0));
                let _ = self.transition(Status::RolledForward, at, Actor::System, msg);
            } else {
                self.fail(
                    at,
                    format!(
                        "quorum not met: {} of {needed} needed nodes succeeded",
                        t.succeeded
                    ),
                );
            }
        }
    }

    /// The failed nodes and why, for a failure event (issue 36; Aurora names the instance): `failed: web-1
    /// (attempt 1 failed: exit 3), web-4 (...)`, the first [`NAMED_FAILED`] in the deployment's order, then
    /// "and N more"; each reason is the node's newest failure event, clipped to [`NAMED_REASON`] characters.
    pub(crate) fn failed_named(&self) -> String {
        let failed: Vec<usize> = (0..self.nodes.len())
            .filter(|&p| self.nodes[p].phase == NodePhase::Failed)
            .collect();
        let shown = &failed[..failed.len().min(NAMED_FAILED)];
        let mut reasons: Vec<Option<&str>> = vec![None; shown.len()];
        let mut left = shown.len();
        for e in self.events.iter().rev() {
            if left == 0 {
                break;
            }
            let Some(i) = e
                .node
                .filter(|_| e.kind == EventKind::Failed)
                .and_then(|n| shown.iter().position(|&p| p == n as usize))
            else {
                continue;
            };
            if reasons[i].is_none() {
                reasons[i] = Some(e.message.as_deref().unwrap_or("failed"));
                left -= 1;
            }
        }
        let named: Vec<String> = shown
            .iter()
            .zip(reasons)
            .map(|(&p, why)| {
                let why: String = why.unwrap_or("failed").chars().take(NAMED_REASON).collect();
                format!("{} ({why})", self.nodes[p].id)
            })
            .collect();
        let mut s = format!("failed: {}", named.join(", "));
        if failed.len() > shown.len() {
            s.push_str(&format!(" and {} more", failed.len() - shown.len()));
        }
        s
    }

    /// `17 of 20 nodes succeeded, 2 failed, 1 skipped` (failed, skipped and timed out only when not zero).
    fn ended_counts(&self, timed_out: u32) -> String {
        let t = &self.tally;
        let mut s = format!("{} of {} nodes succeeded", t.succeeded, self.nodes.len());
        for (n, what) in [
            (t.failed, "failed"),
            (t.skipped, "skipped"),
            (timed_out, "timed out"),
        ] {
            if n > 0 {
                s.push_str(&format!(", {n} {what}"));
            }
        }
        s
    }

    /// Node `p`, not done at the completion timeout, is recorded `timed_out`: it leaves its window and
    /// keeps what it has.
    fn time_out(&mut self, p: usize) -> bool {
        self.fetching(p, |d| {
            match d.nodes[p].phase {
                NodePhase::Pending => {}
                NodePhase::Downloading | NodePhase::Downloaded => d.forward.download_used -= 1,
                NodePhase::Installing | NodePhase::Watching => {
                    d.unwatch(p);
                    d.forward.release_install();
                }
                NodePhase::Succeeded
                | NodePhase::Failed
                | NodePhase::Skipped
                | NodePhase::RollingBack
                | NodePhase::RolledBack
                | NodePhase::TimedOut => return false,
            }
            d.nodes[p].phase = NodePhase::TimedOut;
            true
        })
    }

    /// Node `p` passed its healthy or download deadline at `at` (DEPLOYMENTS.md §14), `reason` naming it.
    /// With a completion timeout, a node on its last attempt that reported no failure is semi-failed,
    /// not failed: it is recorded `timed_out` (leaving its window, kept where it is, counted as neither)
    /// and the deployment finishes at its timeout without it (seed 003: completion conditions exist so
    /// that such nodes cannot block an update). Otherwise it counts one failed attempt (by `timer`).
    pub(crate) fn deadline_passed(&mut self, p: usize, at: Timestamp, reason: String) {
        let node = &self.nodes[p];
        let last_attempt = node.failures >= self.settings.max_failures_per_node;
        let semi_failed = !node.seen.has(Fact::Fail);
        if self.settings.completion.timeout_ms.is_some() && last_attempt && semi_failed {
            if self.time_out(p) {
                let msg = format!(
                    "timed out: {reason}; the completion timeout ends the deployment without it"
                );
                self.node_event(at, EventKind::Skipped, p, &Actor::Timer, Some(msg));
            }
            return;
        }
        self.fetching(p, |d| d.attempt_failed(p, at, reason, &Actor::Timer));
    }

    /// Completion timeout (DEPLOYMENTS.md §5): the nodes not done are recorded `timed_out` and left where
    /// they are. With `on_timeout: finish` (the default) the deployment is ROLLED_FORWARD unless more nodes
    /// failed than tolerated, a quorum that was set is not met or no node succeeded; with `fail` it is
    /// ROLLED_FORWARD only if the quorum (default: every node) is met. Either way, not while its analysis has
    /// not passed (`analysis_unpassed`). Otherwise the failure path: roll back with `rollback_on_failure`
    /// (the default), FAILED without.
    pub(crate) fn complete_on_timeout(&mut self, at: Timestamp) {
        let n = self.nodes.len();
        // Those timed out at their deadline before (`deadline_passed`), and those not done now.
        let mut timed_out = 0;
        for p in 0..n {
            if self.nodes[p].phase == NodePhase::TimedOut || self.time_out(p) {
                timed_out += 1;
            }
        }
        let t = self.tally.clone();
        let considered = t.considered(n as u32) - timed_out;
        let tolerated = self.settings.failed_nodes_tolerated(n as u32);
        let counts = self.ended_counts(timed_out);
        let unpassed = self.analysis_unpassed();
        let completion = &self.settings.completion;
        let failure = match completion.on_timeout {
            OnTimeout::Finish => {
                let quorum = completion
                    .quorum
                    .map(|_| completion.needed(t.considered(n as u32)));
                if t.failed > tolerated {
                    let named = self.failed_named();
                    Some(format!(
                        "{} failed; {tolerated} tolerated; {named}",
                        crate::values::count::count(t.failed, "node")
                    ))
                } else if let Some(needed) = quorum.filter(|q| t.succeeded < *q) {
                    Some(format!("quorum not met: {needed} needed"))
                } else if t.succeeded == 0 && n > 0 {
                    Some("no node succeeded".into())
                } else {
                    None
                }
            }
            OnTimeout::Fail => {
                let needed = completion.needed(considered + timed_out);
                (t.succeeded < needed || (t.succeeded == 0 && n > 0))
                    .then(|| format!("{needed} needed"))
            }
        };
        // An analysis that has not passed is no success: the timeout takes the failure path and says so.
        match failure.or(unpassed) {
            None => {
                let msg = format!("completion timeout: {counts}");
                let _ = self.transition(Status::RolledForward, at, Actor::Timer, Some(msg));
            }
            Some(why) => {
                let msg = format!("completion timeout: {counts}; {why}");
                self.fail_by(at, Actor::Timer, msg);
            }
        }
    }
}

#[cfg(test)]
#[path = "judgement_test.rs"]
mod tests;
