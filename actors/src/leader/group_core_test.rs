//! The group deployment's step timing with the clock passed in: each step once, stamped when this
//! leader saw it start.

use super::GroupCore;
use crate::domain::{ClusterState, GroupDeploymentId};

#[test]
fn each_step_is_recorded_once_with_the_time_it_was_seen_to_start() {
    let state = ClusterState::default();
    let mut core = GroupCore::new(GroupDeploymentId(4));
    core.started(&state, 50);
    assert!(
        core.steps().is_empty(),
        "no group deployment runs in the state"
    );
    core.step_started(0, &state, 100);
    core.step_started(0, &state, 200);
    core.step_started(1, &state, 300);
    assert_eq!(core.steps(), [(0, 100), (1, 300)]);
}
