//! One simulated node: holds versions per resource and moves them through download, install and
//! done at simulated speeds, failing at a given rate or on chosen versions — a pure state machine driven
//! by targets and the time passed in, reporting in the domain's own report types. Every piece of work it
//! starts and ends is returned as a [`Work`] edge, so a test can check windows from the nodes' side.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

pub use convoy_actors::domain::{ResourceReport, Target, VersionProgress};

/// What a node is doing with a version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Prefetching a version it may download but not yet install.
    Prefetch,
    /// Installing (or switching back to) a version it may install.
    Install,
}

/// A piece of work starting or ending on one resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    /// The resource.
    pub resource: String,
    /// The version worked on.
    pub version: u64,
    /// What kind of work.
    pub phase: Phase,
    /// `false` when it starts, `true` when it ends (finished, failed, abandoned or promoted).
    pub ended: bool,
}

/// How fast and how reliably simulated nodes work.
#[derive(Clone, Copy, Debug)]
pub struct Behaviour {
    /// Time to download a version.
    pub download: Duration,
    /// Time to install a version.
    pub install: Duration,
    /// Probability that an install fails.
    pub fail_rate: f64,
}

/// Where work on one resource stands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stage {
    Downloading,
    Installing,
    SwitchingBack,
}

/// Work in progress on one version of a resource.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Busy {
    version: u64,
    phase: Phase,
    stage: Stage,
    until: Duration,
}

/// A simulated node's resources and what it is busy with; time is passed in.
#[derive(Clone, Debug, Default)]
pub struct SimNode {
    resources: BTreeMap<String, ResourceReport>,
    busy: BTreeMap<String, Busy>,
    switch_back: Duration,
    failing: BTreeSet<u64>,
}

impl SimNode {
    /// A node that already runs `version` of `resource` (a fleet that existed before convoy).
    pub fn running(resource: &str, version: u64) -> Self {
        let mut node = SimNode::default();
        let progress = VersionProgress {
            downloaded: true,
            installed: true,
            done: true,
            error: None,
            healthy: Some(true),
        };
        node.resources.insert(
            resource.to_string(),
            ResourceReport {
                interested: Some(true),
                current: Some(version),
                versions: BTreeMap::from([(version, progress)]),
                removed: false,
                log: None,
            },
        );
        node
    }

    /// Switching back to a version it installed before (a rollback) takes `time`; the default is at once.
    pub fn with_switch_back(mut self, time: Duration) -> Self {
        self.switch_back = time;
        self
    }

    /// Installs of these versions fail, whatever the failure rate.
    pub fn failing(mut self, versions: impl IntoIterator<Item = u64>) -> Self {
        self.failing.extend(versions);
        self
    }

    /// What the node reports now.
    pub fn report(&self) -> &BTreeMap<String, ResourceReport> {
        &self.resources
    }

    /// The version of `resource` it runs.
    pub fn current(&self, resource: &str) -> Option<u64> {
        self.resources.get(resource).and_then(|r| r.current)
    }

    /// When the work under way ends next, if any.
    pub fn next_due(&self) -> Option<Duration> {
        self.busy.values().map(|b| b.until).min()
    }

    /// Finishes what is due at `now`, then acts on `targets`. `roll`, uniform in [0, 1), decides
    /// whether an install ending now fails (below the behaviour's rate).
    pub fn step(
        &mut self,
        targets: &BTreeMap<String, Target>,
        now: Duration,
        behaviour: &Behaviour,
        roll: f64,
    ) -> Vec<Work> {
        let mut work = self.finish_due(now, behaviour, roll);
        work.extend(self.take_targets(targets, now, behaviour));
        work
    }

    /// Ends the work due at `now`: a download that may install goes on installing; an install is
    /// done (or failed); a switch back takes effect.
    pub fn finish_due(&mut self, now: Duration, behaviour: &Behaviour, roll: f64) -> Vec<Work> {
        let mut work = Vec::new();
        // A download that goes on installing may end within the same call when the install is
        // instant; each resource passes through at most two stages.
        for _ in 0..2 {
            let due: Vec<(String, Busy)> = self
                .busy
                .iter()
                .filter(|(_, b)| b.until <= now)
                .map(|(r, b)| (r.clone(), *b))
                .collect();
            for (resource, busy) in due {
                self.finish(&resource, busy, now, behaviour, roll, &mut work);
            }
        }
        work
    }

