use crate::testing::*;
use crate::*;

/// Consumers `multi` and `multi-b` share nodes `multi-0` and `multi-1`, both subscribed weakly to `mr`
/// (as in the chaos workload); version 2 fails on both nodes and is rolled back on `multi`, so it is held
/// back there (a rollback holds only on evidence: nodes failed it).
fn two_consumers_with_a_hold_on_one() -> Kit {
    let mut k = Kit::empty();
    k.fleet("multi", "mr", 2);
    k.ok(Command::CreateConsumer {
        name: "multi-b".into(),
        nodes: vec!["multi-0".into(), "multi-1".into()],
    });
    k.subscribe("multi", "mr", Mode::Weak, None);
    k.subscribe("multi-b", "mr", Mode::Weak, None);
    let v2 = k.publish_to("mr");
    let id = k.start(spec(
        "multi",
        "mr",
        v2,
        Strategy::AllAtOnce { fail_fast: false },
    ));
    for n in ["multi-0", "multi-1"] {
        k.report_node(
            n,
            "mr",
            Some(1),
            &[
                (1, vp(true, true, None)),
                (v2, vp(true, true, Some("exit 1"))),
            ],
        );
    }
    for n in ["multi-0", "multi-1"] {
        k.report_node(n, "mr", Some(1), &[(1, vp(true, true, None))]);
    }
    assert_eq!(k.status(id), Status::RolledBack);
    assert!(k.s.consumer_map()["multi"].held("mr", v2));
    k
}

#[test]
fn a_hold_on_one_consumer_keeps_the_version_off_nodes_another_consumer_shares() {
    let mut k = two_consumers_with_a_hold_on_one();
    // `multi` selects nothing (its only other version is retracted): today the nodes then follow
    // `multi-b`, which knows no hold, and are sent the held version 2 (chaos seeds 328016241, 424246).
    k.ok(Command::RetractVersion {
        resource: "mr".into(),
        version: 1,
        message: None,
        by: Actor::User,
    });
    for n in ["multi-0", "multi-1"] {
        let t = k.target(n, "mr");
        assert!(
            t.is_none_or(|t| t.version != 2 || !(t.install || t.download)),
            "{n} is sent the version held back on multi: {t:?}"
        );
    }
    // A newer version goes to them through either consumer.
    k.publish_to("mr");
    assert_eq!(k.target("multi-0", "mr").map(|t| t.version), Some(3));
}

#[test]
fn a_pin_on_the_held_version_beats_the_hold() {
    let mut k = two_consumers_with_a_hold_on_one();
    // `multi` pins the held version: a person's pin beats an automatic hold (DEPLOYMENTS.md §3), so it
    // still selects it (it used to select nothing, and then `multi-b` decided).
    k.ok(Command::PatchSubscription {
        consumer: "multi".into(),
        resource: "mr".into(),
        mode: None,
        pin: Change::Set(2),
        policy: PolicyPatch::default(),
    });
    for n in ["multi-0", "multi-1"] {
        let t = k.target(n, "mr").expect("multi's pin selects version 2");
        assert_eq!(t.version, 2, "{n}: the pin selects its version");
    }
    let view = k.s.consumer("multi").unwrap();
    assert!(
        view.subscriptions["mr"].held.is_some(),
        "the view says it is held"
    );
}

