//! One simulated node: holds versions per resource and moves them through download, install and
//! done at simulated speeds, failing at a given rate — a pure state machine driven by targets.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What the server allows for one resource (the `targets` of a report answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The version to have.
    pub version: u64,
    /// May download it.
    pub download: bool,
    /// May install it.
    pub install: bool,
}

/// One version's progress, as reported.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Downloaded.
    pub downloaded: bool,
    /// Installed.
    pub installed: bool,
    /// Finished (success when `error` is empty).
    pub done: bool,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Health.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub healthy: Option<bool>,
}

/// A node's state for one resource, as reported.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceState {
    /// The version it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<u64>,
    /// Every version it holds.
    pub versions: BTreeMap<u64, Progress>,
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

/// Work in progress on one version.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Busy {
    Downloading { version: u64, until: Duration },
    Installing { version: u64, until: Duration },
}

/// A simulated node's resources and what it is busy with; time is passed in.
#[derive(Clone, Debug, Default)]
pub struct SimNode {
    resources: BTreeMap<String, ResourceState>,
    busy: BTreeMap<String, Busy>,
}

impl SimNode {
    /// A node that already runs `version` of `resource` (a fleet that existed before convoy).
    pub fn running(resource: &str, version: u64) -> Self {
        let mut node = SimNode::default();
        let progress = Progress {
            downloaded: true,
            installed: true,
            done: true,
            error: None,
            healthy: Some(true),
        };
        node.resources.insert(
            resource.to_string(),
            ResourceState {
                current: Some(version),
                versions: BTreeMap::from([(version, progress)]),
            },
        );
        node
    }

    /// What the node reports now.
    pub fn report(&self) -> &BTreeMap<String, ResourceState> {
        &self.resources
    }

    /// The version of `resource` it runs.
    #[cfg(test)]
    pub fn current(&self, resource: &str) -> Option<u64> {
        self.resources.get(resource).and_then(|r| r.current)
    }

    /// Advances to `now`: finishes work that is due, then starts what the targets allow.
    /// `roll` is a uniform random number in [0, 1) deciding a failure.
    pub fn step(
        &mut self,
        targets: &BTreeMap<String, Target>,
        now: Duration,
        behaviour: &Behaviour,
        roll: f64,
    ) {
        self.finish_due(now, behaviour, roll);
        for (resource, target) in targets {
            if self.busy.contains_key(resource) {
                continue;
            }
            let state = self.resources.entry(resource.clone()).or_default();
            let held = state.versions.get(&target.version).cloned();
            match held {
                // Never seen: fetch it when allowed.
                None if target.download || target.install => {
                    state.versions.insert(target.version, Progress::default());
                    self.busy.insert(
                        resource.clone(),
                        Busy::Downloading {
                            version: target.version,
                            until: now + behaviour.download,
                        },
                    );
                }
                // Held and installed before (a rollback target): switch back at once.
                Some(p)
                    if p.installed && target.install && state.current != Some(target.version) =>
                {
                    state.current = Some(target.version);
                }
                // Downloaded, not yet installed, and allowed to install.
                Some(p) if p.downloaded && !p.installed && !p.done && target.install => {
                    self.busy.insert(
                        resource.clone(),
                        Busy::Installing {
                            version: target.version,
                            until: now + behaviour.install,
                        },
                    );
                }
                _ => {}
            }
        }
    }

    fn finish_due(&mut self, now: Duration, behaviour: &Behaviour, roll: f64) {
        let due: Vec<(String, Busy)> = self
            .busy
            .iter()
            .filter(|(_, b)| match b {
                Busy::Downloading { until, .. } | Busy::Installing { until, .. } => *until <= now,
            })
            .map(|(r, b)| (r.clone(), *b))
            .collect();
        for (resource, busy) in due {
            self.busy.remove(&resource);
            let state = self.resources.entry(resource).or_default();
            match busy {
                Busy::Downloading { version, .. } => {
                    state.versions.entry(version).or_default().downloaded = true;
                }
                Busy::Installing { version, .. } => {
                    let progress = state.versions.entry(version).or_default();
                    progress.done = true;
                    if roll < behaviour.fail_rate {
                        progress.error =
                            Some(format!("simulated install failure of version {version}"));
                        progress.healthy = Some(false);
                    } else {
                        progress.installed = true;
                        progress.healthy = Some(true);
                        state.current = Some(version);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "node_test.rs"]
mod tests;
