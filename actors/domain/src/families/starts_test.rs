//! The `Starts` handler on its own, over copies of a state's maps: a start with nothing to do ends at once,
//! settled by the handler and reported in `Cx` for `apply`.

use super::Starts;
use crate::families::settle::Cx;
use crate::testing::*;
use crate::*;

#[test]
fn a_start_whose_nodes_already_run_the_version_ends_at_once_and_is_reported() {
    let k = Kit::new(2);
    let mut consumers = k.s.consumer_map().clone();
    let mut nodes = k.s.node_table().clone();
    let mut deployments = k.s.deployment_map().clone();
    let mut active = k.s.active_set().clone();
    let mut next = 0;
    let mut cx = Cx::new(k.now);
    let spec = DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        version: Some(1),
        ..DeploymentSpec::default()
    };
    let mut starts = Starts {
        resources: k.s.resource_map(),
        groups: k.s.group_map(),
        group_deployments: k.s.group_deployment_map(),
        consumers: &mut consumers,
        nodes: &mut nodes,
        deployments: &mut deployments,
        active: &mut active,
        next_deployment: &mut next,
    };
    let response = starts.start_deployment_cmd(spec, &mut cx).expect("started");
    let id = DeploymentId(1);
    assert_eq!(
        response,
        Response::DeploymentStarted {
            id,
            status: Status::RolledForward
        }
    );
    assert_eq!(next, 1, "the counter gave out its id");
    assert!(active.is_empty(), "ended at once: not active");
    assert!(!consumers["c"].active.contains_key("r"));
    assert!(nodes.get("c-0").is_some_and(|n| n.deployments.is_empty()));
    assert_eq!(
        cx.ended,
        vec![id],
        "queued for apply to drive and reconcile"
    );
    assert_eq!(cx.outcome.started().collect::<Vec<_>>(), vec![id]);
    assert_eq!(cx.outcome.ended().collect::<Vec<_>>(), vec![id]);
    assert_eq!(deployments[&id].tally.succeeded, 2);
}

#[test]
fn a_start_refused_changes_none_of_the_borrowed_maps() {
    let mut k = Kit::new(1);
    let first = k.start_with(|_| {});
    let mut consumers = k.s.consumer_map().clone();
    let mut nodes = k.s.node_table().clone();
    let mut deployments = k.s.deployment_map().clone();
    let mut active = k.s.active_set().clone();
    let mut next = 1;
    let mut cx = Cx::new(k.now);
    let spec = DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        version: Some(2),
        ..DeploymentSpec::default()
    };
    let e = Starts {
        resources: k.s.resource_map(),
        groups: k.s.group_map(),
        group_deployments: k.s.group_deployment_map(),
        consumers: &mut consumers,
        nodes: &mut nodes,
        deployments: &mut deployments,
        active: &mut active,
        next_deployment: &mut next,
    }
    .start_deployment_cmd(spec, &mut cx)
    .expect_err("one is active");
    assert!(matches!(e, DomainError::ActiveDeployment { .. }), "{e}");
    assert_eq!(next, 1);
    assert_eq!(&consumers, k.s.consumer_map());
    assert_eq!(&deployments, k.s.deployment_map());
    assert_eq!(&active, k.s.active_set());
    assert!(active.contains(&first));
    assert!(cx.touched.is_empty() && cx.ended.is_empty());
}

#[test]
fn a_node_another_consumers_deployment_of_the_resource_takes_is_left_out() {
    // Found by budget_properties: node c-1, in `c` and `d`, was in two deployments of `r` at once; its
    // target followed the one where it waited, so the other's install never happened and it never ended.
    let mut k = Kit::new(2);
    k.ok(Command::CreateConsumer {
        name: "d".into(),
        nodes: vec!["c-1".into()],
    });
    let first = k.start(spec("c", "r", 2, Strategy::AllAtOnce { fail_fast: false }));
    let second = k.start(spec("d", "r", 2, Strategy::AllAtOnce { fail_fast: false }));
    let ids = |id| -> Vec<String> { k.d(id).nodes.iter().map(|n| n.id.clone()).collect() };
    assert_eq!(ids(first), ["c-0", "c-1"]);
    assert!(ids(second).is_empty(), "{:?}", ids(second));
}
