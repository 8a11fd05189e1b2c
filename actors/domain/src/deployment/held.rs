//! A deployment's nodes around a wait (DEPLOYMENTS.md §6): whether nodes of its own are in flight (then it is
//! moving, not waiting for a policy), and judging the nodes in flight once it moves again.

use crate::deployment::{Deployment, NodePhase};
use crate::values::ids::{Actor, Timestamp};

impl Deployment {
    /// Nodes of its own are in flight going forward: installing, watching, retrying, downloading.
    pub fn in_flight(&self) -> bool {
        self.forward.install_used > self.tally.failed || self.forward.download_used > 0
    }

    /// The deployment moves again after waiting: every node in flight is judged on what it says now (its
    /// last report, kept in `seen`), as if that report had just come (by `system`).
    pub(crate) fn rejudge_held(&mut self, at: Timestamp) {
        let in_flight: Vec<usize> = self
            .touched
            .iter()
            .map(|p| *p as usize)
            .filter(|p| {
                matches!(
                    self.nodes[*p].phase,
                    NodePhase::Installing | NodePhase::Watching
                )
            })
            .collect();
        for p in in_flight {
            let bits = self.nodes[p].seen;
            let why = Some("failed while the deployment waited".to_string());
            self.fetching(p, |d| d.react(p, bits, why, at, &Actor::System));
            self.sync_node_clock(p, at);
        }
    }
}
