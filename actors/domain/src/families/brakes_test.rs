use crate::testing::*;
use crate::*;

fn subscribe(k: &mut Kit, mode: Mode, brake: Option<Brake>) {
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode,
        pin: None,
        policy: Policy {
            brake,
            ..Policy::default()
        },
    });
}

fn brake(max_failed: FailedNodes, window_ms: u64) -> Option<Brake> {
    Some(Brake {
        enabled: true,
        max_failed,
        window_ms,
        min_failed: 1,
    })
}

fn targets(k: &Kit, n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| k.s.targets(&format!("c-{i}"))["r"].version)
        .collect()
}

#[test]
fn a_weak_version_failed_by_too_many_nodes_is_held_back_by_the_brake() {
    let mut k = Kit::new(10);
    subscribe(&mut k, Mode::Weak, None);
    assert_eq!(targets(&k, 10), vec![2; 10]);
    k.failed(0);
    k.failed(1);
    assert!(
        k.s.consumer("c").unwrap().holds.is_empty(),
        "2 of 10 is 20%"
    );
    k.now += 1_000;
    k.failed(2);
    let view = k.s.consumer("c").unwrap();
    assert_eq!(view.holds.len(), 1);
    let h = &view.holds[0];
    assert_eq!(
        (h.resource.as_str(), h.version, h.by.as_str()),
        ("r", 2, "brake")
    );
    assert_eq!(h.deployment, None);
    assert_eq!(h.at, k.now);
    let why =
        "version 2 of r held back on c by its brake: 3 of 10 nodes failed it within 10m, over 20%";
    assert_eq!(h.reason, why);
    // Every node that failed (all of them: they never ran it) goes back to the version before.
    assert_eq!(targets(&k, 10), vec![1; 10]);
    assert_eq!(k.s.selected_version("c", "r"), Some(1));
    let e = view.events.last().expect("an event on the consumer");
    // The event names the failed nodes.
    assert_eq!(
        (e.kind, e.message.as_str()),
        (
            ConsumerEventKind::Held,
            format!("{why}; failed: c-0, c-1, c-2").as_str()
        )
    );
    assert_eq!(e.by, Actor::System);
}

#[test]
fn the_hold_is_put_in_the_apply_of_the_failing_report_and_told_to_the_log() {
    let mut k = Kit::new(5);
    subscribe(&mut k, Mode::Weak, brake(FailedNodes::Count(1), 60_000));
    k.failed(0);
    let report = |i: usize| {
        Command::ReportNodes(vec![NodeReport {
            node: format!("c-{i}"),
            resources: [(
                "r".to_string(),
                ResourceReport {
                    current: Some(1),
                    versions: [(1, vp(true, true, None)), (2, vp(true, true, Some("boom")))].into(),
                    ..ResourceReport::default()
                },
            )]
            .into(),
            ..NodeReport::default()
        }])
    };
    let (_, outcome) = k.s.apply_with_outcome(report(1), k.now).unwrap();
    let notices: Vec<&str> = outcome.notices().collect();
    assert_eq!(
        notices,
        ["version 2 of r held back on c by its brake: 2 of 5 nodes failed it within 1m, over 1; \
          failed: c-0, c-1"]
    );
    // A third failure, in the next apply, puts nothing more.
    let (_, outcome) = k.s.apply_with_outcome(report(2), k.now).unwrap();
    assert_eq!(outcome.notices().count(), 0);
    assert_eq!(k.s.consumer("c").unwrap().holds.len(), 1);
}

#[test]
fn a_node_counts_once_however_often_it_reports_its_failure() {
    let mut k = Kit::new(10);
    subscribe(&mut k, Mode::Weak, None);
    for _ in 0..5 {
        k.failed(0);
        k.now += 1_000;
    }
    // It drops its failed attempt and fails again: still one node.
    k.report(0, Some(1), &[(1, vp(true, true, None))]);
    k.failed(0);
    k.failed(1);
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
}

#[test]
fn failures_further_apart_than_the_window_do_not_add_up() {
    let mut k = Kit::new(10);
    subscribe(&mut k, Mode::Weak, brake(FailedNodes::Count(1), 60_000));
    k.failed(0);
    k.now += 60_000;
    k.failed(1);
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
    k.now += 59_999;
    k.failed(2);
    assert_eq!(k.s.consumer("c").unwrap().holds[0].by, "brake");
}

#[test]
fn a_brake_turned_off_lets_every_node_fail() {
    let mut k = Kit::new(4);
    let off = Brake {
        enabled: false,
        ..Brake::default()
    };
    subscribe(&mut k, Mode::Weak, Some(off));
    for i in 0..4 {
        k.failed(i);
    }
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
    assert_eq!(targets(&k, 4), vec![2; 4]);
}

