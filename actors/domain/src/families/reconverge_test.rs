use crate::testing::*;
use crate::*;

fn rolling(i: u32, d: u32) -> Strategy {
    Strategy::Rolling {
        install_window: i,
        download_window: d,
    }
}

/// Subscribes `c` to `r` strongly with `policy`: version 2 is deployed automatically; its id.
fn strong(k: &mut Kit, policy: Policy) -> DeploymentId {
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Strong,
        pin: None,
        policy,
    });
    k.s.consumer_map()["c"].active["r"]
}

fn inactive(k: &mut Kit, node: &str) {
    k.ok(Command::MarkInactive {
        nodes: vec![node.into()],
    });
}

fn active(k: &Kit) -> Option<DeploymentId> {
    k.s.consumer_map()["c"].active.get("r").copied()
}

fn node_ids(k: &Kit, id: DeploymentId) -> Vec<&str> {
    k.d(id).nodes.iter().map(|n| n.id.as_str()).collect()
}

fn created(k: &Kit, id: DeploymentId) -> (Option<&str>, &Actor) {
    let e = &k.d(id).events[0];
    (e.message.as_deref(), &e.by)
}

#[test]
fn a_node_silent_during_the_rollout_gets_a_follow_up_with_the_subscriptions_policy_when_back() {
    let mut k = Kit::new(3);
    let policy = Policy {
        strategy: Some(rolling(2, 2)),
        min_healthy_ms: Some(0),
        ..Policy::default()
    };
    let first = strong(&mut k, policy);
    inactive(&mut k, "c-2");
    assert_eq!(k.d(first).nodes[2].phase, NodePhase::Skipped);
    k.installed(0);
    k.installed(1);
    assert_eq!(k.d(first).status, Status::RolledForward);
    // Still silent: nothing to do for it yet.
    assert_eq!(active(&k), None);
    assert_eq!(k.s.targets("c-2").get("r").map(|t| t.version), Some(1));

    // Back: a follow-up of version 2 for it alone, with the subscription's strategy.
    k.report(2, Some(1), &[(1, vp(true, true, None))]);
    let follow = active(&k).expect("a follow-up deployment");
    assert_ne!(follow, first);
    assert_eq!(node_ids(&k, follow), vec!["c-2"]);
    assert_eq!(k.d(follow).version, 2);
    assert!(
        !k.d(follow).full,
        "a follow-up is not the consumer's deployment"
    );
    assert_eq!(k.d(follow).settings.strategy, rolling(2, 2));
    assert_eq!(
        created(&k, follow),
        (
            Some("follow-up to version 2 for 1 nodes: 1 skipped"),
            &Actor::System
        )
    );
    assert_eq!(k.s.targets("c-2")["r"].version, 2);
    k.installed(2);
    assert_eq!(k.d(follow).status, Status::RolledForward);
    // Converged: no more deployments.
    assert_eq!(active(&k), None);
    assert_eq!(k.s.deployment_map().len(), 2);
}

#[test]
fn a_node_added_later_waits_for_the_active_deployment_then_joins_through_a_follow_up() {
    let mut k = Kit::new(2);
    let first = strong(&mut k, Policy::default());
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec!["c-2".into()],
        remove: vec![],
    });
    k.report(2, None, &[]);
    // A deployment of the resource is active: the new node waits, and is never sent a version
    // on its own.
    assert_eq!(active(&k), Some(first));
    assert!(!node_ids(&k, first).contains(&"c-2"));
    assert_eq!(k.s.targets("c-2").get("r"), None);
    k.installed(0);
    k.installed(1);
    assert_eq!(k.d(first).status, Status::RolledForward);

    let follow = active(&k).expect("a follow-up once the deployment ended");
    assert_eq!(node_ids(&k, follow), vec!["c-2"]);
    assert_eq!(
        created(&k, follow).0,
        Some("follow-up to version 2 for 1 nodes: 1 joined")
    );
    // Default policy: rolling with install window 1.
    assert_eq!(k.d(follow).settings.strategy, rolling(1, 2));
    k.installed(2);
    assert_eq!(k.d(follow).status, Status::RolledForward);
    assert_eq!(active(&k), None);
}