#[test]
fn a_start_on_the_other_consumer_leaves_out_the_nodes_that_hold_the_version_back() {
    let mut k = two_consumers_with_a_hold_on_one();
    k.ok(Command::UpdateConsumerNodes {
        name: "multi-b".into(),
        add: vec!["b-0".into()],
        remove: vec![],
    });
    k.report_node("b-0", "mr", Some(1), &[(1, vp(true, true, None))]);
    let plan =
        k.s.plan_deployment(&spec(
            "multi-b",
            "mr",
            2,
            Strategy::AllAtOnce { fail_fast: false },
        ))
        .unwrap();
    let planned: Vec<&str> = plan.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(planned, ["b-0"]);
    let why: Vec<&str> = plan.skipped.iter().map(|s| s.why.as_str()).collect();
    assert_eq!(
        why,
        [
            "version 2 of mr held back on multi: rolled back by d-1",
            "version 2 of mr held back on multi: rolled back by d-1"
        ]
    );
    let id = k.start(spec(
        "multi-b",
        "mr",
        2,
        Strategy::AllAtOnce { fail_fast: false },
    ));
    let nodes: Vec<String> = k.d(id).nodes.iter().map(|n| n.id.clone()).collect();
    assert_eq!(nodes, ["b-0"], "the nodes of multi hold version 2 back");
    assert_eq!(k.target("multi-0", "mr").map(|t| t.version), Some(1));
}

#[test]
fn a_hold_outlives_the_subscription_it_was_put_under() {
    let mut k = two_consumers_with_a_hold_on_one();
    // The chaos workload deletes both subscriptions and restores them, `multi` first: today the
    // deletion took the hold with it and both consumers sent version 2 again (seed 424246).
    for c in ["multi-b", "multi"] {
        k.ok(Command::Unsubscribe {
            consumer: c.into(),
            resource: "mr".into(),
        });
    }
    k.subscribe("multi", "mr", Mode::Weak, None);
    k.subscribe("multi-b", "mr", Mode::Weak, None);
    assert!(k.s.consumer_map()["multi"].held("mr", 2));
    for n in ["multi-0", "multi-1"] {
        assert_eq!(k.target(n, "mr").map(|t| t.version), Some(1), "{n}");
    }
}

/// Consumer `c` (4 nodes on version 1) subscribes weakly, pinned at version 1.
fn weak_pinned_at_v1() -> Kit {
    let mut k = Kit::new(4);
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: Some(1),
        policy: Policy::default(),
    });
    k
}

fn version_and_install(k: &Kit, node: &str) -> Option<(u64, bool)> {
    k.target(node, "r").map(|t| (t.version, t.install))
}

#[test]
fn a_finished_canary_sticks_on_a_weak_subscription_until_its_selection_changes() {
    let mut k = weak_pinned_at_v1();
    let id = k.start_with(|s| s.nodes = Some("0-1".into()));
    k.installed(0);
    k.installed(1);
    assert_eq!(k.status(id), Status::RolledForward);
    // Issue 22 item 7: the weak rule sent the canary nodes back to the pinned version 1.
    assert_eq!(version_and_install(&k, "c-0"), Some((2, false)));
    assert_eq!(version_and_install(&k, "c-1"), Some((2, false)));
    assert_eq!(version_and_install(&k, "c-2"), Some((1, true)));
    // A publish the pin keeps out changes nothing.
    k.publish(vec![]);
    assert_eq!(version_and_install(&k, "c-0"), Some((2, false)));
    // A pin changes the selection: every node follows it.
    k.ok(Command::PatchSubscription {
        consumer: "c".into(),
        resource: "r".into(),
        mode: None,
        pin: Change::Set(3),
        policy: PolicyPatch::default(),
    });
    for n in ["c-0", "c-1", "c-2"] {
        assert_eq!(version_and_install(&k, n), Some((3, true)), "{n}");
    }
}

#[test]
fn an_aborted_deployment_leaves_the_nodes_it_moved_where_they_are() {
    let mut k = weak_pinned_at_v1();
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::Rolling {
            install_window: 1,
            download_window: 1,
        })
    });
    k.installed(0);
    k.ok(abort(id, None, Actor::User));
    assert_eq!(k.status(id), Status::Aborted);
    assert_eq!(version_and_install(&k, "c-0"), Some((2, false)));
    assert_eq!(version_and_install(&k, "c-3"), Some((1, true)));
    // A retraction of the version it moved them to ends that: the weak rule applies again.
    k.ok(Command::RetractVersion {
        resource: "r".into(),
        version: 2,
        message: None,
        by: Actor::User,
    });
    assert_eq!(version_and_install(&k, "c-0"), Some((1, true)));
}