#[test]
fn only_weak_subscriptions_brake_and_not_inside_a_deployment() {
    let mut k = Kit::new(4);
    subscribe(&mut k, Mode::Strong, None);
    // A strong subscription deploys; its failures are the deployment's (which rolls back and holds).
    let id =
        k.s.active_deployments()
            .first()
            .copied()
            .expect("an automatic deployment");
    k.failed(0);
    let view = k.s.consumer("c").unwrap();
    assert!(view.holds.iter().all(|h| h.by == "rollback"));
    assert!(view.events.is_empty());
    assert_ne!(k.d(id).status, Status::RollingForward);

    // A weak subscription, but the failing nodes are inside a deployment by hand.
    let mut k = Kit::new(4);
    subscribe(&mut k, Mode::Weak, None);
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::AllAtOnce { fail_fast: false });
        s.max_failed_nodes = Some(FailedNodes::Count(4));
    });
    k.failed(0);
    k.failed(1);
    assert!(
        k.s.consumer("c").unwrap().holds.is_empty(),
        "{:?}",
        k.d(id).status
    );
}

#[test]
fn a_count_of_nodes_is_a_count() {
    let mut k = Kit::new(100);
    subscribe(&mut k, Mode::Weak, brake(FailedNodes::Count(5), 600_000));
    for i in 0..5 {
        k.failed(i);
    }
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
    k.failed(5);
    assert_eq!(
        k.s.consumer("c").unwrap().holds[0].reason,
        "version 2 of r held back on c by its brake: 6 of 100 nodes failed it within 10m, over 5"
    );
}

#[test]
fn lifting_the_hold_selects_the_version_again_without_flapping() {
    let mut k = Kit::new(4);
    subscribe(&mut k, Mode::Weak, brake(FailedNodes::Percent(20), 600_000));
    k.failed(0);
    assert_eq!(
        targets(&k, 4),
        vec![1; 4],
        "1 of 4 is over 20% (at least 1)"
    );
    k.now += 1_000;
    k.ok(Command::ClearHold {
        consumer: "c".into(),
        resource: "r".into(),
        version: 2,
        by: Actor::Token("ops".into()),
    });
    let view = k.s.consumer("c").unwrap();
    assert!(view.holds.is_empty());
    let e = view.events.last().unwrap();
    assert_eq!(e.kind, ConsumerEventKind::Released);
    assert_eq!(e.by, Actor::Token("ops".into()));
    assert_eq!(
        e.message,
        "version 2 of r no longer held back on c: cleared by ops"
    );
    assert_eq!(targets(&k, 4), vec![2; 4]);
    // The failed node keeps reporting its old failure: that is no new failure, nothing is held again.
    k.failed(0);
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
    // A new failure counts again.
    k.failed(1);
    assert_eq!(k.s.consumer("c").unwrap().holds.len(), 1);
}

#[test]
fn a_brake_out_of_bounds_is_refused_naming_the_field() {
    let mut k = Kit::new(2);
    let e = k.err(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: None,
        policy: Policy {
            brake: brake(FailedNodes::Percent(0), 60_000),
            ..Policy::default()
        },
    });
    assert!(e.to_string().contains("brake.max_failed = 0%"), "{e}");
    let e = k.err(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: None,
        policy: Policy {
            brake: brake(FailedNodes::Count(2), 8 * 86_400_000),
            ..Policy::default()
        },
    });
    assert!(e.to_string().contains("brake.window_ms = 691200000"), "{e}");
}

#[test]
fn a_consumer_keeps_its_last_events_only() {
    let mut c = Consumer::default();
    for t in 0..40 {
        c.push_event(t, ConsumerEventKind::Held, Actor::System, format!("e{t}"));
    }
    assert_eq!(c.events.len(), MAX_CONSUMER_EVENTS);
    assert_eq!(c.events[0].message, "e8");
    assert_eq!(c.events.last().unwrap().message, "e39");
}

/// Node `c-i` runs version `v` of `r` done and healthy.
fn runs(k: &mut Kit, i: usize, v: u64) {
    k.report(
        i,
        Some(v),
        &[(1, vp(true, true, None)), (v, vp(true, true, None))],
    );
}

/// Node `c-i` runs version `v` of `r`, installed, but its health check fails.
fn unhealthy(k: &mut Kit, i: usize, v: u64) {
    let mut sick = vp(true, true, None);
    sick.healthy = Some(false);
    k.report(i, Some(v), &[(1, vp(true, true, None)), (v, sick)]);
}

