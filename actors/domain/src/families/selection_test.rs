use crate::testing::*;
use crate::*;

fn other(k: &mut Kit) {
    k.ok(Command::CreateResource { name: "lib".into() });
    for _ in 0..2 {
        let p = Command::PublishVersion {
            resource: "lib".into(),
            label: None,
            artifact: None,
            metadata: Default::default(),
            depends_on: vec![],
            health_port: None,
        };
        k.ok(p);
    }
}

/// Node `node` reports it runs `lib` 1, installed and healthy.
fn on_lib_1(k: &mut Kit, node: &str) {
    k.report_node(node, "lib", Some(1), &[(1, vp(true, true, None))]);
}

/// An edit of consumer `c`'s subscription to `lib` that changes nothing but starts the selection over.
fn edit_lib_subscription(k: &mut Kit) {
    k.ok(Command::PatchSubscription {
        consumer: "c".into(),
        resource: "lib".into(),
        mode: None,
        pin: Default::default(),
        policy: Default::default(),
    });
}

/// Node `node` joins consumer `c`.
fn join_c(k: &mut Kit, node: &str) {
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec![node.into()],
        remove: vec![],
    });
}

#[test]
fn newest_pin_and_dependency_invariant_in_priority_order() {
    let mut k = Kit::new(1);
    assert_eq!(k.s.selected_version("c", "r"), Some(2), "newest");
    other(&mut k);
    let v3 = k.publish(vec![Dependency {
        resource: "lib".into(),
        version: 2,
    }]);
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(2),
        "v3 needs lib 2, not installed on c"
    );
    let rr = ResourceReport {
        interested: None,
        current: Some(2),
        versions: [(2, vp(true, true, None))].into(),
        removed: false,
        log: None,
    };
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "c-0".into(),
        active: None,
        resources: [("lib".to_string(), rr)].into(),
        ..Default::default()
    }]));
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(v3),
        "dependency now holds"
    );
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: Some(1),
        policy: Policy::default(),
    });
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(1),
        "a pin wins over everything"
    );
}

#[test]
fn dependency_must_name_an_existing_version() {
    let mut k = Kit::new(1);
    let cmd = Command::PublishVersion {
        resource: "r".into(),
        label: None,
        artifact: None,
        metadata: Default::default(),
        depends_on: vec![Dependency {
            resource: "r".into(),
            version: 1,
        }],
        health_port: None,
    };
    assert!(k.err(cmd).to_string().contains("own resource"));
    other(&mut k);
    let cmd = Command::PublishVersion {
        resource: "r".into(),
        label: None,
        artifact: None,
        metadata: Default::default(),
        depends_on: vec![Dependency {
            resource: "lib".into(),
            version: 5,
        }],
        health_port: None,
    };
    assert_eq!(k.err(cmd).to_string(), "resource \"lib\" has no version 5");
}

/// `c` runs `lib` 2 on both nodes (weakly), and `r` 3 needs `lib` 2: selected.
fn dependency_that_holds() -> Kit {
    let mut k = Kit::new(2);
    other(&mut k);
    for n in ["c-0", "c-1"] {
        k.report_node(n, "lib", Some(2), &[(2, vp(true, true, None))]);
    }
    k.subscribe("c", "lib", Mode::Weak, None);
    let v3 = k.publish(vec![Dependency {
        resource: "lib".into(),
        version: 2,
    }]);
    assert_eq!(k.s.selected_version("c", "r"), Some(v3));
    k
}

#[test]
fn a_blank_joiner_or_a_re_imaged_node_never_revokes_a_dependency_that_holds() {
    let mut k = dependency_that_holds();
    // Issue 22 item 6: a blank node joining the holder flipped the selection back to version 2.
    join_c(&mut k, "c-2");
    k.report_node("c-2", "r", Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(k.s.selected_version("c", "r"), Some(3), "a joiner");
    let emptied = ResourceReport {
        interested: None,
        current: None,
        versions: Default::default(),
        removed: true,
        log: None,
    };
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "c-0".into(),
        active: None,
        resources: [("lib".to_string(), emptied)].into(),
        ..Default::default()
    }]));
    assert_eq!(k.s.selected_version("c", "r"), Some(3), "a re-imaged node");
}

