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
        resources: k.s.resource_map(),
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

/// Node `c-i` reports `r` as an agent started on an empty state dir does once it is asked for it:
/// wanted, holding nothing (no `current`, no version, not `removed`).
fn blank(i: usize) -> NodeReport {
    let rr = ResourceReport {
        interested: Some(true),
        ..ResourceReport::default()
    };
    NodeReport {
        node: format!("c-{i}"),
        active: Some(true),
        resources: BTreeMap::from([("r".to_string(), rr)]),
        ..Default::default()
    }
}

#[test]
fn a_node_that_names_a_resource_holding_nothing_of_it_holds_nothing_and_is_followed_up() {
    // Issue 36 item 2: the server kept the `current` it had, so a re-imaged machine never got its app back.
    for n in [4, 12] {
        let mut k = Kit::new(n);
        k.ok(Command::Subscribe {
            consumer: "c".into(),
            resource: "r".into(),
            mode: Mode::Strong,
            pin: None,
            policy: Policy::default(),
        });
        let first = k.s.consumer_map()["c"].active["r"];
        for i in 0..n {
            k.installed(i);
        }
        assert_eq!(k.d(first).status, Status::RolledForward);
        let report = blank(n - 1);
        assert!(
            k.s.report_changes(&report).is_some(),
            "a heartbeat: it never reaches the log"
        );
        k.ok(Command::ReportNodes(vec![report]));
        let id = format!("c-{}", n - 1);
        assert_eq!(k.s.node_table().get(&id).unwrap().current("r"), None);
        let follow = k.s.consumer_map()["c"].active.get("r").copied();
        let follow = follow.expect("a follow-up for the blank node");
        let d = k.d(follow);
        assert_eq!(
            d.nodes.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(),
            [id.as_str()]
        );
        assert_eq!(
            d.events[0].message.as_deref(),
            Some("follow-up to version 2 for 1 node: 1 re-imaged")
        );
        let t = k.target(&id, "r").unwrap();
        assert_eq!((t.version, t.install), (2, true));
        // Said again, it is a heartbeat.
        assert!(k.s.report_changes(&blank(n - 1)).is_none());
    }
}

#[test]
fn interest_taken_back_alone_keeps_what_the_node_runs_for_its_uninstall() {
    let mut k = Kit::new(2);
    let rr = ResourceReport {
        interested: Some(false),
        ..ResourceReport::default()
    };
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "c-0".into(),
        active: Some(true),
        resources: BTreeMap::from([("r".to_string(), rr)]),
        ..Default::default()
    }]));
    assert_eq!(k.s.node_table().get("c-0").unwrap().current("r"), Some(1));
}

/// Seed 003: installation is finished when `done`, a success when its error is empty; the server records the
/// version as current although the report did not switch `current` (it named none).
#[test]
fn done_without_error_is_a_success_even_when_the_report_does_not_switch_current() {
    let mut k = Kit::new(2);
    let id = k.start_with(|_| {});
    k.report(
        0,
        None,
        &[(1, vp(true, true, None)), (2, vp(true, true, None))],
    );
    k.report(1, None, &[(2, vp(true, true, None))]);
    let table = k.s.node_table();
    assert_eq!(table.get("c-0").unwrap().current("r"), Some(2));
    assert_eq!(table.get("c-1").unwrap().current("r"), Some(2));
    assert_eq!(k.status(id), Status::RolledForward);
    // The node's next report says it runs 1 again: that is what it runs.
    k.report(
        0,
        Some(1),
        &[(1, vp(true, true, None)), (2, vp(true, true, None))],
    );
    assert_eq!(k.s.node_table().get("c-0").unwrap().current("r"), Some(1));
}
