//! The `Reports` handler on its own, over copies of a state's maps: a deployment a report ends is settled
//! by the handler before the next report of the same batch is read.

use super::Reports;
use crate::families::settle::Cx;
use crate::testing::*;
use crate::*;
use std::collections::{BTreeMap, BTreeSet};

/// Node `node` reports version 2 of `r` installed and running.
fn installed(node: &str) -> NodeReport {
    let rr = ResourceReport {
        interested: None,
        current: Some(2),
        versions: BTreeMap::from([(1, vp(true, true, None)), (2, vp(true, true, None))]),
        removed: false,
        log: None,
    };
    NodeReport {
        node: node.into(),
        active: None,
        resources: BTreeMap::from([("r".to_string(), rr)]),
        ..Default::default()
    }
}

/// The maps `Reports` borrows, copied from a kit's state, after a batch went through the handler, and
/// the context it filled.
struct After {
    consumers: CowMap<String, Consumer>,
    deployments: CowMap<DeploymentId, Deployment>,
    active: BTreeSet<DeploymentId>,
    cx: Cx,
    /// Node `c-0` is in no deployment.
    node_free: bool,
}

fn run(k: &Kit, batch: Vec<NodeReport>) -> After {
    let mut consumers = k.s.consumer_map().clone();
    let mut nodes = k.s.node_table().clone();
    let mut deployments = k.s.deployment_map().clone();
    let mut active = k.s.active_set().clone();
    let mut cx = Cx::new(k.now);
    Reports {
        consumers: &mut consumers,
        nodes: &mut nodes,
        deployments: &mut deployments,
        active: &mut active,
    }
    .report_nodes(batch, &mut cx)
    .expect("reports accepted");
    let node_free = nodes.get("c-0").is_some_and(|n| n.deployments.is_empty());
    After {
        consumers,
        deployments,
        active,
        cx,
        node_free,
    }
}

#[test]
fn a_deployment_ended_by_a_report_is_settled_before_the_next_report_of_the_batch() {
    let mut k = Kit::new(1);
    let id = k.start_with(|_| {});
    let After {
        consumers,
        deployments,
        active,
        cx,
        node_free,
    } = run(&k, vec![installed("c-0"), installed("c-0")]);
    assert_eq!(deployments[&id].status, Status::RolledForward);
    assert!(active.is_empty(), "it left the active set");
    assert!(node_free, "its node is no longer in it");
    assert!(
        !consumers["c"].active.contains_key("r"),
        "nor is its consumer"
    );
    assert_eq!(cx.ended, vec![id], "queued for apply once");
    assert_eq!(cx.outcome.ended().collect::<Vec<_>>(), vec![id]);
    let once = run(&k, vec![installed("c-0")]).deployments;
    assert_eq!(
        deployments, once,
        "the second report of the batch no longer reached the ended deployment"
    );
}

#[test]
fn a_report_that_ends_nothing_leaves_the_deployment_registered() {
    let mut k = Kit::new(2);
    let id = k.start_with(|_| {});
    let After {
        consumers,
        deployments,
        active,
        cx,
        node_free,
    } = run(&k, vec![installed("c-0")]);
    assert!(deployments[&id].status.is_active());
    assert!(active.contains(&id));
    assert!(!node_free, "c-0 stays in it until it ends");
    assert_eq!(consumers["c"].active.get("r"), Some(&id));
    assert!(cx.ended.is_empty());
    assert!(
        cx.touched.contains(&id),
        "its deadline goes into the outcome"
    );
}