#[test]
fn a_holder_re_imaged_whole_keeps_its_dependency_until_its_subscription_changes() {
    let mut k = dependency_that_holds();
    // Found by CI's proptest: the last re-imaged node revoked it, and `r` flipped back to version 2.
    let emptied = ResourceReport {
        interested: None,
        current: None,
        versions: Default::default(),
        removed: true,
        log: None,
    };
    for n in ["c-0", "c-1"] {
        k.ok(Command::ReportNodes(vec![NodeReport {
            node: n.into(),
            active: None,
            resources: [("lib".to_string(), emptied.clone())].into(),
            ..Default::default()
        }]));
        assert_eq!(k.s.selected_version("c", "r"), Some(3), "{n} re-imaged");
    }
    // An edit of the holder's subscription is a new decision: what its nodes ran stops counting.
    edit_lib_subscription(&mut k);
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(2),
        "subscription edited"
    );
}

#[test]
fn a_dependency_stops_holding_when_the_holders_version_is_retracted_or_rolled_back() {
    let mut k = dependency_that_holds();
    k.ok(Command::RetractVersion {
        resource: "lib".into(),
        version: 2,
        message: None,
        by: Actor::User,
    });
    assert_eq!(k.s.selected_version("c", "r"), Some(2), "retracted");
    k.ok(Command::UnretractVersion {
        resource: "lib".into(),
        version: 2,
    });
    assert_eq!(k.s.selected_version("c", "r"), Some(3));
    // Rolled back: a node runs version 1 again.
    on_lib_1(&mut k, "c-1");
    assert_eq!(k.s.selected_version("c", "r"), Some(2), "rolled back");
}

/// Issue 36 §6 (seed 003): `c` of three nodes runs `lib` 1 (weakly), and `r` 3 needs `lib` 2. `c-2` goes
/// stale; `c-0` and `c-1` move to `lib` 2, so the dependency holds and `r` 3 is selected.
fn dependency_that_holds_while_c2_is_stale() -> Kit {
    let mut k = Kit::new(3);
    other(&mut k);
    for n in ["c-0", "c-1", "c-2"] {
        on_lib_1(&mut k, n);
    }
    k.subscribe("c", "lib", Mode::Weak, None);
    let v3 = k.publish(vec![Dependency {
        resource: "lib".into(),
        version: 2,
    }]);
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(2),
        "lib 2 runs nowhere"
    );
    k.ok(Command::MarkInactive {
        nodes: vec!["c-2".into()],
    });
    for n in ["c-0", "c-1"] {
        k.node_installed(n, "lib", 1, 2);
    }
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(v3),
        "every active node runs lib 2"
    );
    k
}

#[test]
fn a_stale_node_coming_back_on_an_older_version_never_revokes_a_dependency_that_holds() {
    let mut k = dependency_that_holds_while_c2_is_stale();
    // It comes back active, still on lib 1: today the selection flipped back to 2 for every node.
    on_lib_1(&mut k, "c-2");
    assert!(k.s.node("c-2").is_some_and(|n| n.active));
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(3),
        "a stale node came back"
    );
    let c0 = k.s.node_table().get("c-0").cloned().expect("c-0");
    assert_eq!(k.s.selection().selected_for_node("c", "r", &c0), Some(3));
    // It catches up: nothing changes.
    k.node_installed("c-2", "lib", 1, 2);
    assert_eq!(k.s.selected_version("c", "r"), Some(3), "caught up");
}

#[test]
fn a_node_joining_on_an_older_version_never_revokes_a_dependency_that_holds() {
    let mut k = dependency_that_holds();
    join_c(&mut k, "c-2");
    // It joins running lib 1: today the selection flipped back to 2.
    on_lib_1(&mut k, "c-2");
    assert_eq!(k.s.selected_version("c", "r"), Some(3), "a joiner on lib 1");
    // A node of another consumer, known on lib 1 already, joins too.
    k.ok(Command::CreateConsumer {
        name: "d".into(),
        nodes: vec!["d-0".into()],
    });
    on_lib_1(&mut k, "d-0");
    join_c(&mut k, "d-0");
    on_lib_1(&mut k, "d-0");
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(3),
        "a known node joined"
    );
}

