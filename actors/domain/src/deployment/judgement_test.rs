//! How a deployment judges itself (issue 22, items 1, 2, 3 and 5): failures, all-at-once, timeouts, downloads.

use crate::testing::*;
use crate::*;

/// Nodes told (download or install) to fetch version 2 that do not hold it: at most the download window.
fn fetching(k: &Kit, id: DeploymentId, n: usize) -> usize {
    let (install, download) = k.flags(n);
    let told: std::collections::BTreeSet<usize> = install.into_iter().chain(download).collect();
    told.into_iter()
        .filter(|&i| {
            !k.d(id).nodes[i]
                .seen
                .has(crate::deployment::seen::Fact::Have)
        })
        .count()
}

#[test]
fn two_nodes_in_a_window_of_three_that_both_fail_are_not_rolled_forward() {
    let mut k = Kit::new(2);
    let id = k.start_with(rolling(3, 1));
    k.failed(0);
    k.failed(1);
    assert_eq!(k.d(id).status, Status::RolledBack);
}

#[test]
fn a_rolling_failure_is_a_failure_unless_tolerated() {
    // 20 nodes, install window 5, one failing: the default tolerates none.
    let mut k = Kit::new(20);
    let id = k.start_with(rolling(5, 5));
    k.failed(3);
    assert_eq!(k.d(id).status, Status::RolledBack);
    assert!(k.d(id).events.iter().any(|e| e.message.as_deref()
        == Some("1 node failed; 0 tolerated; failed: c-3 (attempt 1 failed: exit 3)")));
}

#[test]
fn a_tolerated_rolling_failure_finishes_rolled_forward() {
    let mut k = Kit::new(4);
    let id = k.start_with(|s| {
        rolling(2, 2)(s);
        s.max_failed_nodes = Some(FailedNodes::Count(1));
    });
    k.failed(0);
    for i in 1..4 {
        k.installed(i);
    }
    assert_eq!(k.d(id).status, Status::RolledForward);
}

#[test]
fn failures_that_fill_the_window_while_nodes_wait_fail_it_whatever_the_tolerance() {
    let mut k = Kit::new(5);
    let id = k.start_with(|s| {
        rolling(2, 1)(s);
        s.max_failed_nodes = Some(FailedNodes::Count(4));
        s.rollback_on_failure = Some(false);
    });
    k.failed(0);
    assert_eq!(k.d(id).status, Status::RollingForward);
    k.failed(1);
    assert_eq!(k.d(id).status, Status::Failed);
}

#[test]
fn a_deployment_in_which_no_node_succeeded_is_never_rolled_forward() {
    // A one-node canary whose agent died mid-install: skipped, not a success.
    let mut k = Kit::new(3);
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.nodes = Some("0".into());
    });
    k.ok(Command::MarkInactive {
        nodes: vec!["c-0".into()],
    });
    assert_eq!(k.d(id).status, Status::RolledBack);
    // Every node failed, all tolerated: still not a success.
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        s.max_failed_nodes = Some(FailedNodes::Count(2));
        s.rollback_on_failure = Some(false);
    });
    k.failed(0);
    k.failed(1);
    assert_eq!(k.d(id).status, Status::Failed);
}

#[test]
fn all_at_once_waits_for_every_node_before_judging() {
    let mut k = Kit::new(3);
    let id = k.start_with(|_| {});
    k.failed(0);
    assert_eq!(
        k.d(id).status,
        Status::RollingForward,
        "the others still install"
    );
    assert_eq!(k.flags(3).0, vec![1, 2], "the failed node is held");
    k.installed(1);
    assert_eq!(k.d(id).status, Status::RollingForward);
    k.installed(2);
    assert_eq!(k.d(id).status, Status::RollingBack);
}

