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

/// Node `c-i` comes back re-imaged: it reports holding nothing of `r` (`removed`, as an agent that finds
/// no trace of the resource says).
fn reimaged(k: &mut Kit, i: usize) {
    let rr = ResourceReport {
        interested: None,
        current: None,
        versions: Default::default(),
        removed: true,
        log: None,
    };
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: format!("c-{i}"),
        active: Some(true),
        resources: [("r".to_string(), rr)].into(),
        ..Default::default()
    }]));
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
            Some("follow-up to version 2 for 1 node: 1 skipped"),
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
    reimaged(&mut k, 2);
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
        Some("follow-up to version 2 for 1 node: 1 joined")
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
    // Node 3 returns after node 1's follow-up: not in that one, it is judged by the deployment that took
    // it, which skipped it.
    k.report(3, Some(1), &[(1, vp(true, true, None))]);
    let again = active(&k).expect("node 3 is back");
    assert_eq!(node_ids(&k, again), vec!["c-3"]);
    assert_eq!(
        created(&k, again).0,
        Some("follow-up to version 2 for 1 node: 1 skipped")
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
        Some("follow-up to version 2 for 1 node: 1 failed")
    );
    // It fails again: no node of the follow-up succeeded, so it rolls back (issue 22 item 1).
    k.failed(1);
    assert_eq!(k.d(follow).status, Status::RolledBack);
    // `c` converged on version 2, so the rollback says node 1 is broken, not the version: nothing is
    // held back (§10), the selection stays 2 and no automatic deployment downgrades the other nodes.
    assert!(k.s.consumer_map()["c"].holds.is_empty(), "nothing held");
    assert_eq!(k.s.consumer_map()["c"].subscriptions["r"].version, Some(2));
    assert_eq!(active(&k), None, "no downgrade of the consumer");
    // No chain of follow-ups on the broken node, whatever it reports next: after a failed follow-up a
    // person decides (§4).
    for _ in 0..5 {
        k.failed(1);
        assert_eq!(active(&k), None, "a broken node is not retried in a loop");
    }
    k.report(1, Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(active(&k), None, "not after a failed follow-up either");
}

#[test]
fn nodes_a_quorum_left_behind_get_a_follow_up() {
    let mut k = Kit::new(4);
    let first = strong(
        &mut k,
        Policy {
            strategy: Some(rolling(1, 1)),
            completion: Some(Completion {
                quorum: Some(0.5),
                timeout_ms: None,
                ..Default::default()
            }),
            ..Policy::default()
        },
    );
    k.installed(0);
    k.installed(1);
    assert_eq!(k.d(first).status, Status::RolledForward);
    assert_eq!(k.s.consumer_map()["c"].subscriptions["r"].version, Some(2));
    // Issue 22 item 4: the nodes never admitted were skipped by follow-ups for good.
    let follow = active(&k).expect("a follow-up for the nodes left behind");
    assert_eq!(node_ids(&k, follow), vec!["c-2", "c-3"]);
    assert_eq!(
        created(&k, follow),
        (
            Some("follow-up to version 2 for 2 nodes: 2 left behind"),
            &Actor::System
        )
    );
}

/// `c` strong, pinned at version 1 (where every node already runs: no deployment object), then a canary
/// of version 2 by hand on nodes 0-1 that rolls forward.
fn converged_on_v1_after_a_canary_of_v2(n: usize) -> Kit {
    let mut k = Kit::new(n);
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Strong,
        pin: Some(1),
        policy: Policy::default(),
    });
    assert_eq!(active(&k), None);
    assert_eq!(k.s.consumer_map()["c"].subscriptions["r"].version, Some(1));
    let canary = k.start_with(|s| s.nodes = Some("0-1".into()));
    k.installed(0);
    k.installed(1);
    assert_eq!(k.d(canary).status, Status::RolledForward);
    k
}

#[test]
fn after_a_canary_a_node_that_comes_back_empty_gets_the_converged_version() {
    let mut k = converged_on_v1_after_a_canary_of_v2(4);
    // c-3 is re-imaged: it reports holding nothing. Issue 22 item 8: follow-ups never started after a
    // canary, so it never got version 1 again.
    reimaged(&mut k, 3);
    let follow = active(&k).expect("a follow-up for the re-imaged node");
    assert_eq!(node_ids(&k, follow), vec!["c-3"]);
    assert_eq!(k.d(follow).version, 1);
    // The canary nodes keep the canary version.
    for n in ["c-0", "c-1"] {
        assert_eq!(
            k.target(n, "r").map(|t| (t.version, t.install)),
            Some((2, false))
        );
    }
}

