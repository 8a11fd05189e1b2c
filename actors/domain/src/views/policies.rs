//! What the fleet's policies would do to a deployment not started yet (`convoy deploy plan`,
//! `?dry_run=true`): the windows that apply and when they let it admit nodes, and the disruption budgets of
//! the consumers its nodes are in.

use crate::policy::admission::verdict;
use crate::policy::window_clock::Walk;
use crate::state::ClusterState;
use crate::values::ids::Timestamp;
use crate::views::budgets::BudgetView;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Window changes looked through for the time a held deployment could start.
const LOOKAHEAD: usize = 200;

/// The policies a planned deployment would meet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PlanPolicies {
    /// The windows that apply to it now, by name, and which of them hold it.
    pub windows: Vec<PlanWindow>,
    /// Held by windows now: when they next let it admit nodes (ms since the epoch; absent: not held, or not
    /// within the next 200 changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_until: Option<Timestamp>,
    /// Whether windows hold it now (it would start paused, `paused_by: "window"`).
    pub held: bool,
    /// The budgets of the consumers its nodes are in, and their use now.
    pub budgets: Vec<BudgetView>,
    /// The consumer's subscription to the resource is weak and windows hold it now (the replicated record,
    /// `policy/weak.rs`): its nodes outside a deployment keep what they run until no window holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weak_waiting: Option<crate::policy::weak::WeakWait>,
    /// When it is expected to finish, from the windows' schedule and a stated time per node (the API
    /// fills it in: `views/finish.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<crate::views::finish::FinishEstimate>,
}

/// A window that applies to a planned deployment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PlanWindow {
    /// The window's name.
    pub name: String,
    /// In force now.
    pub open: bool,
    /// When it next opens or closes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_change: Option<Timestamp>,
}

impl ClusterState {
    /// The policies a deployment of `resource` on `consumer` would meet at `now` (the caller's clock).
    pub fn plan_policies(&self, consumer: &str, resource: &str, now: Timestamp) -> PlanPolicies {
        let mut walk = Walk::new(self.window_clock(), self.window_map(), consumer, resource);
        let all = walk.at(now);
        let v = verdict(&all, consumer, resource);
        let windows = all
            .iter()
            .filter(|w| w.window.applies_to.covers(consumer, resource))
            .map(|w| PlanWindow {
                name: w.window.name.clone(),
                open: w.open,
                next_change: w.next,
            })
            .collect();
        let mut held_until = None;
        if v.closed {
            let mut t = v.next;
            for _ in 0..LOOKAHEAD {
                let Some(at) = t else { break };
                let later = verdict(&walk.at(at), consumer, resource);
                if !later.closed {
                    held_until = Some(at);
                    break;
                }
                t = later.next.filter(|n| *n > at);
            }
        }
        let mut names = BTreeSet::new();
        if let Some(c) = self.consumer_map().get(consumer) {
            for n in c.nodes.iter() {
                if let Some(ns) = self.node_table().get(n) {
                    names.extend(
                        ns.consumers
                            .iter()
                            .filter(|c| self.budget_map().contains_key(*c))
                            .cloned(),
                    );
                }
            }
        }
        PlanPolicies {
            windows,
            held_until,
            held: v.closed,
            budgets: names.iter().filter_map(|n| self.budget(n)).collect(),
            weak_waiting: self.weak_gate().wait(consumer, resource).cloned(),
            finish: None,
        }
    }
}
