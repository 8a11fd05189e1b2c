//! Node progress inside a deployment: window/batch admission (and the fetch slots), observation of reports,
//! failure; how the deployment then judges itself is `judgement.rs`.
//!
//! Every step touches one node position and O(1) counters (plus O(log n) for watches), so a node report costs
//! O(log n) and never scans the node set. Admission walks cursors over the fixed order; each node is passed once.

use crate::deployment::reasons::Wait;
use crate::deployment::seen::{Fact, Seen};
use crate::deployment::{Deployment, DeploymentNode, EventKind, NodePhase};
use crate::entities::model::NodeResource;
use crate::values::ids::{Actor, Timestamp};
use crate::values::status::Status;
use crate::values::strategy::{Plan, Strategy};

fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}

/// Summarises a node's state for one deployment (target `v`, rollback target `from`) as a set of facts.
pub(crate) fn seen_bits(v: u64, from: Option<u64>, nr: Option<&NodeResource>) -> Seen {
    let Some(nr) = nr else {
        // Never reported the resource: it holds nothing, which is all a rollback to "no version" asks.
        return if from.is_none() {
            Seen::NOTHING.with(Fact::BackOk)
        } else {
            Seen::NOTHING
        };
    };
    let mut bits = Seen::NOTHING;
    let current = nr.current == Some(v);
    if current {
        bits = bits.with(Fact::Current).with(Fact::Have);
    }
    if let Some(x) = nr.versions.get(&v) {
        if x.downloaded || x.installed {
            bits = bits.with(Fact::Have);
        }
        if x.done {
            bits = bits.with(Fact::Done);
        }
        if x.is_failure() {
            bits = bits.with(Fact::Fail);
        } else if current && x.is_ok() {
            bits = bits.with(Fact::Ok);
        }
    }
    match from {
        Some(from) => {
            let failed = nr.versions.get(&from).is_some_and(|x| x.is_failure());
            if failed {
                bits = bits.with(Fact::BackFail);
            } else if nr.current == Some(from) {
                bits = bits.with(Fact::BackOk);
            }
        }
        // Nothing to restore: back when it runs and holds nothing (it removed the resource).
        None if nr.current.is_none() && nr.versions.is_empty() => bits = bits.with(Fact::BackOk),
        None => {}
    }
    bits
}

/// The error text behind a failure bit, if the node gave one.
pub(crate) fn failure_reason(
    v: u64,
    from: Option<u64>,
    nr: Option<&NodeResource>,
) -> Option<String> {
    let nr = nr?;
    let of = |x: u64| {
        nr.versions
            .get(&x)
            .filter(|p| p.is_failure())
            .map(|p| p.error.clone().unwrap_or_else(|| "unhealthy".into()))
    };
    of(v).or_else(|| from.and_then(of))
}

/// The cluster's policies (disruption budgets, maintenance windows) as forward admission sees them: a
/// deployment does not see the others, so what they allow is computed above it (`policy/`) and asked
/// here, node by node, before a node is admitted to install or told to download.
pub(crate) trait Gate {
    /// Takes an install slot for node `node`, or refuses (admission then waits in the fixed order); `fetch`:
    /// the node does not hold the version and was not downloading it, so the install is a new download too.
    fn admit(&mut self, node: &str, fetch: bool) -> bool;

    /// Takes a download slot for node `node` (told to prefetch), or refuses.
    fn download(&mut self, _node: &str) -> bool {
        true
    }
}

/// The gate a command's own handler passes: every node admitted (no policy in force), or none yet
/// (`Deferred`: the policies' pass at the end of the apply admits them, `policy/admission.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum HandlerGate {
    /// No policy in force: the deployment's own windows decide.
    Open,
    /// Policies are in force: installs wait for the policies' pass.
    Deferred,
    /// A fleet download limit is in force too: installs and downloads wait for the policies' pass.
    DeferredAll,
}

impl Gate for HandlerGate {
    fn admit(&mut self, _node: &str, _fetch: bool) -> bool {
        *self == HandlerGate::Open
    }

    fn download(&mut self, _node: &str) -> bool {
        *self != HandlerGate::DeferredAll
    }
}

/// Whether admitting `node` to install makes it download too: pending, not holding the version.
fn fetches(node: &DeploymentNode) -> bool {
    node.phase == NodePhase::Pending && !node.seen.has(Fact::Have)
}