    fn finish(
        &mut self,
        resource: &str,
        busy: Busy,
        now: Duration,
        behaviour: &Behaviour,
        roll: f64,
        work: &mut Vec<Work>,
    ) {
        let state = self.resources.entry(resource.to_string()).or_default();
        let progress = state.versions.entry(busy.version).or_default();
        let mut ended = true;
        match busy.stage {
            Stage::Downloading => {
                progress.downloaded = true;
                if busy.phase == Phase::Install {
                    // Allowed to install: go on without waiting for the next answer.
                    let installing = Busy {
                        stage: Stage::Installing,
                        until: now + behaviour.install,
                        ..busy
                    };
                    self.busy.insert(resource.to_string(), installing);
                    ended = false;
                }
            }
            Stage::Installing => {
                progress.done = true;
                if roll < behaviour.fail_rate || self.failing.contains(&busy.version) {
                    progress.error = Some(format!(
                        "simulated install failure of version {}",
                        busy.version
                    ));
                    progress.healthy = Some(false);
                } else {
                    progress.installed = true;
                    progress.healthy = Some(true);
                    state.current = Some(busy.version);
                }
            }
            Stage::SwitchingBack => state.current = Some(busy.version),
        }
        if ended {
            self.busy.remove(resource);
            work.push(edge(resource, busy.version, busy.phase, true));
        }
    }

    /// Acts on the server's answer at `now`: drops work on a version it is no longer asked for,
    /// turns a prefetch into an install when the install is allowed, and starts what is allowed.
    pub fn take_targets(
        &mut self,
        targets: &BTreeMap<String, Target>,
        now: Duration,
        behaviour: &Behaviour,
    ) -> Vec<Work> {
        let mut work = Vec::new();
        for (resource, target) in targets {
            if target.uninstall {
                // Removed at once: drop any work on it and report it removed.
                if let Some(busy) = self.busy.get(resource).copied() {
                    self.abandon(resource, busy, &mut work);
                }
                if let Some(state) = self.resources.get_mut(resource) {
                    state.current = None;
                    state.versions.clear();
                    state.removed = true;
                }
                continue;
            }
            if let Some(busy) = self.busy.get(resource).copied() {
                if busy.version != target.version {
                    self.abandon(resource, busy, &mut work);
                } else if busy.phase == Phase::Prefetch && target.install {
                    work.push(edge(resource, busy.version, Phase::Prefetch, true));
                    work.push(edge(resource, busy.version, Phase::Install, false));
                    let promoted = Busy {
                        phase: Phase::Install,
                        ..busy
                    };
                    self.busy.insert(resource.clone(), promoted);
                }
            }
            if !self.busy.contains_key(resource) {
                self.start(resource, target, now, behaviour, &mut work);
            }
        }
        work
    }

    /// A node told to run another version than the one it works on drops that work, as an agent
    /// that cancels an install it is no longer asked for (a rollback reaching a node mid-install).
    fn abandon(&mut self, resource: &str, busy: Busy, work: &mut Vec<Work>) {
        self.busy.remove(resource);
        if let Some(state) = self.resources.get_mut(resource) {
            if state.versions.get(&busy.version).is_some_and(|p| !p.done) {
                state.versions.remove(&busy.version);
            }
        }
        work.push(edge(resource, busy.version, busy.phase, true));
    }

    fn start(
        &mut self,
        resource: &str,
        target: &Target,
        now: Duration,
        behaviour: &Behaviour,
        work: &mut Vec<Work>,
    ) {
        let state = self.resources.entry(resource.to_string()).or_default();
        state.removed = false;
        let held = state.versions.get(&target.version).cloned();
        let (stage, phase, took) = match held {
            // Never seen: fetch it when allowed.
            None if target.download || target.install => {
                state
                    .versions
                    .insert(target.version, VersionProgress::default());
                let phase = if target.install {
                    Phase::Install
                } else {
                    Phase::Prefetch
                };
                (Stage::Downloading, phase, behaviour.download)
            }
            // Held and installed before (a rollback target): switch back.
            Some(p) if p.installed && target.install && state.current != Some(target.version) => {
                if self.switch_back.is_zero() {
                    state.current = Some(target.version);
                    work.push(edge(resource, target.version, Phase::Install, false));
                    work.push(edge(resource, target.version, Phase::Install, true));
                    return;
                }
                (Stage::SwitchingBack, Phase::Install, self.switch_back)
            }
            // Downloaded, not yet installed, and allowed to install.
            Some(p) if p.downloaded && !p.done && target.install => {
                (Stage::Installing, Phase::Install, behaviour.install)
            }
            _ => return,
        };
        work.push(edge(resource, target.version, phase, false));
        self.busy.insert(
            resource.to_string(),
            Busy {
                version: target.version,
                phase,
                stage,
                until: now + took,
            },
        );
    }
}

fn edge(resource: &str, version: u64, phase: Phase, ended: bool) -> Work {
    Work {
        resource: resource.to_string(),
        version,
        phase,
        ended,
    }
}

#[cfg(test)]
#[path = "node_test.rs"]
mod tests;
