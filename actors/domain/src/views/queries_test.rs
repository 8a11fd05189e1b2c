//! The leader's named queries answer from the applied state what the supervisor used to read from
//! the maps: consumers, active and terminal deployments, the nodes it watches, where a report goes.

use crate::testing::{abort, Kit};
use crate::*;

fn nodes(k: &mut Kit, add: &[&str], remove: &[&str]) {
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: add.iter().map(|n| n.to_string()).collect(),
        remove: remove.iter().map(|n| n.to_string()).collect(),
    });
}

#[test]
fn deployments_are_active_until_they_end_and_then_count_as_terminal() {
    let mut k = Kit::new(2);
    assert!(k.s.has_consumer("c") && !k.s.has_consumer("x"));
    let id = k.start_with(|_| {});
    assert!(k.s.is_active(id));
    assert_eq!(k.s.deployment_status(id), Some(k.d(id).status));
    assert_eq!(k.s.rollout_of(id), Some(("c", "r", 2)));
    assert_eq!(k.s.terminal_deployments(), 0);
    k.ok(abort(id, None, Actor::User));
    assert!(!k.s.is_active(id));
    assert_eq!(k.s.deployment_status(id), Some(Status::Aborted));
    assert_eq!(k.s.terminal_deployments(), 1);
    let unknown = DeploymentId(99);
    assert!(!k.s.is_active(unknown));
    assert_eq!(k.s.deployment_status(unknown), None);
    assert_eq!(k.s.rollout_of(unknown), None);
}

#[test]
fn a_pairs_active_deployment_is_found_by_consumer_and_resource_until_it_ends() {
    let mut k = Kit::new(2);
    assert_eq!(k.s.active_deployment_of("c", "r"), None);
    let first = k.start_with(|_| {});
    assert_eq!(k.s.active_deployment_of("c", "r"), Some(first));
    assert_eq!(k.s.active_deployment_of("c", "other"), None);
    assert_eq!(k.s.active_deployment_of("ghost", "r"), None);
    k.ok(abort(first, None, Actor::User));
    assert_eq!(k.s.active_deployment_of("c", "r"), None);
    let second = k.start_with(|_| {});
    assert_ne!(second, first);
    assert_eq!(k.s.active_deployment_of("c", "r"), Some(second));
}

#[test]
fn the_leader_watches_active_nodes_of_a_consumer_only() {
    let mut k = Kit::new(3);
    assert_eq!(
        k.s.reporting_nodes().collect::<Vec<_>>(),
        ["c-0", "c-1", "c-2"]
    );
    k.ok(Command::MarkInactive {
        nodes: vec!["c-1".into()],
    });
    nodes(&mut k, &[], &["c-2"]);
    assert_eq!(k.s.reporting_nodes().collect::<Vec<_>>(), ["c-0"]);
}

#[test]
fn a_report_goes_to_the_nodes_consumer_or_any_while_it_still_removes_something() {
    let mut k = Kit::new(2);
    assert_eq!(k.s.report_consumer("c-0"), Some("c"));
    assert_eq!(k.s.report_consumer("ghost"), None);
    // c-1 runs r, which no consumer of it wants once it left: it still has to remove it.
    k.ok(Command::CreateConsumer {
        name: "d".into(),
        nodes: vec![],
    });
    nodes(&mut k, &[], &["c-1"]);
    assert!(!k.s.node_table().get("c-1").unwrap().removing.is_empty());
    assert_eq!(k.s.report_consumer("c-1"), Some("c"));
    // A node that joined and left holding nothing has nothing to record.
    nodes(&mut k, &["c-9"], &[]);
    nodes(&mut k, &[], &["c-9"]);
    assert_eq!(k.s.report_consumer("c-9"), None);
}