#[test]
fn the_brake_freezes_its_version_and_never_downgrades_a_healthy_node() {
    let mut k = Kit::new(10);
    subscribe(&mut k, Mode::Weak, None);
    // Four nodes run version 2 healthy, three fail it, three have not moved yet.
    for i in 0..4 {
        runs(&mut k, i, 2);
    }
    for i in 4..7 {
        k.failed(i);
    }
    assert_eq!(k.s.consumer("c").unwrap().holds[0].by, "brake");
    // The healthy stay on 2; the failed and the ones that never ran it get 1.
    assert_eq!(targets(&k, 10), [2, 2, 2, 2, 1, 1, 1, 1, 1, 1]);
    for i in 0..4 {
        let t = &k.s.targets(&format!("c-{i}"))["r"];
        assert!(!t.install && !t.download, "{t:?}");
    }
    // A node that fails it later is no longer healthy on it: it goes back too.
    unhealthy(&mut k, 0, 2);
    assert_eq!(targets(&k, 10)[0], 1);
    // A version published after the hold is taken by every node, the frozen ones too.
    k.publish(vec![]);
    assert_eq!(targets(&k, 10), vec![3; 10]);
}

#[test]
fn a_share_needs_at_least_three_nodes_by_default() {
    let mut k = Kit::new(4);
    subscribe(&mut k, Mode::Weak, None);
    k.failed(0);
    k.failed(1);
    assert!(
        k.s.consumer("c").unwrap().holds.is_empty(),
        "1 and 2 of 4 are over 20%, but under 3 nodes"
    );
    k.failed(2);
    assert_eq!(
        k.s.consumer("c").unwrap().holds[0].reason,
        "version 2 of r held back on c by its brake: 3 of 4 nodes failed it within 10m, over 20%"
    );
}

#[test]
fn the_brake_never_walks_back_to_the_version_before_the_one_it_held() {
    let mut k = Kit::new(10);
    subscribe(&mut k, Mode::Weak, None);
    k.publish(vec![]);
    // A shared dependency is down: version 3 fails on three nodes, and is held.
    for i in 0..3 {
        k.report(
            i,
            Some(2),
            &[
                (2, vp(true, true, None)),
                (3, vp(true, true, Some("exit 1"))),
            ],
        );
    }
    assert!(k.s.consumer_map()["c"].held("r", 3));
    assert_eq!(k.s.selected_version("c", "r"), Some(2));
    // The outage goes on: version 2 (the one now selected) fails on three other nodes, within the window
    // and after they installed it. Nothing more is held: a brake never holds the version before its own.
    for i in 3..6 {
        k.report(i, Some(2), &[(2, vp(true, true, None))]);
    }
    k.now += 1_000;
    for i in 3..6 {
        k.report(i, Some(2), &[(2, vp(true, true, Some("exit 1")))]);
    }
    let view = k.s.consumer("c").unwrap();
    assert_eq!(view.holds.len(), 1, "{:?}", view.holds);
    assert_eq!(k.s.selected_version("c", "r"), Some(2));
}

#[test]
fn a_health_restart_of_a_version_that_succeeded_before_the_window_is_not_a_rollout_failure() {
    let mut k = Kit::new(3);
    subscribe(&mut k, Mode::Weak, brake(FailedNodes::Count(1), 60_000));
    for i in 0..3 {
        runs(&mut k, i, 2);
    }
    // Long after they succeeded, two nodes restart unhealthy: not a rollout failure.
    k.now += 60_000;
    unhealthy(&mut k, 0, 2);
    unhealthy(&mut k, 1, 2);
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
    assert_eq!(targets(&k, 3), vec![2; 3]);
    // A node that fails within the window of its success is a rollout failure: it counts.
    let mut k = Kit::new(3);
    subscribe(&mut k, Mode::Weak, brake(FailedNodes::Count(1), 60_000));
    for i in 0..3 {
        runs(&mut k, i, 2);
    }
    k.now += 59_999;
    unhealthy(&mut k, 0, 2);
    unhealthy(&mut k, 1, 2);
    assert_eq!(k.s.consumer("c").unwrap().holds.len(), 1);
}

#[test]
fn the_failure_that_ends_a_deployment_is_the_deployments_not_the_brakes() {
    let mut k = Kit::new(4);
    subscribe(&mut k, Mode::Weak, brake(FailedNodes::Percent(20), 600_000));
    // A deployment by hand that tolerates one failed node: three succeed, then the fourth fails and
    // ends it (rolled forward with one failure). Its failure is judged by the deployment alone.
    let id = k.start_with(|s| s.max_failed_nodes = Some(FailedNodes::Count(1)));
    for i in 0..3 {
        runs(&mut k, i, 2);
    }
    k.failed(3);
    assert_eq!(k.status(id), Status::RolledForward);
    assert!(
        k.s.consumer("c").unwrap().holds.is_empty(),
        "the brake counted the failure that ended {id}"
    );
    assert_eq!(targets(&k, 4)[..3], [2, 2, 2]);
}
