//! Forgotten nodes: `ForgetNodes` removes only nodes in no consumer and no active deployment, replicas
//! agree byte for byte, and a forgotten node that reports again is a new node.

use super::forgettable;
use crate::testing::{abort, vp, Kit};
use crate::{Actor, ClusterState, Command, DeploymentId, NodeState, Response};

fn leave(k: &mut Kit, nodes: &[&str]) {
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec![],
        remove: nodes.iter().map(|n| n.to_string()).collect(),
    });
}

fn forget(k: &mut Kit, nodes: &[&str]) -> u32 {
    let nodes = nodes.iter().map(|n| n.to_string()).collect();
    match k.ok(Command::ForgetNodes { nodes }) {
        Response::Forgotten { forgotten } => forgotten,
        other => panic!("{other:?}"),
    }
}

#[test]
fn only_nodes_in_no_consumer_and_no_active_deployment_are_forgotten() {
    let mut k = Kit::new(4);
    assert_eq!(k.s.forgettable_nodes().count(), 0);
    leave(&mut k, &["c-1", "c-3"]);
    assert_eq!(k.s.forgettable_nodes().collect::<Vec<_>>(), ["c-1", "c-3"]);
    // c-0 is still in the consumer; "ghost" is unknown: both skipped.
    assert_eq!(forget(&mut k, &["c-0", "c-1", "c-3", "ghost"]), 2);
    assert!(k.s.node("c-1").is_none() && k.s.node("c-3").is_none());
    assert!(k.s.node("c-0").is_some() && k.s.node("c-2").is_some());
    assert_eq!(k.s.forgettable_nodes().count(), 0);
}

#[test]
fn a_node_that_left_a_running_deployment_is_forgotten_and_the_deployment_goes_on() {
    let mut k = Kit::new(3);
    let id = k.start_with(|_| {});
    leave(&mut k, &["c-2"]);
    assert_eq!(forget(&mut k, &["c-2"]), 1);
    assert!(k.s.node("c-2").is_none());
    // The deployment still names it (skipped) and its views do not need its state.
    assert!(k.d(id).nodes.iter().any(|n| n.id == "c-2"));
    assert!(k.s.deployment(id).is_some());
    k.ok(abort(id, None, Actor::User));
    assert!(k.d(id).status.is_terminal());
}

#[test]
fn a_node_in_an_active_deployment_or_a_consumer_is_not_forgettable() {
    let mut n = NodeState::default();
    assert!(forgettable(&n));
    n.deployments.insert(DeploymentId(1), 0);
    assert!(!forgettable(&n));
    n.deployments = Default::default();
    n.consumers.insert("c".to_string());
    assert!(!forgettable(&n));
}

#[test]
fn replicas_and_a_restored_state_forget_identically() {
    let mut a = Kit::new(5);
    leave(&mut a, &["c-0", "c-2", "c-4"]);
    let mut b = Kit {
        s: ClusterState::from_snapshot_bytes(&a.s.snapshot_bytes()).unwrap(),
        now: a.now,
    };
    assert_eq!(forget(&mut a, &["c-2", "c-0"]), 2);
    assert_eq!(forget(&mut b, &["c-2", "c-0"]), 2);
    assert_eq!(a.s.snapshot_bytes(), b.s.snapshot_bytes());
    // Both go on applying alike: c-4 reports, then is forgotten; c-2 comes back as a new node.
    for k in [&mut a, &mut b] {
        k.report(4, Some(2), &[(2, vp(true, true, None))]);
        assert_eq!(forget(k, &["c-4"]), 1);
        k.ok(Command::UpdateConsumerNodes {
            name: "c".into(),
            add: vec!["c-2".into()],
            remove: vec![],
        });
    }
    assert_eq!(a.s.snapshot_bytes(), b.s.snapshot_bytes());
    let back = ClusterState::from_snapshot_bytes(&a.s.snapshot_bytes()).unwrap();
    assert_eq!(back, a.s);
    let again = a.s.node("c-2").expect("c-2 is a node again");
    assert_eq!(again.consumers, ["c"]);
}
