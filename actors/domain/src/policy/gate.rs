//! The gate the policies' pass hands each deployment's admission: a node is admitted to install only within
//! every disruption budget it counts against ([`Ledger`]) and the fleet-wide limits ([`Fleet`]); a node is
//! told to download only within the fleet's download limit. A refusal takes no slot anywhere.

use crate::deployment::progress::Gate;
use crate::policy::ledger::Ledger;
use crate::policy::limits::Fleet;

/// The budgets and the fleet's limits, for one pass.
pub struct Policies<'a> {
    /// The disruption budgets' accounts.
    pub ledger: Ledger<'a>,
    /// The fleet's in-flight installs and downloads.
    pub fleet: Fleet,
}

impl Policies<'_> {
    /// Whether node `node` could be admitted to install now, without taking a slot.
    pub fn would_admit(&self, node: &str, fetch: bool) -> bool {
        self.fleet.would_install(fetch) && self.ledger.would_admit(node)
    }
}

impl Gate for Policies<'_> {
    fn admit(&mut self, node: &str, fetch: bool) -> bool {
        if !self.would_admit(node, fetch) {
            return false;
        }
        self.fleet.take_install(fetch) && self.ledger.admit(node, fetch)
    }

    fn download(&mut self, _node: &str) -> bool {
        self.fleet.take_download()
    }
}
