//! Leadership hand-over before a planned stop: the leader stops taking proposals, lets those it
//! took commit, hands leadership to the most up-to-date voter (openraft's `transfer_leader`) and
//! waits briefly until another server leads, so a planned restart costs no election timeout.

use std::collections::{BTreeMap, BTreeSet};

use openraft::type_config::alias::LogIdOf;

use crate::types::{NodeId, TypeConfig};

/// The voter other than `me` whose replicated log reaches furthest (`replication` is the
/// leader's matched log id per target); ties go to the lowest id. `None` when there is no other
/// voter.
pub fn successor(
    me: NodeId,
    voters: &BTreeSet<NodeId>,
    replication: &BTreeMap<NodeId, Option<LogIdOf<TypeConfig>>>,
) -> Option<NodeId> {
    voters
        .iter()
        .filter(|id| **id != me)
        .map(|id| (replication.get(id).cloned().flatten(), *id))
        // Furthest log first; among equals the lowest id (hence the reversed id).
        .max_by(|(a, a_id), (b, b_id)| a.cmp(b).then(b_id.cmp(a_id)))
        .map(|(_, id)| id)
}

#[cfg(test)]
#[path = "handover_test.rs"]
mod tests;
