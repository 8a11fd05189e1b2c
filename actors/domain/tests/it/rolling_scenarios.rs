//! Scenarios of 001/003: batch rollback order, canary ranges, window failure, completion, skipped nodes.

use convoy_domain::testing::*;
use convoy_domain::*;

fn node_events(h: &Kit, id: DeploymentId, action: EventKind) -> Vec<String> {
    let v = h.s.deployment(id).unwrap();
    v.events
        .iter()
        .filter(|e| e.action == Some(action))
        .filter_map(|e| e.node.clone())
        .collect()
}

#[test]
fn batch_of_three_over_nine_rolls_back_in_exact_reverse() {
    let mut h = Kit::empty();
    h.fleet("job", "svc", 9);
    h.publish_to("svc");
    let id = h.start(spec(
        "job",
        "svc",
        2,
        Strategy::Batch {
            sizes: vec![3],
            autopause: false,
        },
    ));
    assert_eq!(h.installing("job", "svc"), vec!["job-0", "job-1", "job-2"]);
    for i in 0..6 {
        h.node_installed(&format!("job-{i}"), "svc", 1, 2);
        if i == 2 {
            assert_eq!(
                h.installing("job", "svc"),
                vec!["job-3", "job-4", "job-5"],
                "next batch only after the whole batch"
            );
        }
    }
    assert_eq!(h.installing("job", "svc"), vec!["job-6", "job-7", "job-8"]);
    h.node_installed("job-6", "svc", 1, 2);
    h.node_installed("job-7", "svc", 1, 2);
    h.install_failed("job-8", "svc", 1, 2);
    assert_eq!(h.status(id), Status::RollingBack);
    // Rollback batch 1 = (8,7,6), each targeted at its from-version; job-8 still runs version 1, so it is back at once.
    assert_eq!(h.installing("job", "svc"), vec!["job-6", "job-7"]);
    assert_eq!(
        h.target("job-7", "svc"),
        Some(Target {
            version: 1,
            download: false,
            install: true,
            uninstall: false,
        })
    );
    assert_eq!(h.states(id)[8], NodePhase::RolledBack);
    for i in [8, 7, 6, 5, 4, 3, 2, 1, 0] {
        if i == 5 {
            assert_eq!(h.installing("job", "svc"), vec!["job-3", "job-4", "job-5"]);
        }
        h.report_node(
            &format!("job-{i}"),
            "svc",
            Some(1),
            &[(1, vp(true, true, None))],
        );
    }
    assert_eq!(h.status(id), Status::RolledBack);
    let order: Vec<String> = (0..9).rev().map(|i| format!("job-{i}")).collect();
    assert_eq!(
        node_events(&h, id, EventKind::Rollback),
        order,
        "rollback order is (8,7,6)(5,4,3)(2,1,0)"
    );
    assert_eq!(
        node_events(&h, id, EventKind::Install),
        order.iter().rev().cloned().collect::<Vec<_>>()
    );
}

