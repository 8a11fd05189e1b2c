use crate::testing::*;
use crate::*;

#[test]
fn rolling_windows_fill_in_the_fixed_order() {
    let mut k = Kit::new(6);
    let id = k.start_with(rolling(2, 3));
    // Nodes 0 and 1 install without the version: they take two of the three download slots.
    assert_eq!(k.flags(6), (vec![0, 1], vec![2]));
    k.installed(1);
    assert_eq!(
        k.flags(6),
        (vec![0, 2], vec![3]),
        "a success frees a slot for the next node in order"
    );
    assert_eq!(k.d(id).touched, vec![0, 1, 2]);
}

#[test]
fn failed_node_keeps_its_slot() {
    let mut k = Kit::new(4);
    let id = k.start_with(|s| {
        rolling(2, 2)(s);
        s.max_failed_nodes = Some(FailedNodes::Count(1));
    });
    k.failed(0);
    assert_eq!(k.phases(id)[0], NodePhase::Failed);
    assert_eq!(
        k.flags(4).0,
        vec![1],
        "failed node holds its slot but may not install"
    );
    assert_eq!(k.d(id).forward.install_used, 2);
    k.installed(1);
    assert_eq!(k.flags(4).0, vec![2]);
}

#[test]
fn window_full_of_failures_rolls_back_by_default() {
    let mut k = Kit::new(4);
    // Tolerating 3 failures: the window rule, not the tolerance, fails it.
    let id = k.start_with(|s| {
        rolling(2, 2)(s);
        s.max_failed_nodes = Some(FailedNodes::Count(3));
    });
    k.failed(0);
    k.failed(1);
    assert_eq!(
        k.d(id).status,
        Status::RolledBack,
        "both nodes still run version 1"
    );
}

#[test]
fn all_at_once_with_fail_fast_fails_on_first_failure_and_tolerates_max_failed_nodes() {
    let mut k = Kit::new(3);
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::AllAtOnce { fail_fast: true });
        s.rollback_on_failure = Some(false);
    });
    assert_eq!(k.flags(3).0, vec![0, 1, 2]);
    k.failed(0);
    assert_eq!(k.d(id).status, Status::Failed);
    let mut k = Kit::new(3);
    let id = k.start_with(|s| s.max_failed_nodes = Some(FailedNodes::Count(1)));
    k.failed(0);
    k.installed(1);
    k.installed(2);
    assert_eq!(
        k.d(id).status,
        Status::RolledForward,
        "finished with up to max_failed_nodes failures"
    );
}

#[test]
fn a_percentage_of_failed_nodes_is_taken_of_the_node_set() {
    // 50% of 4 nodes: two failures are tolerated, the third fails the deployment.
    let mut k = Kit::new(4);
    let id = k.start_with(|s| {
        s.max_failed_nodes = Some(FailedNodes::Percent(50));
        s.rollback_on_failure = Some(false);
    });
    k.failed(0);
    k.failed(1);
    assert_eq!(k.d(id).status, Status::RollingForward);
    k.failed(2);
    assert_eq!(
        k.d(id).status,
        Status::RollingForward,
        "all at once judges when every node is done"
    );
    k.installed(3);
    assert_eq!(k.d(id).status, Status::Failed);
    let last = k.s.deployment(id).unwrap().events.pop().unwrap();
    assert_eq!(
        last.message.as_deref(),
        Some(
            "3 nodes failed; 2 tolerated; failed: c-0 (attempt 1 failed: exit 3), \
             c-1 (attempt 1 failed: exit 3), c-2 (attempt 1 failed: exit 3)"
        )
    );
}