#[test]
fn a_dependency_that_never_held_is_not_made_to_hold_by_a_node_that_came_back() {
    // `c-2` comes back on lib 1 before the others move: it counts, the dependency never held.
    let mut k = Kit::new(3);
    other(&mut k);
    for n in ["c-0", "c-1", "c-2"] {
        on_lib_1(&mut k, n);
    }
    k.subscribe("c", "lib", Mode::Weak, None);
    k.publish(vec![Dependency {
        resource: "lib".into(),
        version: 2,
    }]);
    k.ok(Command::MarkInactive {
        nodes: vec!["c-2".into()],
    });
    on_lib_1(&mut k, "c-2");
    for n in ["c-0", "c-1"] {
        k.node_installed(n, "lib", 1, 2);
    }
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(2),
        "c-2 still runs lib 1"
    );
}

#[test]
fn a_retraction_revokes_a_dependency_a_stale_node_did_not() {
    let mut k = dependency_that_holds_while_c2_is_stale();
    on_lib_1(&mut k, "c-2");
    assert_eq!(k.s.selected_version("c", "r"), Some(3));
    k.ok(Command::RetractVersion {
        resource: "lib".into(),
        version: 2,
        message: None,
        by: Actor::User,
    });
    assert_eq!(k.s.selected_version("c", "r"), Some(2), "lib 2 retracted");
}

#[test]
fn an_edit_of_the_holders_subscription_revokes_a_dependency_a_stale_node_did_not() {
    let mut k = dependency_that_holds_while_c2_is_stale();
    on_lib_1(&mut k, "c-2");
    assert_eq!(k.s.selected_version("c", "r"), Some(3));
    // An edit starts over from what the nodes run now: c-2 runs lib 1.
    edit_lib_subscription(&mut k);
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(2),
        "subscription edited"
    );
    // It catches up: the dependency holds again.
    k.node_installed("c-2", "lib", 1, 2);
    assert_eq!(k.s.selected_version("c", "r"), Some(3), "caught up");
}

#[test]
fn an_edit_of_the_holders_subscription_keeps_a_dependency_its_nodes_still_meet() {
    let mut k = dependency_that_holds_while_c2_is_stale();
    edit_lib_subscription(&mut k);
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(3),
        "every active node runs lib 2"
    );
    on_lib_1(&mut k, "c-2");
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(3),
        "held since the edit"
    );
}

#[test]
fn a_rollback_of_the_holders_deployment_revokes_a_dependency_at_once() {
    // `lib` 2 reaches c-0 and c-1 by a deployment by hand; c-2 never ran lib, so it is still in flight.
    let mut k = Kit::new(3);
    other(&mut k);
    for n in ["c-0", "c-1"] {
        on_lib_1(&mut k, n);
    }
    k.subscribe("c", "lib", Mode::Weak, None);
    let v3 = k.publish(vec![Dependency {
        resource: "lib".into(),
        version: 2,
    }]);
    let id = k.start(spec(
        "c",
        "lib",
        2,
        Strategy::AllAtOnce { fail_fast: false },
    ));
    for n in ["c-0", "c-1"] {
        k.node_installed(n, "lib", 1, 2);
    }
    assert!(k.status(id).is_active(), "c-2 has not finished");
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(v3),
        "lib 2 runs on c-0 and c-1"
    );
    // A person rolls it back: the dependency stops holding before any node moved back.
    k.op(rollback, id).expect("rollback");
    assert_eq!(k.s.selected_version("c", "r"), Some(2), "rolling back");
    // A node's report while it rolls back brings nothing back.
    k.report_node(
        "c-0",
        "lib",
        Some(2),
        &[(1, vp(true, true, None)), (2, vp(true, true, None))],
    );
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(2),
        "still rolling back"
    );
    for n in ["c-0", "c-1"] {
        k.report_node(
            n,
            "lib",
            Some(1),
            &[(1, vp(true, true, None)), (2, vp(true, true, None))],
        );
    }
    assert_eq!(k.s.selected_version("c", "r"), Some(2), "moved back");
}

#[test]
fn a_node_moving_back_revokes_a_dependency_a_stale_node_did_not() {
    let mut k = dependency_that_holds_while_c2_is_stale();
    on_lib_1(&mut k, "c-2");
    // c-0 goes back to lib 1 (a deployment of it by hand, a rollback on the node): it runs an older one again.
    k.report_node(
        "c-0",
        "lib",
        Some(1),
        &[(1, vp(true, true, None)), (2, vp(true, true, None))],
    );
    assert_eq!(k.s.selected_version("c", "r"), Some(2), "c-0 moved back");
}
