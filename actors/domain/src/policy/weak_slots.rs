//! Disruption budgets and fleet-wide limits for weak subscriptions (issue 35 §6): a weak node moves to its
//! selected version only with a slot, granted in the replicated apply under the same budgets and limits that
//! admit deployments' nodes.
//!
//! Design. As with the windows (`weak.rs`), a weak node's target is read from the replicated state by
//! whichever server answers its report, so the decision is replicated: at the end of every apply while a
//! weak subscription is *slotted* (its consumer has a budget, or a fleet-wide limit is set), the pass
//! (`state/weak_pass.rs`) looks at each of its nodes. A node that must move (its target installs a version
//! it does not run) and holds no grant is a candidate; candidates are granted, in consumer and node order,
//! while the [`Ledger`](crate::policy::ledger::Ledger) and the [`Fleet`](crate::policy::limits::Fleet) admit
//! them, after every deployment took its slots. A node with a grant is unavailable for the budgets and
//! installing for the limits (downloading too, until it holds the version) until it comes to rest: it runs
//! its target, done and healthy. A node that failed keeps its slot (it is unavailable), as a deployment's
//! failed node does, until the brake sends it back or a new version is selected and it runs healthy. A node
//! without a grant keeps what it runs (`views/targets.rs`). Start jitter is a deployment's setting: a weak
//! subscription has none.

use crate::entities::nodes::NodeTable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The replicated grants: per node, per resource, the version it may move to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeakSlots {
    /// Nodes that hold a slot, by id, with the resource and version each moves to.
    #[serde(default)]
    pub grants: BTreeMap<String, BTreeMap<String, u64>>,
    /// Nodes that must move and hold no slot, after the last pass (shown by `plan` and the consumer view).
    #[serde(default)]
    pub waiting: u32,
}

impl WeakSlots {
    /// The version node `node` may move to of `resource`, if it holds a slot for it.
    pub fn grant(&self, node: &str, resource: &str) -> Option<u64> {
        self.grants.get(node)?.get(resource).copied()
    }

    /// Whether node `node` holds a slot (it is unavailable for the budgets).
    pub fn holds(&self, node: &str) -> bool {
        self.grants.contains_key(node)
    }

    /// How many grants there are: installs in flight for the fleet-wide limits.
    pub fn count(&self) -> u32 {
        self.grants.values().map(|g| g.len() as u32).sum()
    }

    /// Installs and downloads in flight for the fleet-wide limits: every grant installs; one whose node does
    /// not hold its version yet downloads too.
    pub(crate) fn in_flight(&self, nodes: &NodeTable) -> (u32, u32) {
        let (mut installs, mut downloads) = (0u32, 0u32);
        for (id, grants) in &self.grants {
            for (r, v) in grants {
                installs += 1;
                let have = nodes
                    .get(id)
                    .and_then(|ns| ns.resources.get(r))
                    .and_then(|e| e.versions.get(v))
                    .is_some_and(|p| p.downloaded);
                downloads += u32::from(!have);
            }
        }
        (installs, downloads)
    }

    /// Whether there is anything to keep or forget.
    pub fn is_empty(&self) -> bool {
        self.grants.is_empty() && self.waiting == 0
    }
}

/// What one pass decided for one node and resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// It holds a slot and keeps it, now for this version.
    Keep(u64),
    /// It must move to this version and holds no slot (`fetch`: it does not hold the version yet).
    Wants {
        /// The version.
        version: u64,
        /// It downloads too.
        fetch: bool,
    },
    /// It needs no slot (at rest, or it holds one it no longer needs).
    Free,
}

/// The rule for one node and resource: `moves_to` is the version its target installs when it differs from
/// what it runs (`None`: it stays), `granted` its slot, `at_rest` whether it runs its current version done and
/// healthy, `fetch` whether it lacks `moves_to` on disk.
pub fn judge(moves_to: Option<u64>, granted: Option<u64>, at_rest: bool, fetch: bool) -> Slot {
    match (moves_to, granted) {
        (Some(v), Some(_)) => Slot::Keep(v),
        (Some(version), None) => Slot::Wants { version, fetch },
        (None, Some(g)) if !at_rest => Slot::Keep(g),
        (None, _) => Slot::Free,
    }
}

#[cfg(test)]
#[path = "weak_slots_test.rs"]
mod tests;