/// What forward admission needs of the strategy's plan, copied out of the settings.
enum Admit {
    /// The next batch's size, and whether to pause after each batch.
    Batch { size: u32, autopause: bool },
    /// The install and download windows, and the most nodes told to fetch at once.
    Windows {
        install: u32,
        download: u32,
        fetch: u32,
    },
}

impl Deployment {
    /// Records what happened to node `p`, caused by `by`: the sender of the report that moved it (and
    /// the nodes that report let in), or `system` for what convoy decides on its own.
    pub(crate) fn node_event(
        &mut self,
        at: Timestamp,
        kind: EventKind,
        p: usize,
        by: &Actor,
        message: Option<String>,
    ) {
        self.push_event(at, kind, Some(p as u32), by.clone(), message);
    }

    /// Admits nodes and evaluates the outcome. Only ROLLING_* statuses make progress. The node events
    /// this causes are recorded `by` (what caused the round: a report's sender, or `system`); the
    /// deployment's own transitions are convoy's judgement, recorded `system`.
    pub(crate) fn advance(&mut self, at: Timestamp, by: &Actor, gate: &mut dyn Gate) {
        // A round repeats only when it changed the status, and the status only moves on: ROLLING_FORWARD →
        // ROLLING_BACK → a held or terminal status, where the next round returns (nothing here moves a
        // deployment back to ROLLING_FORWARD). So at most three rounds run; the cap of 4 states that bound.
        for _ in 0..4 {
            let before = self.status;
            match before {
                Status::RollingForward => {
                    self.admit_forward(at, by, &mut *gate);
                    self.evaluate_forward(at);
                }
                Status::RollingBack => {
                    self.admit_back(at, by);
                    self.evaluate_back(at);
                }
                _ => return,
            }
            if self.status == before {
                return;
            }
        }
    }

    /// Node `p` is told to fetch the version while it does not hold it (installing without it) and so takes
    /// a download slot: only under a strategy with a fetch limit, and only going forward (a rollback frees
    /// every download slot). Downloading and downloaded nodes take theirs apart.
    fn fetch_held(&self, p: usize) -> bool {
        self.settings.strategy.admission().fetch_limit.is_some()
            && self.status.is_forward()
            && matches!(
                self.nodes[p].phase,
                NodePhase::Installing | NodePhase::Watching
            )
            && !self.nodes[p].seen.has(Fact::Have)
    }

    /// Runs `f`, which may change node `p`'s phase or what it holds, and takes or frees the download slot
    /// of an install without the artifact accordingly ([`Deployment::fetch_held`]).
    pub(crate) fn fetching<R>(&mut self, p: usize, f: impl FnOnce(&mut Self) -> R) -> R {
        let before = self.fetch_held(p);
        let r = f(self);
        match (before, self.fetch_held(p)) {
            (false, true) => self.forward.download_used += 1,
            (true, false) => {
                self.forward.download_used = self.forward.download_used.saturating_sub(1)
            }
            _ => {}
        }
        r
    }

    fn admit_install(&mut self, p: usize, at: Timestamp, by: &Actor) {
        self.fetching(p, |d| d.admit_install_now(p, at, by));
        self.sync_node_clock(p, at);
    }

    fn admit_install_now(&mut self, p: usize, at: Timestamp, by: &Actor) {
        if matches!(
            self.nodes[p].phase,
            NodePhase::Downloading | NodePhase::Downloaded
        ) {
            self.forward.download_used -= 1;
        }
        self.nodes[p].phase = NodePhase::Installing;
        if self.touched.len() == self.touched.capacity() {
            // Each node is touched at most once: grow to the node count at once.
            let left = self.nodes.len().saturating_sub(self.touched.len());
            self.touched.reserve(left.max(1));
        }
        self.touched.push(p as u32);
        self.forward.take_install();
        self.node_event(at, EventKind::Install, p, by, None);
        self.react(p, self.nodes[p].seen, None, at, by);
    }

    fn admit_forward(&mut self, at: Timestamp, by: &Actor, gate: &mut dyn Gate) {
        self.admit_forward_now(at, by, gate);
        // Waiting only for its start jitter, with nothing of its own in flight, its clock stands still.
        let jitter = self.jitter_at.is_some() && !self.in_flight();
        if jitter != self.waits().has(Wait::StartJitter) {
            self.set_policy_wait(Wait::StartJitter, jitter, at);
        }
    }