#[test]
fn retries_count_distinct_failures() {
    let mut k = Kit::new(1);
    let id = k.start_with(|s| {
        s.max_failures_per_node = Some(2);
        s.rollback_on_failure = Some(false);
    });
    k.failed(0);
    k.failed(0);
    assert_eq!(k.d(id).nodes[0].failures, 1);
    k.report(0, Some(1), &[(2, vp(true, false, None))]);
    k.failed(0);
    assert_eq!(
        (k.d(id).nodes[0].failures, k.phases(id)[0]),
        (2, NodePhase::Installing)
    );
    k.report(0, Some(1), &[(2, vp(true, false, None))]);
    k.failed(0);
    assert_eq!(
        (k.phases(id)[0], k.d(id).status),
        (NodePhase::Failed, Status::Failed)
    );
}

#[test]
fn unhealthy_during_watch_is_a_failure() {
    let mut k = Kit::new(1);
    let id = k.start_with(|s| {
        s.min_healthy_ms = Some(1_000);
        s.rollback_on_failure = Some(false);
    });
    k.installed(0);
    assert_eq!(k.phases(id), vec![NodePhase::Watching]);
    let mut sick = vp(true, true, None);
    sick.healthy = Some(false);
    k.report(0, Some(2), &[(2, sick)]);
    assert_eq!(k.d(id).status, Status::Failed);
}

#[test]
fn nodes_already_at_the_version_succeed_at_once_without_a_slot() {
    let mut k = Kit::new(3);
    k.installed(0);
    let id = k.start_with(rolling(1, 1));
    assert_eq!(k.phases(id)[0], NodePhase::Succeeded);
    assert_eq!(k.flags(3).0, vec![1]);
    assert!(
        !k.d(id).touched.contains(&0),
        "untouched: never rolled back"
    );
}

#[test]
fn batches_use_sizes_with_the_last_repeating() {
    let mut k = Kit::new(5);
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::Batch {
            sizes: vec![1, 2],
            autopause: false,
        })
    });
    assert_eq!(k.flags(5).0, vec![0]);
    k.installed(0);
    assert_eq!(k.flags(5).0, vec![1, 2]);
    k.installed(1);
    assert_eq!(
        k.flags(5).0,
        vec![2],
        "next batch waits for the whole batch"
    );
    k.failed(2);
    assert_eq!(
        k.d(id).status,
        Status::RollingBack,
        "default max_failed_nodes for batch is 0"
    );
}

#[test]
fn autopause_after_each_batch() {
    let mut k = Kit::new(3);
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::Batch {
            sizes: vec![2],
            autopause: true,
        })
    });
    k.installed(0);
    k.installed(1);
    assert_eq!(
        (k.d(id).status, k.d(id).paused_by()),
        (Status::RollForwardPaused, Some(PausedBy::Auto))
    );
    assert!(k.flags(3).0.is_empty());
    k.op(resume, id).unwrap();
    assert_eq!(k.flags(3).0, vec![2]);
    k.installed(2);
    assert_eq!(
        k.d(id).status,
        Status::RolledForward,
        "no pause after the last batch"
    );
}

#[test]
fn skipped_node_leaves_the_window() {
    let mut k = Kit::new(3);
    let id = k.start_with(rolling(1, 1));
    k.ok(Command::MarkInactive {
        nodes: vec!["c-0".into()],
    });
    assert_eq!(k.phases(id)[0], NodePhase::Skipped);
    assert_eq!(k.flags(3).0, vec![1]);
    assert_eq!(k.d(id).tally.skipped, 1);
}

#[test]
fn removing_a_node_from_the_consumer_skips_it() {
    let mut k = Kit::new(2);
    let id = k.start_with(|_| {});
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec![],
        remove: vec!["c-1".into()],
    });
    assert_eq!(k.phases(id)[1], NodePhase::Skipped);
    k.installed(0);
    assert_eq!(k.d(id).status, Status::RolledForward);
}

/// Node `p`'s events in deployment `id`, in order: what happened and who it names.
fn node_events(k: &Kit, id: DeploymentId, p: u32) -> Vec<(EventKind, String)> {
    k.d(id)
        .events
        .iter()
        .filter(|e| e.node == Some(p))
        .map(|e| (e.kind, e.by.name().to_string()))
        .collect()
}

