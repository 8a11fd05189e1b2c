//! Forgotten nodes: the leader's `ForgetNodes` removes nodes that belong to no consumer and no active
//! deployment and stayed silent for `forget_nodes_after`, so ids that once reported (a decommissioned
//! machine, a flood of unknown ids) do not stay in the state and every snapshot forever.
//!
//! Silence is the leader's to judge (it alone hears reports); the command carries the ids, so every
//! replica forgets the same nodes. Apply checks again what the state can tell — no consumer, no active
//! deployment — and skips a node that joined one meanwhile. A forgotten node that reports again is a
//! new node: terminal deployments still name it in their node lists, and the removals it still owed
//! (`NodeState::removing`) are gone with it.
//!
//! [`Forget`] is the family's handler: it borrows the node table only, and reports how many nodes it
//! removed. Which nodes are forgettable now is a query (`ClusterState::forgettable_nodes`, `queries.rs`).

use crate::entities::membership::Membership;
use crate::entities::model::NodeState;
use crate::entities::nodes::NodeTable;

/// A node the state no longer needs: in no consumer and no active deployment.
pub(crate) fn forgettable(n: &NodeState) -> bool {
    Membership::forgettable(n)
}

/// `ForgetNodes`, over the node table (the only map it changes).
pub(crate) struct Forget<'a> {
    /// The nodes; only forgettable ones are removed.
    pub nodes: &'a mut NodeTable,
}

impl Forget<'_> {
    /// Applies `ForgetNodes`: removes each listed node that is still forgettable; answers how many.
    pub(crate) fn forget(&mut self, nodes: Vec<String>) -> u32 {
        let mut forgotten = 0u32;
        for id in nodes {
            if self.nodes.get(&id).is_some_and(forgettable) {
                self.nodes.remove(&id);
                forgotten += 1;
            }
        }
        forgotten
    }
}

#[cfg(test)]
#[path = "forget_test.rs"]
mod tests;