    fn admit_forward_now(&mut self, at: Timestamp, by: &Actor, gate: &mut dyn Gate) {
        if self.jitter_at.is_some() {
            // Set again below if a node still waits for its start jitter.
            self.jitter_at = None;
        }
        if self.gate_holds(0, at) {
            return;
        }
        let n = self.nodes.len() as u32;
        let waiting = |ph: NodePhase| {
            matches!(
                ph,
                NodePhase::Pending | NodePhase::Downloading | NodePhase::Downloaded
            )
        };
        // Copied out of the settings rather than cloning the strategy (a batch strategy's sizes are a `Vec`)
        // on every report.
        let admit = match self.settings.strategy.admission().plan {
            Plan::Batches { sizes, autopause } => Admit::Batch {
                size: Strategy::batch_size(sizes, self.batches.len()),
                autopause,
            },
            Plan::Windows {
                install, download, ..
            } => Admit::Windows {
                install,
                download,
                fetch: self
                    .settings
                    .strategy
                    .admission()
                    .fetch_limit
                    .unwrap_or(u32::MAX),
            },
        };
        match admit {
            Admit::Batch { size, autopause } => {
                if self.forward.batch_open > 0 {
                    return;
                }
                while self.forward.install_cursor < n
                    && !waiting(self.nodes[self.forward.install_cursor as usize].phase)
                {
                    self.forward.install_cursor += 1;
                }
                if self.forward.install_cursor >= n {
                    return;
                }
                let formed = self.batches.len() as u32;
                // Both run: the analysis measures the batch while the bake time passes.
                if self.analysis_holds(formed, at) | self.bake_holds(formed, at) {
                    return;
                }
                if autopause && formed > 0 && self.forward.autopaused < formed {
                    self.forward.autopaused = formed;
                    let msg = format!("batch {formed} finished");
                    self.hold(Wait::Auto, at, Actor::System, Some(msg));
                    return;
                }
                if self.gate_holds(formed, at) {
                    return;
                }
                let mut count = 0;
                while count < size && self.forward.install_cursor < n {
                    let p = self.forward.install_cursor as usize;
                    let node = &self.nodes[p];
                    let wait = waiting(node.phase);
                    if wait {
                        if let Some(t) = self.jitter_wait(&node.id, at) {
                            self.jitter_at = Some(t);
                            break;
                        }
                        if !gate.admit(&node.id, fetches(node)) {
                            break;
                        }
                    }
                    self.forward.install_cursor += 1;
                    if wait {
                        count += 1;
                        self.admit_install(p, at, by);
                    }
                }
                // A batch the policies cut short is what it is; one they held whole is not formed yet.
                if count > 0 {
                    self.batches.push(count);
                }
            }
            Admit::Windows {
                install: iw,
                download: dw,
                fetch,
            } => {
                if self.analysis_wave_holds(iw, at) {
                    return;
                }
                // Rolling in waves (a bake or gates between them): the next wave forms once the last one
                // finished and what stands between them let it (DEPLOYMENTS.md §14).
                let waves = self.settings.waves();
                let open = !waves || (self.forward.batch_open == 0 && self.wave_may_form(at));
                let admitted = self.touched.len();
                while open && self.forward.install_used < iw && self.forward.install_cursor < n {
                    let p = self.forward.install_cursor as usize;
                    let node = &self.nodes[p];
                    // A node that must still fetch the version installs only with a download slot (its
                    // own, or a free one): the download window caps every download (DEPLOYMENTS.md §5).
                    if node.phase == NodePhase::Pending
                        && !node.seen.has(Fact::Have)
                        && self.forward.download_used >= fetch
                    {
                        break;
                    }
                    let wait = waiting(node.phase);
                    if wait {
                        if let Some(t) = self.jitter_wait(&node.id, at) {
                            self.jitter_at = Some(t);
                            break;
                        }
                        if !gate.admit(&node.id, fetches(node)) {
                            break;
                        }
                    }
                    self.forward.install_cursor += 1;
                    if wait {
                        self.admit_install(p, at, by);
                    }
                }
                if waves && self.touched.len() > admitted {
                    self.pace.waves += 1;
                }
                self.forward.download_cursor = self
                    .forward
                    .download_cursor
                    .max(self.forward.install_cursor);
                while self.forward.download_used < dw && self.forward.download_cursor < n {
                    let p = self.forward.download_cursor as usize;
                    let node = &self.nodes[p];
                    if node.phase == NodePhase::Pending {
                        if let Some(t) = self.jitter_wait(&node.id, at) {
                            self.jitter_at = Some(self.jitter_at.map_or(t, |j| j.min(t)));
                            break;
                        }
                        if !gate.download(&node.id) {
                            break;
                        }
                    }
                    self.forward.download_cursor += 1;
                    if self.nodes[p].phase == NodePhase::Pending {
                        self.nodes[p].phase = NodePhase::Downloading;
                        self.forward.download_used += 1;
                        self.node_event(at, EventKind::Download, p, by, None);
                        self.react(p, self.nodes[p].seen, None, at, by);
                    }
                }
            }
        }
    }