#[test]
fn a_re_imaged_node_of_a_converged_consumer_gets_the_version_again() {
    let mut k = Kit::new(3);
    let first = strong(&mut k, Policy::default());
    for i in 0..3 {
        k.installed(i);
    }
    assert_eq!(k.d(first).status, Status::RolledForward);
    reimaged(&mut k, 2);
    let follow = active(&k).expect("a follow-up for the re-imaged node");
    assert_eq!(
        created(&k, follow).0,
        Some("follow-up to version 2 for 1 node: 1 re-imaged")
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

#[test]
fn a_node_a_timeout_caught_is_followed_up_only_once_its_report_changes() {
    let mut k = Kit::new(3);
    let first = strong(
        &mut k,
        Policy {
            strategy: Some(Strategy::AllAtOnce { fail_fast: false }),
            completion: Some(Completion {
                timeout_ms: Some(1_000),
                ..Completion::default()
            }),
            ..Policy::default()
        },
    );
    k.installed(0);
    k.installed(1);
    k.tick_to(k.now + 2_000);
    assert_eq!(k.d(first).status, Status::RolledForward);
    assert_eq!(k.phases(first)[2], NodePhase::TimedOut);
    // Silent, or saying the same as when it timed out: no follow-up, however often.
    for _ in 0..3 {
        k.tick_to(k.now + 2_000);
        assert_eq!(
            active(&k),
            None,
            "no follow-up while its report is unchanged"
        );
    }
    // Its report changes (here: it was re-imaged and holds nothing now): followed up.
    reimaged(&mut k, 2);
    let follow = active(&k).expect("a follow-up once its report changed");
    assert_eq!(node_ids(&k, follow), vec!["c-2"]);
    assert_eq!(
        created(&k, follow).0,
        Some("follow-up to version 2 for 1 node: 1 timed out")
    );
}

/// `c` of `n` nodes subscribes strongly with the default strategy (rolling, one install, two prefetches)
/// and a completion timeout of 1 s; the first deployment's id.
fn strong_with_timeout(k: &mut Kit) -> DeploymentId {
    strong(
        k,
        Policy {
            completion: Some(Completion {
                timeout_ms: Some(1_000),
                ..Completion::default()
            }),
            ..Policy::default()
        },
    )
}

fn index(id: &str) -> usize {
    id.trim_start_matches("c-").parse().unwrap()
}

#[test]
fn a_completion_timeout_leaves_the_nodes_it_never_admitted_to_a_follow_up() {
    // Issue 36 item 1: the nodes the timeout caught before their turn stayed on the old version for good.
    let mut k = Kit::new(4);
    let first = strong_with_timeout(&mut k);
    k.installed(0);
    // c-1 is admitted and never says anything again; c-2 and c-3 wait (prefetching) for their turn.
    k.tick_to(k.now + 2_000);
    assert_eq!(k.d(first).status, Status::RolledForward);
    assert_eq!(k.d(first).touched, vec![0, 1]);
    assert!(k.phases(first)[1..]
        .iter()
        .all(|p| *p == NodePhase::TimedOut));
    let follow = active(&k).expect("a follow-up for the nodes the timeout left behind");
    assert_eq!(node_ids(&k, follow), vec!["c-2", "c-3"]);
    assert_eq!(
        created(&k, follow),
        (
            Some("follow-up to version 2 for 2 nodes: 2 left behind"),
            &Actor::System
        )
    );
    k.installed(2);
    k.installed(3);
    assert_eq!(k.d(follow).status, Status::RolledForward);
    // c-1, admitted and silent since: no follow-up, though the last one did not take it (it is judged by
    // the deployment that did), however long it stays so.
    for _ in 0..3 {
        k.tick_to(k.now + 2_000);
        assert_eq!(active(&k), None, "a follow-up for the hung node");
    }
    // Its report changes (it came back empty): followed up once.
    reimaged(&mut k, 1);
    let again = active(&k).expect("a follow-up once its report changed");
    assert_eq!(node_ids(&k, again), vec!["c-1"]);
    assert_eq!(
        created(&k, again).0,
        Some("follow-up to version 2 for 1 node: 1 timed out")
    );
}

#[test]
fn a_larger_consumer_converges_through_follow_ups_whose_timeouts_each_take_a_few_nodes() {
    let n = 12;
    let mut k = Kit::new(n);
    let mut id = strong_with_timeout(&mut k);
    let mut deployments = 1;
    loop {
        // Each deployment gets one node done before its timeout; the node after it finishes late.
        let nodes: Vec<usize> = node_ids(&k, id).into_iter().map(index).collect();
        k.installed(nodes[0]);
        k.tick_to(k.now + 2_000);
        assert_eq!(k.d(id).status, Status::RolledForward);
        if let Some(&late) = nodes.get(1) {
            k.installed(late);
        }
        match active(&k) {
            Some(next) => {
                assert!(k.d(next).nodes.len() < nodes.len(), "no progress");
                id = next;
                deployments += 1;
            }
            None => break,
        }
        assert!(deployments <= n, "a chain of follow-ups");
    }
    for i in 0..n {
        let ns = &k.s.node_table().get(&format!("c-{i}")).unwrap();
        assert_eq!(ns.current("r"), Some(2), "c-{i} left behind");
    }
    assert_eq!(deployments, n / 2);
}

#[test]
fn follow_ups_still_start_once_retention_pruned_the_consumers_deployments() {
    // Issue 36 item 1 (traced): a pruned last deployment stopped every follow-up of the consumer.
    let mut k = Kit::new(3);
    let first = strong(&mut k, Policy::default());
    for i in 0..3 {
        k.installed(i);
    }
    assert_eq!(k.d(first).status, Status::RolledForward);
    k.ok(Command::Prune { keep: 0 });
    assert!(crate::families::retention::is_pruned(k.d(first)));
    // A node joins.
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec!["c-3".into()],
        remove: vec![],
    });
    reimaged(&mut k, 3);
    let follow = active(&k).expect("a follow-up after pruning");
    assert_eq!(node_ids(&k, follow), vec!["c-3"]);
    assert_eq!(
        created(&k, follow).0,
        Some("follow-up to version 2 for 1 node: 1 joined")
    );
    k.installed(3);
    assert_eq!(k.d(follow).status, Status::RolledForward);
    // Both pruned: a re-imaged node still gets the version back.
    k.ok(Command::Prune { keep: 0 });
    reimaged(&mut k, 0);
    let again = active(&k).expect("a follow-up for the re-imaged node after pruning");
    assert_eq!(node_ids(&k, again), vec!["c-0"]);
    assert_eq!(k.d(again).version, 2);
}
