//! Forgotten nodes: the leader's `ForgetNodes` removes nodes that belong to no consumer and no active
//! deployment and stayed silent for `forget_nodes_after`, so ids that once reported (a decommissioned
//! machine, a flood of unknown ids) do not stay in the state and every snapshot forever.
//!
//! Silence is the leader's to judge (it alone hears reports); the command carries the ids, so every
//! replica forgets the same nodes. Apply checks again what the state can tell — no consumer, no active
//! deployment — and skips a node that joined one meanwhile. A forgotten node that reports again is a
//! new node: terminal deployments still name it in their node lists, and the removals it still owed
//! (`NodeState::removing`) are gone with it.

use super::command::Response;
use super::model::NodeState;
use super::state::ClusterState;

/// A node the state no longer needs: in no consumer and no active deployment.
pub(crate) fn forgettable(n: &NodeState) -> bool {
    n.consumers.is_empty() && n.deployments.is_empty()
}

impl ClusterState {
    /// The ids of nodes in no consumer and no active deployment, in id order (the leader forgets those
    /// among them that stayed silent for `forget_nodes_after`).
    pub fn forgettable_nodes(&self) -> impl Iterator<Item = &str> + '_ {
        self.nodes
            .iter()
            .filter(|(_, n)| forgettable(n))
            .map(|(id, _)| id.as_str())
    }

    /// Applies `ForgetNodes`: removes each listed node that is still forgettable; answers how many.
    pub(crate) fn forget_nodes(&mut self, nodes: Vec<String>) -> Response {
        let mut forgotten = 0u32;
        for id in nodes {
            if self.nodes.get(&id).is_some_and(forgettable) {
                self.nodes.remove(&id);
                forgotten += 1;
            }
        }
        Response::Forgotten { forgotten }
    }
}

#[cfg(test)]
#[path = "forget_test.rs"]
mod tests;
