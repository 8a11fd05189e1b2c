//! The disruption ledger: for each consumer with a budget, how many of its nodes are unavailable now and how
//! many may be, built from the replicated state at the start of the policies' pass, and the [`Gate`] that
//! admits a node to install only within every budget it counts against (a node in two consumers counts
//! against both). A node is unavailable while it installs, watches (installed, not yet healthy for
//! `min_healthy`), has failed or rolls back in an active deployment, and while it is inactive; downloading
//! does not count. A node unavailable already costs nothing more: a second resource installing on it
//! takes no second slot.

use crate::deployment::progress::Gate;
use crate::deployment::{Deployment, NodePhase};
use crate::entities::membership::Membership;
use crate::entities::model::Consumer;
use crate::entities::nodes::NodeTable;
use crate::policy::budget::Budget;
use crate::policy::weak_slots::WeakSlots;
use crate::values::ids::DeploymentId;
use convoy_collections::CowMap;
use std::collections::{BTreeMap, BTreeSet};

/// Unavailable nodes listed per consumer in the views (the count is exact beyond it).
pub const LISTED_NODES: usize = 100;

/// One consumer's budget now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Account {
    /// Nodes that may be unavailable at once (from the budget and the active nodes).
    pub allowed: u32,
    /// Nodes unavailable now.
    pub unavailable: u32,
    /// Its active nodes.
    pub active: u32,
    /// The deployments holding its unavailable nodes.
    pub holders: BTreeSet<DeploymentId>,
    /// The first [`LISTED_NODES`] unavailable nodes, with what holds each (`None`: inactive, or moving under a weak subscription).
    pub nodes: Vec<(String, Option<DeploymentId>)>,
}

impl Account {
    /// Disruptions still allowed (`allowed - unavailable`, at least 0).
    pub fn left(&self) -> u32 {
        self.allowed.saturating_sub(self.unavailable)
    }
}

/// The phases in which a node of an active deployment is unavailable.
pub fn unavailable_phase(phase: NodePhase) -> bool {
    matches!(
        phase,
        NodePhase::Installing | NodePhase::Watching | NodePhase::Failed | NodePhase::RollingBack
    )
}

/// The active deployment that makes node `id` unavailable, if one does.
fn holder(
    nodes: &NodeTable,
    deployments: &CowMap<DeploymentId, Deployment>,
    id: &str,
) -> Option<DeploymentId> {
    let ns = nodes.get(id)?;
    ns.deployments.iter().find_map(|(d, p)| {
        let dep = deployments.get(d)?;
        let node = dep.nodes.get(*p as usize)?;
        (dep.status.is_active() && unavailable_phase(node.phase)).then_some(*d)
    })
}

/// The accounts of every budgeted consumer and the gate over them.
pub struct Ledger<'a> {
    nodes: &'a NodeTable,
    accounts: BTreeMap<String, Account>,
    /// Unavailable nodes of budgeted consumers.
    down: BTreeSet<String>,
}

impl<'a> Ledger<'a> {
    /// The ledger of the state now: O(nodes of the budgeted consumers).
    pub(crate) fn build(
        budgets: &CowMap<String, Budget>,
        consumers: &CowMap<String, Consumer>,
        nodes: &'a NodeTable,
        deployments: &CowMap<DeploymentId, Deployment>,
        weak: &WeakSlots,
    ) -> Ledger<'a> {
        let mut accounts = BTreeMap::new();
        let mut down = BTreeSet::new();
        for (name, budget) in budgets.iter() {
            let Some(c) = consumers.get(name) else {
                continue;
            };
            let mut account = Account::default();
            for id in c.nodes.iter() {
                let active = nodes.get(id).is_some_and(|ns| ns.active);
                account.active += u32::from(active);
                let held = holder(nodes, deployments, id);
                if !active || held.is_some() || weak.holds(id) {
                    account.unavailable += 1;
                    account.holders.extend(held);
                    if account.nodes.len() < LISTED_NODES {
                        account.nodes.push((id.clone(), held));
                    }
                    down.insert(id.clone());
                }
            }
            account.allowed = budget.disruptions(account.active);
            accounts.insert(name.clone(), account);
        }
        Ledger {
            nodes,
            accounts,
            down,
        }
    }

    /// The account of consumer `name`, if it has a budget.
    pub fn account(&self, name: &str) -> Option<&Account> {
        self.accounts.get(name)
    }

    /// Whether node `node` could be admitted now, without taking a slot.
    pub fn would_admit(&self, node: &str) -> bool {
        self.blocking(node).is_empty()
    }

    /// The budgeted consumers of `node` with no disruption left (empty when it is unavailable already).
    pub fn blocking(&self, node: &str) -> Vec<&str> {
        if self.down.contains(node) {
            return Vec::new();
        }
        let Some(ns) = self.nodes.get(node) else {
            return Vec::new();
        };
        Membership::consumers_of(ns)
            .filter(|c| self.accounts.get(*c).is_some_and(|a| a.left() == 0))
            .collect()
    }
}

impl Gate for Ledger<'_> {
    fn admit(&mut self, node: &str, _fetch: bool) -> bool {
        if !self.would_admit(node) {
            return false;
        }
        if self.down.contains(node) {
            return true;
        }
        let mut counted = false;
        if let Some(ns) = self.nodes.get(node) {
            for c in Membership::consumers_of(ns) {
                if let Some(a) = self.accounts.get_mut(c) {
                    a.unavailable += 1;
                    counted = true;
                }
            }
        }
        if counted {
            self.down.insert(node.to_string());
        }
        true
    }
}
