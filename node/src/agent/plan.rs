//! The agent's functional core: given the held state, the server's targets and the time, which
//! actions to take now. No I/O and no clock here; the executor carries the actions out.

use std::collections::BTreeMap;

use convoy_actors::domain::Target;

pub use super::state::valid_name;
use super::state::AgentState;

/// One thing to do for a resource's version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Forget a failed attempt so it can be tried again.
    Retry {
        /// The resource whose failed version is retried.
        resource: String,
        /// The failed version, still the server's target.
        version: u64,
    },
    /// Fetch the artifact into the version dir.
    Download {
        /// The resource to fetch a version of.
        resource: String,
        /// The target version whose artifact to fetch.
        version: u64,
    },
    /// Make it current: the install command or the `current` symlink switch (also a rollback).
    Install {
        /// The resource to switch.
        resource: String,
        /// The target version to make current.
        version: u64,
    },
    /// Remove the resource: tear its process down, delete its directory, report it removed.
    Uninstall {
        /// The resource to remove.
        resource: String,
        /// The version the server saw running.
        version: u64,
    },
}

impl Action {
    /// The resource it concerns.
    pub fn resource(&self) -> &str {
        match self {
            Action::Retry { resource, .. }
            | Action::Download { resource, .. }
            | Action::Install { resource, .. }
            | Action::Uninstall { resource, .. } => resource,
        }
    }

    /// The version it concerns.
    pub fn version(&self) -> u64 {
        match self {
            Action::Retry { version, .. }
            | Action::Download { version, .. }
            | Action::Install { version, .. }
            | Action::Uninstall { version, .. } => *version,
        }
    }
}

/// The actions allowed and needed now, in order (per resource: retry, download, install).
///
/// - an `uninstall` target removes the resource if anything of it is held;
/// - nothing for a target that allows neither download nor install (hold still), nor for a resource
///   the node is not interested in;
/// - a failed version that is still targeted is retried once `retry_ms` passed since the failure;
/// - download when allowed (`download` or `install`) and not held yet;
/// - install only when `install` is allowed and the version is not already current and installed;
///   a version already held (a rollback) is re-installed without downloading again.
pub fn plan(
    state: &AgentState,
    targets: &BTreeMap<String, Target>,
    now_ms: u64,
    retry_ms: u64,
) -> Vec<Action> {
    let mut out = Vec::new();
    for (resource, t) in targets {
        if t.uninstall {
            if state.holds_any(resource) {
                out.push(Action::Uninstall {
                    resource: resource.clone(),
                    version: t.version,
                });
            }
            continue;
        }
        if (!t.download && !t.install) || state.uninterested.contains(resource) {
            continue;
        }
        let action = |make: fn(String, u64) -> Action| make(resource.clone(), t.version);
        let held = state.version(resource, t.version);
        if let Some(v) = held {
            if v.failed() {
                let since = now_ms.saturating_sub(v.failed_at_ms.unwrap_or(0));
                if since >= retry_ms {
                    out.push(action(|resource, version| Action::Retry {
                        resource,
                        version,
                    }));
                }
                continue;
            }
            if v.progress.installed && state.current(resource) == Some(t.version) {
                continue;
            }
        }
        if !held.is_some_and(|v| v.progress.downloaded) {
            out.push(action(|resource, version| Action::Download {
                resource,
                version,
            }));
        }
        if t.install {
            out.push(action(|resource, version| Action::Install {
                resource,
                version,
            }));
        }
    }
    out
}

/// The resources whose published versions the actions need (artifact, health port).
pub fn needs_views(actions: &[Action]) -> Vec<String> {
    let mut names: Vec<String> = actions
        .iter()
        .filter(|a| !matches!(a, Action::Retry { .. } | Action::Uninstall { .. }))
        .map(|a| a.resource().to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}