#[test]
fn a_timeout_finishes_and_leaves_the_silent_node_where_it_is() {
    let mut k = Kit::new(10);
    let id = k.start_with(|s| {
        s.completion = Some(Completion {
            timeout_ms: Some(1_000),
            ..Completion::default()
        })
    });
    for i in 0..9 {
        k.installed(i);
    }
    k.tick_to(k.now + 2_000);
    assert_eq!(k.d(id).status, Status::RolledForward);
    assert_eq!(k.phases(id)[9], NodePhase::TimedOut);
    assert_eq!(k.phases(id)[0], NodePhase::Succeeded);
    let view = k.s.deployment(id).unwrap();
    assert_eq!(
        view.events.last().unwrap().message.as_deref(),
        Some("completion timeout: 9 of 10 nodes succeeded, 1 timed out")
    );
    assert_eq!(view.nodes[9].state, NodePhase::TimedOut);
}

#[test]
fn a_timeout_takes_the_failure_path_past_the_tolerance_an_unmet_quorum_or_on_timeout_fail() {
    let timeout = |quorum, on_timeout| {
        move |s: &mut DeploymentSpec| {
            s.completion = Some(Completion {
                quorum,
                timeout_ms: Some(1_000),
                on_timeout,
            });
            s.rollback_on_failure = Some(false);
        }
    };
    let run = |f: &dyn Fn(&mut DeploymentSpec), fail: &[usize], ok: &[usize]| {
        let mut k = Kit::new(4);
        let id = k.start_with(f);
        fail.iter().for_each(|&i| k.failed(i));
        ok.iter().for_each(|&i| k.installed(i));
        k.tick_to(k.now + 2_000);
        let last = k.d(id).events.last().unwrap().message.clone().unwrap();
        (k.d(id).status, last)
    };
    let finish = timeout(None, OnTimeout::Finish);
    assert_eq!(run(&finish, &[], &[0, 1]).0, Status::RolledForward);
    let (status, why) = run(&finish, &[0], &[1, 2]);
    assert_eq!(
        status,
        Status::Failed,
        "all at once judges failures at the timeout: {why}"
    );
    assert!(
        why.ends_with("1 node failed; 0 tolerated; failed: c-0 (attempt 1 failed: exit 3)"),
        "{why}"
    );
    let (status, why) = run(&finish, &[], &[]);
    assert_eq!(
        (status, why.ends_with("no node succeeded")),
        (Status::Failed, true)
    );
    let quorum = timeout(Some(3.0), OnTimeout::Finish);
    assert_eq!(run(&quorum, &[], &[0, 1]).0, Status::Failed);
    let fail = timeout(None, OnTimeout::Fail);
    assert_eq!(run(&fail, &[], &[0, 1, 2]).0, Status::Failed);
}

#[test]
fn all_at_once_with_fail_fast_judges_as_failures_come() {
    let mut k = Kit::new(3);
    let id = k.start_with(|s| s.strategy = Some(Strategy::AllAtOnce { fail_fast: true }));
    k.failed(0);
    // Judged while nodes 1 and 2 were still installing (they still ran version 1: back at once).
    assert_eq!(k.d(id).status, Status::RolledBack);
}

#[test]
fn the_download_window_holds_through_slow_downloads() {
    // Downloads and installs that take several report rounds: never more than 2 fetching.
    let mut k = Kit::new(6);
    let id = k.start_with(rolling(3, 2));
    let downloaded = [(1, vp(true, true, None)), (2, vp(true, false, None))];
    for round in 0..12 {
        assert!(fetching(&k, id, 6) <= 2, "round {round}");
        let (install, download) = k.flags(6);
        for &i in download.iter().chain(&install) {
            let have = k.d(id).nodes[i]
                .seen
                .has(crate::deployment::seen::Fact::Have);
            if !have {
                k.report(i, Some(1), &downloaded);
            } else if install.contains(&i) {
                k.installed(i);
            }
        }
    }
    assert_eq!(k.d(id).status, Status::RolledForward);
}

#[test]
fn the_download_window_caps_every_download() {
    // install window 10, download window 1, 11 nodes: one fetch at a time.
    let mut k = Kit::new(11);
    let id = k.start_with(rolling(10, 1));
    assert_eq!(fetching(&k, id, 11), 1);
    // The default windows (1 and 2): two fetches, not three.
    let mut k = Kit::new(5);
    let id = k.start_with(|s| s.strategy = None);
    assert_eq!(fetching(&k, id, 5), 2);
}