    /// Stores the summary `bits` (see [`seen_bits`]) of a report sent `by` and reacts; the cache lets
    /// admission avoid node lookups.
    pub(crate) fn record(
        &mut self,
        p: usize,
        bits: Seen,
        reason: Option<String>,
        at: Timestamp,
        by: &Actor,
    ) {
        self.fetching(p, |d| {
            d.nodes[p].seen = bits;
            d.react(p, bits, reason, at, by);
        });
        self.sync_node_clock(p, at);
    }

    /// Notes what node `p` now holds (`bits`) without acting on it: a batch of reports is noted whole before
    /// any report of it is acted on ([`Deployment::record`]), so a rollback that one of them starts walks back
    /// over what the others said (a node counted back as holding nothing must not hold the version).
    pub(crate) fn note(&mut self, p: usize, bits: Seen) {
        self.fetching(p, |d| d.nodes[p].seen = bits);
        // A node counted back that runs the version after all waits to be re-targeted from now on, so the
        // nodes of one batch that land on it are re-targeted in the walk back's order, not the batch's.
        if self.nodes[p].phase == NodePhase::RolledBack && bits.has(Fact::Current) {
            self.queue_again(p as u32);
        }
    }

    /// Moves node `p` on what it holds (`bits`); the events are recorded `by`.
    pub(crate) fn react(
        &mut self,
        p: usize,
        bits: Seen,
        reason: Option<String>,
        at: Timestamp,
        by: &Actor,
    ) {
        let reason = || {
            reason
                .clone()
                .map(|r| clip(&r))
                .unwrap_or_else(|| "install failed".into())
        };
        match self.nodes[p].phase {
            NodePhase::Downloading if bits.has(Fact::Have) => {
                self.nodes[p].phase = NodePhase::Downloaded;
            }
            // No node outcome is judged while the deployment waits: what the node said is kept (`seen`) and
            // judged once it moves again (`rejudge_held`), so a node that fails and recovers meanwhile is
            // watched again rather than counted failed (Aurora's updater: a paused update judges nothing).
            NodePhase::Installing | NodePhase::Watching if !self.moving() => {}
            phase @ (NodePhase::Installing | NodePhase::Watching) => {
                let failure = bits.has(Fact::Fail)
                    || (phase == NodePhase::Watching && !bits.has(Fact::Current));
                if failure {
                    if !self.nodes[p].error_seen {
                        self.nodes[p].error_seen = true;
                        self.attempt_failed(p, at, reason(), by);
                    }
                    return;
                }
                if !bits.has(Fact::Done) {
                    self.clear_error_seen(p);
                    return;
                }
                if bits.has(Fact::Ok) && phase == NodePhase::Installing {
                    self.clear_error_seen(p);
                    if self.settings.min_healthy_ms == 0 {
                        self.succeed(p, at, by);
                    } else {
                        let until = at.saturating_add(self.settings.min_healthy_ms);
                        self.nodes[p].phase = NodePhase::Watching;
                        self.nodes[p].watch_until = Some(until);
                        self.watches.start(until, p as u32);
                        self.node_event(at, EventKind::Watch, p, by, None);
                    }
                }
            }
            NodePhase::RollingBack => {
                let from = self.nodes[p].from_version;
                if bits.has(Fact::BackOk) {
                    self.nodes[p].phase = NodePhase::RolledBack;
                    self.rollback.used -= 1;
                    let msg = from.is_none().then(|| "uninstalled".to_string());
                    self.node_event(at, EventKind::RolledBack, p, by, msg);
                } else if let (Some(from), true) = (from, bits.has(Fact::BackFail)) {
                    self.nodes[p].phase = NodePhase::Failed;
                    self.rollback.used -= 1;
                    self.rollback.failed += 1;
                    self.node_event(
                        at,
                        EventKind::Failed,
                        p,
                        by,
                        Some(format!("rollback to version {from} failed: {}", reason())),
                    );
                }
            }
            // Counted back while an install of the deployment's version was still under way (its
            // report was overtaken by the rollback), it now runs that version: roll it back again
            // when a rollback slot is free.
            NodePhase::RolledBack if bits.has(Fact::Current) => self.queue_again(p as u32),
            _ => {}
        }
    }

