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
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec!["c-2".into()],
        remove: vec![],
    });
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
    k.ok(Command::PatchSubscription {
        consumer: "c".into(),
        resource: "lib".into(),
        mode: None,
        pin: Default::default(),
        policy: Default::default(),
    });
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
    k.report_node("c-1", "lib", Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(k.s.selected_version("c", "r"), Some(2), "rolled back");
}