#[test]
fn returned_and_joined_nodes_share_one_follow_up_in_the_consumers_order() {
    let mut k = Kit::new(4);
    let first = strong(
        &mut k,
        Policy {
            strategy: Some(Strategy::AllAtOnce { fail_fast: false }),
            ..Policy::default()
        },
    );
    inactive(&mut k, "c-1");
    inactive(&mut k, "c-3");
    // Marked inactive before the deployment ended: skipped. Node 1 is back before the end.
    k.report(1, Some(1), &[(1, vp(true, true, None))]);
    k.installed(0);
    k.installed(2);
    assert_eq!(k.d(first).status, Status::RolledForward);
    let follow = active(&k).expect("node 1 is back");
    assert_eq!(node_ids(&k, follow), vec!["c-1"]);
    k.installed(1);
    // Node 3 returns after node 1's follow-up: it was not in that one, so it "returned".
    k.report(3, Some(1), &[(1, vp(true, true, None))]);
    let again = active(&k).expect("node 3 is back");
    assert_eq!(node_ids(&k, again), vec!["c-3"]);
    assert_eq!(
        created(&k, again).0,
        Some("follow-up to version 2 for 1 nodes: 1 returned")
    );
}

#[test]
fn a_tolerated_failure_is_followed_up_once_the_node_no_longer_reports_it_and_never_looped() {
    let mut k = Kit::new(3);
    let first = strong(
        &mut k,
        Policy {
            strategy: Some(Strategy::AllAtOnce { fail_fast: false }),
            max_failed_nodes: Some(FailedNodes::Count(1)),
            ..Policy::default()
        },
    );
    k.failed(1);
    k.installed(0);
    k.installed(2);
    assert_eq!(k.d(first).status, Status::RolledForward);
    // It still says version 2 failed: left to a person, no deployment that would fail at once.
    assert_eq!(active(&k), None);
    // It reports version 2 gone (reinstalled, cleaned up): followed up.
    k.report(1, Some(1), &[(1, vp(true, true, None))]);
    let follow = active(&k).expect("a follow-up for the failed node");
    assert_eq!(
        created(&k, follow).0,
        Some("follow-up to version 2 for 1 nodes: 1 failed")
    );
    // It fails again: no node of the follow-up succeeded, so it rolls back (issue 22), and no other
    // follows.
    k.failed(1);
    assert_eq!(k.d(follow).status, Status::RolledBack);
    // Rolled back, version 2 is held back on `c` (§10): no follow-up of it starts again (what
    // selection then deploys is the subscription's business, not a retry of version 2).
    let not_v2 = |k: &Kit| active(k).is_none_or(|d| k.d(d).version != 2);
    assert!(not_v2(&k));
    k.report(1, Some(1), &[(1, vp(true, true, None))]);
    assert!(
        not_v2(&k),
        "a node that failed in a follow-up is not retried"
    );
}

#[test]
fn no_follow_up_after_an_abort_or_on_a_weak_subscription() {
    let mut k = Kit::new(2);
    let first = strong(&mut k, Policy::default());
    inactive(&mut k, "c-1");
    k.installed(0);
    assert_eq!(k.d(first).status, Status::RolledForward);
    // A person aborts the follow-up of the returned node: nothing starts it again.
    k.report(1, Some(1), &[(1, vp(true, true, None))]);
    let follow = active(&k).expect("follow-up");
    k.op(abort, follow).unwrap();
    assert_eq!(active(&k), None);
    k.report(1, Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(active(&k), None);

    let mut k = Kit::new(2);
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: None,
        policy: Policy::default(),
    });
    inactive(&mut k, "c-1");
    k.report(1, Some(1), &[(1, vp(true, true, None))]);
    assert!(k.s.deployment_map().is_empty());
}

#[test]
fn ranges_compress_runs_of_ordinals() {
    let f = FollowUp {
        version: 2,
        ordinals: vec![0, 1, 2, 5, 7, 8],
        reasons: [(Behind::Returned, 4), (Behind::Joined, 2)].into(),
    };
    assert_eq!(f.ranges(), "0-2,5,7-8");
    assert_eq!(
        f.message(),
        "follow-up to version 2 for 6 nodes: 4 returned, 2 joined"
    );
    assert_eq!(
        parse_ranges(&f.ranges(), "c", 9).unwrap(),
        [0, 1, 2, 5, 7, 8].into()
    );
}
