//! When a planned deployment is expected to finish (`convoy deploy plan`, `?dry_run=true`; DEPLOYMENTS.md
//! §16): its waves (the plan's steps, narrowed by the fleet-wide install limit) one after another, each
//! taking a stated time per node, plus the bake between them, admitted only while the maintenance windows
//! let it (from their schedule: the next openings and how long they last). An estimate, with its assumption
//! in words: nodes are assumed to take exactly that long, the other deployments and the budgets to leave it
//! room, and a wave started before a window closes to finish (`finish_in_flight`).

use crate::policy::admission::verdict;
use crate::policy::window_clock::Walk;
use crate::state::ClusterState;
use crate::values::ids::Timestamp;
use crate::values::strategy::Settings;
use serde::{Deserialize, Serialize};

/// A node's install time assumed when none is given: a typical install (on top of `min_healthy`).
pub const TYPICAL_INSTALL_MS: u64 = 60_000;

/// Window changes looked through before the estimate says it does not know (`never`).
const HORIZON_CHANGES: usize = 1_000;

/// When a planned deployment is expected to finish, and on what assumption.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FinishEstimate {
    /// Expected end, ms since the epoch; absent when it would never finish within the horizon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Timestamp>,
    /// No window lets it finish within the next 1,000 window openings and closings.
    pub never: bool,
    /// The time each wave is assumed to take (per node; the nodes of a wave install side by side).
    pub per_node_ms: u64,
    /// The waves it runs, one after another.
    pub waves: u32,
    /// The assumption, in words.
    pub assumption: String,
}

/// What the estimate needs of a plan (`views/plan.rs`, `DeploymentPlan`): whose, and its waves.
pub struct Planned<'a> {
    /// The consumer deployed to.
    pub consumer: &'a str,
    /// The resource deployed.
    pub resource: &'a str,
    /// Its batches or waves: how many nodes each holds.
    pub steps: &'a [u32],
    /// The settings it would run with.
    pub settings: &'a Settings,
}

/// The waves of `plan`: its steps, each split by the fleet-wide install limit `cap`.
fn waves(plan: &Planned<'_>, cap: Option<u32>) -> u64 {
    plan.steps
        .iter()
        .filter(|n| **n > 0)
        .map(|n| match cap {
            Some(c) if c > 0 => u64::from(n.div_ceil(c)),
            _ => 1,
        })
        .sum()
}

impl ClusterState {
    /// When `plan` would finish if started at `now`, each wave taking `per_node_ms` (default: its
    /// `min_healthy` plus [`TYPICAL_INSTALL_MS`]).
    pub fn plan_finish(
        &self,
        plan: &Planned<'_>,
        now: Timestamp,
        per_node_ms: Option<u64>,
    ) -> FinishEstimate {
        let given = per_node_ms.is_some();
        let per_node = per_node_ms
            .unwrap_or(
                plan.settings
                    .min_healthy_ms
                    .saturating_add(TYPICAL_INSTALL_MS),
            )
            .max(1);
        let cap = self.fleet_limits().max_concurrent_installs;
        let total = waves(plan, cap);
        let bake = plan.settings.pacing.bake_ms.unwrap_or(0);
        let step = per_node.saturating_add(bake);
        let mut assumption = if given {
            format!("each wave takes {per_node} ms (given)")
        } else {
            format!(
                "each wave takes {per_node} ms: min_healthy {} ms plus a typical install of {TYPICAL_INSTALL_MS} ms",
                plan.settings.min_healthy_ms
            )
        };
        if bake > 0 {
            assumption.push_str(&format!(", then a bake of {bake} ms"));
        }
        if let Some(c) = cap {
            assumption.push_str(&format!(
                ", at most {c} nodes at once (the fleet-wide limit)"
            ));
        }
        assumption.push_str(
            "; the other deployments and the budgets leave it room, and a wave started in a window finishes",
        );
        let (at, never) = self.finish_at(plan, now, total, per_node, step);
        FinishEstimate {
            at,
            never,
            per_node_ms: per_node,
            waves: u32::try_from(total).unwrap_or(u32::MAX),
            assumption,
        }
    }

    /// Walks the windows' changes from `now`: waves start while the windows let the deployment in, one
    /// `step` apart; answers the end of the last (or `never`).
    fn finish_at(
        &self,
        plan: &Planned<'_>,
        now: Timestamp,
        total: u64,
        per_node: u64,
        step: u64,
    ) -> (Option<Timestamp>, bool) {
        if total == 0 {
            return (Some(now), false);
        }
        let (consumer, resource) = (plan.consumer, plan.resource);
        let mut left = total;
        let mut t = now;
        let mut walk = Walk::new(self.window_clock(), self.window_map(), consumer, resource);
        for _ in 0..HORIZON_CHANGES {
            let v = verdict(&walk.at(t), consumer, resource);
            let next = v.next.filter(|n| *n > t);
            if v.closed {
                match next {
                    Some(n) => {
                        t = n;
                        continue;
                    }
                    None => return (None, true),
                }
            }
            // Open until the next change (or for good): the waves that start before it.
            let room = next.map_or(left, |n| (n - t).div_ceil(step));
            let k = left.min(room.max(1));
            left -= k;
            if left == 0 {
                let last = t.saturating_add((k - 1).saturating_mul(step));
                return (Some(last.saturating_add(per_node)), false);
            }
            t = t.saturating_add(k.saturating_mul(step));
            if let Some(n) = next {
                t = t.max(n);
            }
        }
        (None, true)
    }
}

#[cfg(test)]
#[path = "finish_test.rs"]
mod tests;