#[test]
fn canary_range_leaves_two_versions_in_one_consumer() {
    let mut h = Kit::empty();
    h.fleet("job", "svc", 4);
    // Strong, pinned at 1: already converged, no deployment is needed.
    h.ok(Command::Subscribe {
        consumer: "job".into(),
        resource: "svc".into(),
        mode: Mode::Strong,
        pin: Some(1),
        policy: Policy::default(),
    });
    assert!(h.s.deployments(&DeploymentFilter::default()).is_empty());
    h.publish_to("svc");
    let mut s = spec("job", "svc", 2, Strategy::AllAtOnce { fail_fast: false });
    s.nodes = Some("0-1".into());
    let id = h.start(s);
    assert_eq!(
        h.s.deployment(id)
            .unwrap()
            .nodes
            .iter()
            .map(|n| n.ordinal)
            .collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert_eq!(h.installing("job", "svc"), vec!["job-0", "job-1"]);
    h.node_installed("job-0", "svc", 1, 2);
    h.node_installed("job-1", "svc", 1, 2);
    assert_eq!(h.status(id), Status::RolledForward);
    let versions: Vec<u64> = (0..4)
        .map(|i| h.target(&format!("job-{i}"), "svc").unwrap().version)
        .collect();
    assert_eq!(versions, vec![2, 2, 1, 1], "two versions in one consumer");
    assert_eq!(
        h.s.deployments(&DeploymentFilter::default()).len(),
        1,
        "the canary does not trigger a convergence deployment"
    );
    let mut s2 = spec("job", "svc", 2, Strategy::AllAtOnce { fail_fast: false });
    s2.nodes = Some("2-4".into());
    let e = h.err(Command::StartDeployment(s2));
    assert!(matches!(e, DomainError::OrdinalOutOfRange { .. }), "{e}");
}

#[test]
fn canary_targets_two_versions_without_auto_deploy() {
    let mut h = Kit::empty();
    h.fleet("job", "svc", 4);
    h.publish_to("svc");
    let mut s = spec("job", "svc", 2, Strategy::AllAtOnce { fail_fast: false });
    s.nodes = Some("0-1".into());
    let id = h.start(s);
    h.node_installed("job-0", "svc", 1, 2);
    h.node_installed("job-1", "svc", 1, 2);
    assert_eq!(h.status(id), Status::RolledForward);
    let views: Vec<Option<u64>> = (0..4)
        .map(|i| h.s.node(&format!("job-{i}")).unwrap().resources["svc"].current)
        .collect();
    assert_eq!(views, vec![Some(2), Some(2), Some(1), Some(1)]);
}

#[test]
fn rolling_fails_when_window_fills_with_failures_while_one_failure_keeps_moving() {
    let mut h = Kit::empty();
    h.fleet("a", "svc", 6);
    h.fleet("b", "svc", 6);
    h.publish_to("svc");
    let rolling = Strategy::Rolling {
        install_window: 2,
        download_window: 2,
    };
    // Failures tolerated (the default tolerates none): the window rule is what fails `a`.
    let mut sa = spec("a", "svc", 2, rolling.clone());
    sa.rollback_on_failure = Some(false);
    sa.max_failed_nodes = Some(FailedNodes::Count(5));
    let a = h.start(sa);
    let mut sb = spec("b", "svc", 2, rolling);
    sb.max_failed_nodes = Some(FailedNodes::Count(1));
    let b = h.start(sb);
    // b: one failure keeps its slot, the other slot keeps moving.
    h.install_failed("b-0", "svc", 1, 2);
    assert_eq!(h.installing("b", "svc"), vec!["b-1"]);
    assert_eq!(
        h.target("b-2", "svc"),
        Some(Target {
            version: 2,
            download: true,
            install: false,
            uninstall: false,
        }),
        "prefetch window"
    );
    for i in 1..6 {
        h.node_installed(&format!("b-{i}"), "svc", 1, 2);
        assert_eq!(
            h.status(b),
            if i < 5 {
                Status::RollingForward
            } else {
                Status::RolledForward
            }
        );
    }
    assert_eq!(h.s.deployment(b).unwrap().nodes[0].state, NodePhase::Failed);
    // a: both window slots fail → FAILED (rollback_on_failure = false).
    h.install_failed("a-0", "svc", 1, 2);
    assert_eq!(h.status(a), Status::RollingForward);
    h.install_failed("a-1", "svc", 1, 2);
    assert_eq!(h.status(a), Status::Failed);
    assert!(h
        .s
        .deployment(a)
        .unwrap()
        .events
        .last()
        .unwrap()
        .message
        .as_ref()
        .unwrap()
        .contains("install window of 2"));
}

#[test]
fn quorum_completion_with_a_straggler() {
    let mut h = Kit::empty();
    h.fleet("c", "svc", 4);
    h.publish_to("svc");
    let mut s = spec("c", "svc", 2, Strategy::AllAtOnce { fail_fast: false });
    s.completion = Some(Completion {
        quorum: Some(0.75),
        timeout_ms: None,
        ..Default::default()
    });
    let id = h.start(s);
    h.node_installed("c-0", "svc", 1, 2);
    h.node_installed("c-1", "svc", 1, 2);
    assert_eq!(h.status(id), Status::RollingForward);
    h.node_installed("c-3", "svc", 1, 2);
    assert_eq!(
        h.status(id),
        Status::RolledForward,
        "3 of 4 meets a 0.75 quorum; c-2 straggles"
    );
    assert_eq!(
        h.s.deployment(id).unwrap().nodes[2].state,
        NodePhase::Installing
    );
}

#[test]
fn timeout_completion_succeeds_with_quorum_and_fails_without() {
    let mut h = Kit::empty();
    h.fleet("c", "svc", 4);
    h.fleet("d", "svc", 4);
    h.publish_to("svc");
    let mut s = spec("c", "svc", 2, Strategy::AllAtOnce { fail_fast: false });
    s.completion = Some(Completion {
        quorum: Some(2.0),
        timeout_ms: Some(60_000),
        ..Default::default()
    });
    s.rollback_on_failure = Some(false);
    let mut t = spec("d", "svc", 2, Strategy::AllAtOnce { fail_fast: false });
    t.completion = Some(Completion {
        quorum: None,
        timeout_ms: Some(60_000),
        on_timeout: OnTimeout::Fail,
    });
    t.rollback_on_failure = Some(false);
    let (c, d) = (h.start(s.clone()), h.start(t));
    h.node_installed("c-0", "svc", 1, 2);
    h.node_installed("d-0", "svc", 1, 2);
    assert_eq!(h.s.next_deadline(), Some(1_000 + 60_000));
    h.tick_to(60_999);
    assert_eq!(
        (h.status(c), h.status(d)),
        (Status::RollingForward, Status::RollingForward)
    );
    h.tick_to(61_000);
    assert_eq!(h.status(c), Status::Failed, "1 of a quorum of 2");
    assert_eq!(
        h.status(d),
        Status::Failed,
        "on_timeout fail: the default quorum is all nodes"
    );
    let c2 = h.start(s);
    h.node_installed("c-1", "svc", 1, 2);
    h.tick_to(h.now + 60_000);
    assert_eq!(
        h.status(c2),
        Status::RolledForward,
        "c-0 was already at version 2, c-1 installed it: quorum of 2 met"
    );
}

#[test]
fn a_completion_timeout_without_quorum_rolls_back_when_rollback_on_failure() {
    let mut h = Kit::empty();
    h.fleet("c", "svc", 2);
    h.publish_to("svc");
    let mut s = spec("c", "svc", 2, Strategy::AllAtOnce { fail_fast: false });
    s.completion = Some(Completion {
        quorum: None,
        timeout_ms: Some(60_000),
        on_timeout: OnTimeout::Fail,
    });
    let id = h.start(s);
    h.node_installed("c-0", "svc", 1, 2);
    h.tick_to(61_000);
    assert_eq!(h.status(id), Status::RollingBack, "timed out: rolls back");
    let view = h.s.deployment(id).unwrap();
    let last = view
        .events
        .iter()
        .rev()
        .find(|e| e.status.is_some())
        .unwrap();
    assert_eq!(last.by, Actor::Timer);
    assert_eq!(
        last.message.as_deref(),
        Some("completion timeout: 1 of 2 nodes succeeded, 1 timed out; 2 needed")
    );
    h.node_installed("c-0", "svc", 2, 1);
    h.node_installed("c-1", "svc", 2, 1);
    assert_eq!(h.status(id), Status::RolledBack);
}

#[test]
fn node_losing_interest_mid_deployment_is_skipped() {
    let mut h = Kit::empty();
    h.fleet("c", "svc", 3);
    h.publish_to("svc");
    let id = h.start(spec(
        "c",
        "svc",
        2,
        Strategy::Rolling {
            install_window: 1,
            download_window: 1,
        },
    ));
    assert_eq!(h.installing("c", "svc"), vec!["c-0"]);
    let rr = ResourceReport {
        interested: Some(false),
        current: Some(1),
        versions: Default::default(),
        removed: false,
        log: None,
    };
    let report = NodeReport {
        node: "c-0".into(),
        active: None,
        resources: [("svc".to_string(), rr)].into(),
        ..Default::default()
    };
    h.ok(Command::ReportNodes(vec![report]));
    assert_eq!(h.states(id)[0], NodePhase::Skipped);
    assert_eq!(
        h.installing("c", "svc"),
        vec!["c-1"],
        "the skipped node left the window"
    );
    h.ok(Command::MarkInactive {
        nodes: vec!["c-2".into()],
    });
    assert_eq!(h.states(id)[2], NodePhase::Skipped);
    h.node_installed("c-1", "svc", 1, 2);
    assert_eq!(
        h.status(id),
        Status::RolledForward,
        "skipped nodes count as neither success nor failure"
    );
}

#[test]
fn retries_and_min_healthy_watch() {
    let mut h = Kit::empty();
    h.fleet("c", "svc", 1);
    h.publish_to("svc");
    let mut s = spec("c", "svc", 2, Strategy::AllAtOnce { fail_fast: false });
    s.max_failures_per_node = Some(1);
    s.min_healthy_ms = Some(5_000);
    let id = h.start(s);
    h.install_failed("c-0", "svc", 1, 2);
    assert_eq!(h.states(id), vec![NodePhase::Installing], "one retry left");
    h.install_failed("c-0", "svc", 1, 2);
    assert_eq!(
        h.s.deployment(id).unwrap().nodes[0].failures,
        1,
        "the same failure is counted once"
    );
    h.report_node("c-0", "svc", Some(1), &[(2, vp(true, false, None))]);
    h.node_installed("c-0", "svc", 1, 2);
    assert_eq!(h.states(id), vec![NodePhase::Watching]);
    assert_eq!(h.s.deployment_deadline(id), Some(h.now + 5_000));
    h.tick_to(h.now + 4_999);
    assert_eq!(h.status(id), Status::RollingForward);
    h.tick_to(h.now + 1);
    assert_eq!(h.status(id), Status::RolledForward);
}

#[test]
fn strong_subscription_auto_deploys_and_later_versions_wait() {
    let mut h = Kit::empty();
    h.fleet("c", "svc", 2);
    h.subscribe(
        "c",
        "svc",
        Mode::Strong,
        Some(Strategy::AllAtOnce { fail_fast: false }),
    );
    assert!(
        h.s.deployments(&DeploymentFilter::default()).is_empty(),
        "already at the selected version 1"
    );
    let v2 = h.publish_to("svc");
    let list = h.s.deployments(&DeploymentFilter {
        status: Some(StatusFilter::Active),
        ..Default::default()
    });
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].version, v2);
    let first = list[0].id;
    let v3 = h.publish_to("svc");
    assert_eq!(
        h.s.deployments(&DeploymentFilter {
            status: Some(StatusFilter::Active),
            ..Default::default()
        })
        .len(),
        1,
        "v3 waits"
    );
    assert_eq!(h.target("c-0", "svc").unwrap().version, v2);
    h.node_installed("c-0", "svc", 1, 2);
    h.node_installed("c-1", "svc", 1, 2);
    assert_eq!(h.status(first), Status::RolledForward);
    let active = h.s.deployments(&DeploymentFilter {
        status: Some(StatusFilter::Active),
        ..Default::default()
    });
    assert_eq!(active.len(), 1);
    assert_eq!(
        active[0].version, v3,
        "the next deployment takes the then-selected version"
    );
}