/// Who the deployment's status events name, in order.
fn status_events(k: &Kit, id: DeploymentId) -> Vec<String> {
    k.d(id)
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Status)
        .map(|e| e.by.name().to_string())
        .collect()
}

fn named(events: &[(EventKind, &str)]) -> Vec<(EventKind, String)> {
    events.iter().map(|(k, n)| (*k, n.to_string())).collect()
}

#[test]
fn the_node_events_a_report_causes_name_the_token_that_sent_it() {
    let mut k = Kit::new(3);
    let id = k.start_with(rolling(1, 1));
    k.installed_by(0, Actor::Token("web-agent".into()));
    k.installed_by(1, Actor::Token("ops".into()));
    k.installed(2);
    assert_eq!(k.d(id).status, Status::RolledForward);
    use EventKind::{Install, Succeeded};
    assert_eq!(
        node_events(&k, id, 0),
        named(&[(Install, "system"), (Succeeded, "web-agent")]),
        "the start admits it; its own report finishes it"
    );
    assert_eq!(
        node_events(&k, id, 1),
        named(&[(Install, "web-agent"), (Succeeded, "ops")]),
        "node 0's report made room for it"
    );
    assert_eq!(
        node_events(&k, id, 2),
        named(&[(Install, "ops"), (Succeeded, "user")]),
        "a report without auth is the user's"
    );
    assert_eq!(
        status_events(&k, id),
        vec!["user", "system"],
        "the start is the person's; the deployment's judgement (rolled forward) stays convoy's"
    );
}

#[test]
fn a_failure_and_a_skip_a_report_causes_name_its_sender() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| s.max_failed_nodes = Some(FailedNodes::Count(1)));
    k.failed_by(0, Actor::Token("web-agent".into()));
    use EventKind::{Failed, Install, Skipped};
    assert_eq!(
        node_events(&k, id, 0),
        named(&[(Install, "system"), (Failed, "web-agent")])
    );
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "c-1".into(),
        active: Some(false),
        by: Actor::Token("web-agent".into()),
        ..Default::default()
    }]));
    assert_eq!(
        node_events(&k, id, 1),
        named(&[(Install, "system"), (Skipped, "web-agent")])
    );
}

#[test]
fn what_convoy_decides_on_its_own_stays_system_after_reports_by_a_token() {
    use EventKind::{Download, Install, Rollback, RolledBack, Skipped, Succeeded, Watch};
    let agent = || Actor::Token("web-agent".into());
    // A completion timeout fails the deployment: its rollback is the timer's doing, not a report's.
    let mut k = Kit::new(3);
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.completion = Some(Completion {
            timeout_ms: Some(1_000),
            on_timeout: OnTimeout::Fail,
            ..Completion::default()
        });
    });
    k.installed_by(0, agent());
    k.tick_to(k.now + 2_000);
    assert_eq!(k.d(id).status, Status::RollingBack);
    assert_eq!(
        node_events(&k, id, 0),
        named(&[
            (Install, "system"),
            (Succeeded, "web-agent"),
            (Rollback, "system")
        ])
    );
    assert_eq!(
        node_events(&k, id, 1),
        named(&[
            (Install, "web-agent"),
            (Rollback, "system"),
            (RolledBack, "system")
        ]),
        "still on version 1, it is back at once"
    );
    // A watch that ends, and a node that stopped reporting.
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.min_healthy_ms = Some(1_000);
    });
    k.installed_by(0, agent());
    k.tick_to(k.now + 2_000);
    k.ok(Command::MarkInactive {
        nodes: vec!["c-1".into()],
    });
    assert_eq!(
        node_events(&k, id, 0),
        named(&[
            (Install, "system"),
            (Watch, "web-agent"),
            (Succeeded, "system")
        ])
    );
    assert_eq!(
        node_events(&k, id, 1),
        named(&[
            (Download, "web-agent"),
            (Install, "system"),
            (Skipped, "system")
        ]),
        "node 0's healthy report freed the download slot; the watch's end, the install slot"
    );
}
