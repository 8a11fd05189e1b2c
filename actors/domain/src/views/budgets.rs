//! What the disruption budgets say, read-only: a consumer's budget and its use (`GET
//! /v1/consumers/{name}/budget`, and in the consumer's view), and whether a deployment waits for one
//! (`waiting_for: "budget"` in its summary).

use crate::deployment::Deployment;
use crate::policy::admission::{may_admit, next_waiting};
use crate::policy::budget::Budget;
use crate::policy::ledger::Ledger;
use crate::state::ClusterState;
use crate::values::ids::DeploymentId;
use crate::values::threshold::FailedNodes;
use serde::{Deserialize, Serialize};

/// A consumer's disruption budget and its use now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BudgetView {
    /// The consumer it bounds.
    pub consumer: String,
    /// At most this many nodes unavailable (a count or `"N%"` of the active nodes), if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<FailedNodes>,
    /// At least this many active nodes available (a count or `"N%"`), if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<FailedNodes>,
    /// The consumer's active nodes, which percentages are of.
    pub active: u32,
    /// How many nodes may be unavailable at once now.
    pub allowed: u32,
    /// How many are: installing, watching, failed or rolling back in an active deployment, or inactive.
    pub unavailable: u32,
    /// Further disruptions allowed now (`allowed - unavailable`, at least 0).
    pub disruptions_allowed: u32,
    /// The first unavailable nodes (at most 100), with the deployment holding each (none: inactive).
    pub nodes: Vec<UnavailableNode>,
    /// The active deployments holding its unavailable nodes.
    pub holders: Vec<DeploymentId>,
}

/// An unavailable node and what holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UnavailableNode {
    /// The node's id.
    pub node: String,
    /// The active deployment installing, watching, failing or rolling it back; absent: it is inactive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentId>,
}

/// Why a deployment admits no node now, though its own windows would.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Waiting {
    /// The consumers whose budgets are spent for its next node.
    pub consumers: Vec<String>,
    /// The active deployments holding those budgets' slots.
    pub holders: Vec<DeploymentId>,
}

impl ClusterState {
    fn ledger(&self) -> Ledger<'_> {
        Ledger::build(
            self.budget_map(),
            self.consumer_map(),
            self.node_table(),
            self.deployment_map(),
            self.weak_slots(),
        )
    }

    /// Consumer `name`'s budget and its use; `None` when it has none.
    pub fn budget(&self, name: &str) -> Option<BudgetView> {
        let budget: &Budget = self.budget_map().get(name)?;
        let ledger = self.ledger();
        let account = ledger.account(name).cloned().unwrap_or_default();
        Some(BudgetView {
            consumer: name.to_string(),
            max_unavailable: budget.max_unavailable,
            min_available: budget.min_available,
            active: account.active,
            allowed: account.allowed,
            unavailable: account.unavailable,
            disruptions_allowed: account.left(),
            nodes: account
                .nodes
                .iter()
                .map(|(node, deployment)| UnavailableNode {
                    node: node.clone(),
                    deployment: *deployment,
                })
                .collect(),
            holders: account.holders.iter().copied().collect(),
        })
    }

    /// Whether deployment `d` waits for a budget: its own windows would admit its next node, the budgets
    /// of that node's consumers would not.
    pub(crate) fn budget_wait(&self, d: &Deployment) -> Option<Waiting> {
        if self.budget_map().is_empty() || !may_admit(d, |_, _| true) {
            return None;
        }
        let ledger = self.ledger();
        let next = next_waiting(d)?;
        if ledger.would_admit(&next.id) {
            return None;
        }
        let consumers: Vec<String> = ledger
            .blocking(&next.id)
            .into_iter()
            .map(String::from)
            .collect();
        let mut holders: Vec<DeploymentId> = consumers
            .iter()
            .filter_map(|c| ledger.account(c))
            .flat_map(|a| a.holders.iter().copied())
            .collect();
        holders.sort();
        holders.dedup();
        Some(Waiting { consumers, holders })
    }

    /// Why `node`, the next node `d` would admit, waits for a budget, in words (`deploy why`).
    pub(crate) fn budget_hold(&self, d: &Deployment, node: &str) -> Option<String> {
        if next_waiting(d)?.id != node {
            return None;
        }
        let w = self.budget_wait(d)?;
        let holders: Vec<String> = w.holders.iter().map(|h| h.to_string()).collect();
        Some(format!(
            "held: the disruption budget of {} has no disruption left; its slots are held by {}",
            w.consumers.join(", "),
            if holders.is_empty() {
                "inactive nodes".to_string()
            } else {
                holders.join(", ")
            }
        ))
    }
}

#[cfg(test)]
#[path = "budgets_test.rs"]
mod tests;
