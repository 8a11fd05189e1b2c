use crate::testing::*;
use crate::*;
use std::collections::BTreeMap;

fn subscribe(k: &mut Kit, consumer: &str) {
    k.ok(Command::Subscribe {
        consumer: consumer.into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: None,
        policy: Policy::default(),
    });
}

/// Node `c-i` reports it removed `r`.
fn removed(k: &mut Kit, i: usize) {
    let rr = ResourceReport {
        removed: true,
        interested: Some(true),
        ..ResourceReport::default()
    };
    let r = NodeReport {
        node: format!("c-{i}"),
        active: None,
        resources: BTreeMap::from([("r".to_string(), rr)]),
        ..Default::default()
    };
    k.ok(Command::ReportNodes(vec![r]));
}

fn target(k: &Kit, i: usize) -> Option<Target> {
    k.s.targets(&format!("c-{i}")).get("r").copied()
}

#[test]
fn deleting_a_subscription_uninstalls_the_resource_until_the_node_reports_it_removed() {
    let mut k = Kit::new(2);
    subscribe(&mut k, "c");
    k.ok(Command::Unsubscribe {
        consumer: "c".into(),
        resource: "r".into(),
    });
    assert_eq!(target(&k, 0), Some(Target::uninstall(1)));
    let change = k.s.report_changes(&NodeReport {
        node: "c-0".into(),
        active: None,
        resources: BTreeMap::from([(
            "r".to_string(),
            ResourceReport {
                removed: true,
                ..ResourceReport::default()
            },
        )]),
        ..Default::default()
    });
    assert!(change.is_some(), "a removal is a change, not a heartbeat");
    removed(&mut k, 0);
    assert_eq!(target(&k, 0), None);
    assert_eq!(k.s.node("c-0").unwrap().resources["r"].current, None);
    assert!(k.s.node_table().get("c-0").unwrap().removing.is_empty());
    // Subscribed again: sent the selected version, no longer told to remove it.
    subscribe(&mut k, "c");
    assert_eq!(
        target(&k, 1).map(|t| (t.version, t.install)),
        Some((2, true))
    );
    let e = k.err(Command::Unsubscribe {
        consumer: "c".into(),
        resource: "nope".into(),
    });
    assert_eq!(e.kind(), ErrorKind::NotFound);
}

#[test]
fn a_never_subscribed_resource_is_left_alone() {
    // A deployment by hand on a consumer without a subscription installs without being undone.
    let k = Kit::new(1);
    assert_eq!(target(&k, 0), None);
}

#[test]
fn a_node_removed_from_its_consumer_uninstalls_unless_another_consumer_subscribes() {
    let mut k = Kit::new(2);
    subscribe(&mut k, "c");
    k.ok(Command::CreateConsumer {
        name: "d".into(),
        nodes: vec!["c-1".into()],
    });
    subscribe(&mut k, "d");
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec![],
        remove: vec!["c-0".into(), "c-1".into()],
    });
    assert_eq!(target(&k, 0), Some(Target::uninstall(1)));
    assert!(!target(&k, 1).unwrap().uninstall, "d still subscribes");
}

#[test]
fn lost_interest_uninstalls() {
    let mut k = Kit::new(1);
    subscribe(&mut k, "c");
    let rr = ResourceReport {
        interested: Some(false),
        current: Some(1),
        versions: BTreeMap::from([(1, vp(true, true, None))]),
        removed: false,
        log: None,
    };
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "c-0".into(),
        active: None,
        resources: BTreeMap::from([("r".to_string(), rr)]),
        ..Default::default()
    }]));
    assert_eq!(target(&k, 0), Some(Target::uninstall(1)));
}

#[test]
fn deleting_a_consumer_uninstalls_and_is_refused_while_in_use() {
    let mut k = Kit::new(1);
    subscribe(&mut k, "c");
    let id = k.start_with(|_| {});
    let e = k.err(Command::DeleteConsumer { name: "c".into() });
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!(
        e.to_string(),
        format!("consumer \"c\" is in use: deployment {id} of r is active")
    );
    let e = k.err(Command::Unsubscribe {
        consumer: "c".into(),
        resource: "r".into(),
    });
    assert_eq!(e.kind(), ErrorKind::Conflict);
    k.installed(0);
    k.ok(Command::CreateGroup {
        name: "g".into(),
        members: vec![Member {
            consumer: "c".into(),
            resource: "r".into(),
        }],
    });
    let e = k.err(Command::DeleteConsumer { name: "c".into() });
    assert_eq!(
        e.to_string(),
        "consumer \"c\" is in use: it is a member of group \"g\""
    );
    k.ok(Command::DeleteGroup { name: "g".into() });
    k.ok(Command::DeleteConsumer { name: "c".into() });
    assert!(k.s.consumer("c").is_none());
    assert!(k.s.node("c-0").unwrap().consumers.is_empty());
    assert_eq!(target(&k, 0), Some(Target::uninstall(2)));
    let e = k.err(Command::DeleteGroup { name: "g".into() });
    assert_eq!(e.kind(), ErrorKind::NotFound);
}

#[test]
fn a_rollback_of_a_node_with_no_previous_version_uninstalls_it() {
    let mut k = Kit::new(2);
    // Node c-2 joins with nothing installed.
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec!["c-2".into()],
        remove: vec![],
    });
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "c-2".into(),
        ..NodeReport::default()
    }]));
    let id = k.start_with(|s| s.strategy = Some(Strategy::AllAtOnce { fail_fast: true }));
    let rr = ResourceReport {
        current: Some(2),
        versions: BTreeMap::from([(2, vp(true, true, None))]),
        ..ResourceReport::default()
    };
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "c-2".into(),
        active: None,
        resources: BTreeMap::from([("r".to_string(), rr)]),
        ..Default::default()
    }]));
    k.failed(0);
    assert_eq!(k.d(id).status, Status::RollingBack);
    assert_eq!(target(&k, 2), Some(Target::uninstall(2)));
    assert_eq!(k.d(id).nodes[2].phase, NodePhase::RollingBack);
    removed(&mut k, 2);
    k.report(1, Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(k.d(id).status, Status::RolledBack);
    let events = k.s.deployment(id).unwrap().events;
    assert!(events.iter().any(|e| e.node.as_deref() == Some("c-2")
        && e.action == Some(EventKind::RolledBack)
        && e.message.as_deref() == Some("uninstalled")));
}