#[test]
fn error_is_not_a_status() {
    assert!(serde_json::from_value::<Status>(serde_json::json!("ERROR")).is_err());
}

/// All at once on `n` nodes with a healthy deadline of 3 s and, if given, a completion timeout.
fn hung_all_at_once(n: usize, timeout_ms: Option<u64>, retries: u32) -> (Kit, DeploymentId) {
    let mut k = Kit::new(n);
    let id = k.start_with(|s| {
        s.pacing = Some(Pacing {
            healthy_deadline_ms: Some(3_000),
            ..Pacing::default()
        });
        s.completion = Some(Completion {
            timeout_ms,
            ..Completion::default()
        });
        s.max_failures_per_node = Some(retries);
    });
    (k, id)
}

#[test]
fn with_a_completion_timeout_a_node_past_its_healthy_deadline_times_out_and_the_deployment_finishes(
) {
    // Issue 36 item 3: one hung node rolled the whole consumer back at its deadline.
    for n in [5, 20] {
        let (mut k, id) = hung_all_at_once(n, Some(8_000), 0);
        let hung = n - 1;
        k.holding(hung);
        for i in 0..hung {
            k.installed(i);
        }
        k.tick_to(k.now + 3_500);
        assert_eq!(k.status(id), Status::RollingForward, "n = {n}");
        assert_eq!(k.phases(id)[hung], NodePhase::TimedOut);
        let e = k.d(id).events.iter().next_back().unwrap().clone();
        assert_eq!(
            (e.kind, e.node, &e.by),
            (EventKind::Skipped, Some(hung as u32), &Actor::Timer)
        );
        assert!(e
            .message
            .unwrap()
            .starts_with("timed out: not done and healthy within its healthy deadline of 3000 ms"));
        // It finishes at its completion timeout, without the hung node.
        k.tick_to(k.now + 5_000);
        assert_eq!(k.status(id), Status::RolledForward);
        let last = k.d(id).events.iter().next_back().unwrap().message.clone();
        assert_eq!(
            last.as_deref(),
            Some(
                format!("completion timeout: {hung} of {n} nodes succeeded, 1 timed out").as_str()
            )
        );
    }
}

#[test]
fn a_node_past_its_deadline_still_uses_its_retries_and_without_a_completion_timeout_fails() {
    let (mut k, id) = hung_all_at_once(3, Some(20_000), 1);
    k.holding(2);
    k.installed(0);
    k.installed(1);
    k.tick_to(k.now + 3_500);
    assert_eq!(k.phases(id)[2], NodePhase::Installing, "a retry first");
    assert_eq!(k.d(id).nodes[2].failures, 1);
    k.tick_to(k.now + 3_500);
    assert_eq!(k.phases(id)[2], NodePhase::TimedOut);

    // Aurora's rule without a completion condition: it fails, and fails the deployment.
    let (mut k, id) = hung_all_at_once(3, None, 0);
    k.holding(2);
    k.installed(0);
    k.installed(1);
    k.tick_to(k.now + 3_500);
    assert!(k
        .d(id)
        .events
        .iter()
        .any(|e| e.kind == EventKind::Failed && e.node == Some(2) && e.by == Actor::Timer));
    assert_eq!(k.status(id), Status::RollingBack);
}

#[test]
fn a_failure_event_names_the_nodes_that_failed_and_why() {
    let mut k = Kit::new(4);
    let id = k.start_with(|s| {
        s.max_failed_nodes = Some(FailedNodes::Count(1));
        s.rollback_on_failure = Some(false);
    });
    k.failed(1);
    k.failed(3);
    k.installed(0);
    k.installed(2);
    assert_eq!(k.d(id).status, Status::Failed);
    let last = k.d(id).events.iter().next_back().unwrap().message.clone();
    assert_eq!(
        last.as_deref(),
        Some(
            "2 nodes failed; 1 tolerated; failed: c-1 (attempt 1 failed: exit 3), \
             c-3 (attempt 1 failed: exit 3)"
        )
    );
}