    /// Forgets that node `p` reported an error. Writes only when it had: a write to a node goes through its
    /// copy-on-write chunk (an atomic compare-exchange), a read does not.
    fn clear_error_seen(&mut self, p: usize) {
        if self.nodes[p].error_seen {
            self.nodes[p].error_seen = false;
        }
    }

    /// Ends node `p`'s watch, if any (writes only then, as [`Deployment::clear_error_seen`]).
    pub(crate) fn unwatch(&mut self, p: usize) {
        if let Some(until) = self.nodes[p].watch_until {
            self.nodes[p].watch_until = None;
            self.watches.stop(until, p as u32);
        }
    }

    pub(crate) fn succeed(&mut self, p: usize, at: Timestamp, by: &Actor) {
        self.unwatch(p);
        self.nodes[p].phase = NodePhase::Succeeded;
        self.tally.succeeded += 1;
        self.forward.release_install();
        self.node_event(at, EventKind::Succeeded, p, by, None);
        self.sync_node_clock(p, at);
        self.progress_made(at);
    }

    pub(crate) fn attempt_failed(&mut self, p: usize, at: Timestamp, reason: String, by: &Actor) {
        self.unwatch(p);
        self.nodes[p].failures += 1;
        let failures = self.nodes[p].failures;
        if failures > self.settings.max_failures_per_node {
            // A failed node keeps its install slot (rolling); it finishes its batch.
            self.nodes[p].phase = NodePhase::Failed;
            self.tally.failed += 1;
            self.forward.close_batch_slot();
            self.node_event(
                at,
                EventKind::Failed,
                p,
                by,
                Some(format!("attempt {failures} failed: {reason}")),
            );
        } else {
            self.nodes[p].phase = NodePhase::Installing;
            self.node_event(
                at,
                EventKind::Retry,
                p,
                by,
                Some(format!("attempt {failures} failed: {reason}")),
            );
        }
        self.restart_node_clock(p, at);
    }

    /// The node's activity, interest or membership changed: it leaves its window and counts as neither.
    /// `by` is who said so: the sender of a report, or `system` (a silent node, a consumer's node list).
    pub(crate) fn skip(&mut self, p: usize, at: Timestamp, reason: &str, by: &Actor) {
        self.fetching(p, |d| d.skip_now(p, at, reason, by));
    }

    fn skip_now(&mut self, p: usize, at: Timestamp, reason: &str, by: &Actor) {
        match self.nodes[p].phase {
            NodePhase::Pending => {}
            NodePhase::Downloading | NodePhase::Downloaded => self.forward.download_used -= 1,
            NodePhase::Installing | NodePhase::Watching => {
                self.unwatch(p);
                self.forward.release_install();
            }
            NodePhase::RollingBack => self.rollback.used -= 1,
            NodePhase::Succeeded
            | NodePhase::Failed
            | NodePhase::Skipped
            | NodePhase::RolledBack
            | NodePhase::TimedOut => return,
        }
        self.nodes[p].phase = NodePhase::Skipped;
        self.sync_node_clock(p, at);
        self.tally.skipped += 1;
        self.node_event(at, EventKind::Skipped, p, by, Some(reason.to_string()));
    }

    /// Watches that ended by `at` succeed (convoy's own decision: `system`); none while the deployment waits.
    pub(crate) fn finish_watches(&mut self, at: Timestamp) {
        if !self.moving() {
            return;
        }
        while let Some(p) = self.watches.first_ended(at) {
            let p = p as usize;
            if self.nodes[p].phase == NodePhase::Watching {
                self.fetching(p, |d| d.succeed(p, at, &Actor::System));
            } else {
                self.watches.drop_first();
                self.nodes[p].watch_until = None;
            }
        }
    }
}

#[cfg(test)]
#[path = "progress_test.rs"]
mod tests;
