//! The checkers over one replicated state, shared by the simulator (every server's state at every apply)
//! and the chaos harness (every state a stopped server's log passes through, replayed offline): each
//! deployment's windows, rollback order, waits and active-time timeout, and the policies' invariants
//! (holds on evidence, pins, weak moves under slots and jitter, no dependency through a rollback).

use convoy_actors::domain::{ClusterState, DeploymentId};

use super::check::{rollback_order, windows, Violation};
use super::check_policies::{
    holds_have_evidence, pins_select_their_version, rollbacks_revoke_dependencies,
    weak_moves_hold_slots, weak_moves_wait_their_jitter,
};
use super::check_waits::{timeout_in_active_time, waits_agree};

/// Every violation `state` shows, each with the deployment it is about (`None`: a policy's, about the
/// fleet). `all`: every deployment the state keeps; otherwise only the active ones.
pub fn violations(state: &ClusterState, all: bool) -> Vec<(Option<DeploymentId>, Violation)> {
    let ids = if all {
        state
            .deployments(&Default::default())
            .into_iter()
            .map(|d| d.id)
            .collect()
    } else {
        state.active_deployments()
    };
    let mut out = Vec::new();
    for id in ids {
        let Some(view) = state.deployment(id) else {
            continue;
        };
        let found = windows(&view)
            .into_iter()
            .chain(rollback_order(&view))
            .chain(waits_agree(&view))
            .chain(timeout_in_active_time(&view));
        out.extend(found.map(|v| (Some(id), v)));
    }
    let policies = weak_moves_hold_slots(state)
        .into_iter()
        .chain(holds_have_evidence(state))
        .chain(pins_select_their_version(state))
        .chain(weak_moves_wait_their_jitter(state))
        .chain(rollbacks_revoke_dependencies(state));
    out.extend(policies.map(|v| (None, v)));
    out
}
