//! The health rules driven with fake time: one test per rule.

use std::time::Duration;

use super::health_policy::{Check, Decision, HealthRules, HealthWatch, RestartPolicy};

/// Checks every 100 ms, 1 s grace, 2 failures tolerated, 3 restarts from 200 ms up to 500 ms.
fn rules() -> HealthRules {
    HealthRules {
        restart: RestartPolicy::OnFailure,
        interval: Duration::from_millis(100),
        grace: Duration::from_millis(1000),
        max_consecutive_failures: 2,
        max_restarts: 3,
        backoff: Duration::from_millis(200),
        backoff_max: Duration::from_millis(500),
        stable: Duration::from_millis(10_000),
        snooze_max: Duration::from_millis(5_000),
    }
}

fn failed(reason: &str) -> Check {
    Check::Failed(reason.to_string())
}

/// A watch of version 1 started at 0 that passed its first check at 100.
fn proven() -> HealthWatch {
    let mut w = HealthWatch::new(1, 0, false);
    assert_eq!(
        w.observe(100, Check::Passed, true, &rules()),
        Decision::Proven
    );
    w
}

#[test]
fn checks_are_due_an_interval_after_the_start_and_after_each_check() {
    let r = rules();
    let mut w = HealthWatch::new(1, 1_000, false);
    assert!(!w.check_due(1_099, &r));
    assert!(w.check_due(1_100, &r));
    w.observe(1_100, failed("no"), true, &r);
    assert!(!w.check_due(1_150, &r));
    assert!(w.check_due(1_200, &r));
}

#[test]
fn failures_in_the_grace_do_not_count_and_the_first_pass_proves_the_version() {
    let r = rules();
    let mut w = HealthWatch::new(1, 0, false);
    for t in (100..1_000).step_by(100) {
        assert_eq!(w.observe(t, failed("starting"), true, &r), Decision::Keep);
    }
    assert!(!w.healthy() && !w.proven() && w.restarts() == 0);
    assert_eq!(w.observe(1_000, Check::Passed, true, &r), Decision::Proven);
    assert!(w.healthy() && w.proven());
    assert_eq!(w.observe(1_100, Check::Passed, true, &r), Decision::Keep);
}

#[test]
fn after_healthy_up_to_max_consecutive_failures_are_tolerated_and_a_pass_resets_the_count() {
    let r = rules();
    let mut w = proven();
    let t0 = 2_000;
    for (i, t) in [t0, t0 + 100].into_iter().enumerate() {
        let d = w.observe(t, failed("slow"), true, &r);
        assert_eq!(
            d,
            Decision::Tolerated {
                failures: i as u32 + 1,
                reason: "slow".into()
            }
        );
        assert!(w.healthy());
    }
    assert_eq!(w.observe(t0 + 200, Check::Passed, true, &r), Decision::Keep);
    // The count started again: two more failures are tolerated again.
    for t in [t0 + 300, t0 + 400] {
        assert!(matches!(
            w.observe(t, failed("slow"), true, &r),
            Decision::Tolerated { .. }
        ));
    }
    assert!(w.healthy() && w.restarts() == 0);
}

#[test]
fn one_failure_more_than_tolerated_restarts_the_process_after_a_backoff() {
    let r = rules();
    let mut w = proven();
    w.observe(2_000, failed("x"), true, &r);
    w.observe(2_100, failed("x"), true, &r);
    let d = w.observe(2_200, failed("503"), true, &r);
    assert_eq!(
        d,
        Decision::Restart {
            at_ms: 2_400,
            restarts: 1,
            reason: "health check failed: 503".into()
        }
    );
    assert!(!w.healthy() && w.proven() && w.restart_pending());
    assert!(
        !w.check_due(2_400, &r),
        "no checks while the process is down"
    );
    assert!(!w.restart_due(2_399) && w.restart_due(2_400));
    w.started(2_400);
    assert!(!w.restart_pending() && !w.healthy());
    // A new grace after the restart.
    assert_eq!(
        w.observe(2_500, failed("warming"), true, &r),
        Decision::Keep
    );
    assert_eq!(
        w.observe(2_600, Check::Passed, true, &r),
        Decision::Recovered
    );
}

#[test]
fn a_crash_loop_backs_off_exponentially_up_to_the_cap_then_fails_the_version() {
    let r = rules();
    let mut w = HealthWatch::new(1, 0, false);
    let mut now = 50;
    let mut waits = Vec::new();
    for _ in 0..3 {
        match w.exited(now, "exit status: 3", false, &r) {
            Decision::Restart { at_ms, .. } => {
                waits.push(at_ms - now);
                now = at_ms;
                w.started(now);
                now += 10;
            }
            d => panic!("{d:?}"),
        }
    }
    assert_eq!(
        waits,
        vec![200, 400, 500],
        "doubling, capped at backoff_max"
    );
    let d = w.exited(now, "exit status: 3", false, &r);
    assert_eq!(
        d,
        Decision::Fail("run command exited: exit status: 3 (gave up after 3 restarts)".into())
    );
    assert!(w.failed() && !w.proven() && !w.healthy());
    assert!(!w.check_due(now + 10_000, &r) && !w.restart_due(now + 10_000));
    assert_eq!(w.exited(now + 1, "again", false, &r), Decision::Keep);
}

#[test]
fn an_exit_with_status_0_is_finished_unless_the_policy_is_always() {
    for policy in [RestartPolicy::OnFailure, RestartPolicy::Never] {
        let r = HealthRules {
            restart: policy,
            ..rules()
        };
        // Before its first check, or after it passed one.
        for mut w in [HealthWatch::new(1, 0, false), proven()] {
            assert_eq!(
                w.exited(150, "exit status: 0", true, &r),
                Decision::Finished,
                "{policy:?}"
            );
            assert!(
                w.proven() && w.healthy() && w.restarts() == 0,
                "{policy:?}: {w:?}"
            );
            assert!(
                !w.check_due(10_000, &r) && !w.restart_due(10_000),
                "{policy:?}"
            );
            assert_eq!(w.exited(200, "exit status: 0", true, &r), Decision::Keep);
        }
    }
    let always = HealthRules {
        restart: RestartPolicy::Always,
        ..rules()
    };
    let mut w = proven();
    assert!(matches!(
        w.exited(150, "exit status: 0", true, &always),
        Decision::Restart { restarts: 1, .. }
    ));
    // A non-zero exit: restarted under on-failure and always, the version failed at once under never.
    let mut w = proven();
    assert!(matches!(
        w.exited(150, "exit status: 3", false, &rules()),
        Decision::Restart { restarts: 1, .. }
    ));
    let never = HealthRules {
        restart: RestartPolicy::Never,
        ..rules()
    };
    let mut w = proven();
    assert_eq!(
        w.exited(150, "exit status: 3", false, &never),
        Decision::Fail("run command exited: exit status: 3 (restart policy never)".into())
    );
    assert!(!w.restart_due(10_000) && !w.healthy());
}

#[test]
fn the_restart_count_starts_again_after_staying_healthy_for_stable() {
    let r = rules();
    let mut w = proven();
    assert!(matches!(
        w.exited(200, "killed", false, &r),
        Decision::Restart { .. }
    ));
    w.started(400);
    assert_eq!(w.observe(500, Check::Passed, true, &r), Decision::Recovered);
    assert_eq!(w.restarts(), 1);
    w.observe(10_400, Check::Passed, true, &r);
    assert_eq!(w.restarts(), 1, "healthy for 9.9 s only");
    w.observe(10_500, Check::Passed, true, &r);
    assert_eq!(w.restarts(), 0);
}

#[test]
fn without_a_process_a_never_healthy_version_fails_and_a_proven_one_is_reported_unhealthy() {
    let r = rules();
    let mut never = HealthWatch::new(1, 0, false);
    let mut last = Decision::Keep;
    for t in (100..=1_200).step_by(100) {
        last = never.observe(t, failed("refused"), false, &r);
        if last != Decision::Keep {
            assert_eq!(t, 1_200, "grace to 1000, then 2 tolerated, the third fails");
        }
    }
    assert_eq!(last, Decision::Fail("health check failed: refused".into()));
    assert!(never.failed());

    let mut w = HealthWatch::new(1, 0, false);
    w.observe(100, Check::Passed, false, &r);
    for t in [2_000, 2_100] {
        w.observe(t, failed("refused"), false, &r);
    }
    assert_eq!(
        w.observe(2_200, failed("refused"), false, &r),
        Decision::Unhealthy("health check failed: refused".into())
    );
    assert!(!w.failed() && !w.healthy() && w.check_due(2_300, &r));
    assert_eq!(
        w.observe(2_300, Check::Passed, false, &r),
        Decision::Recovered
    );
}

#[test]
fn a_snooze_counts_as_passed_for_at_most_snooze_max_then_checks_resume() {
    let r = rules();
    let mut w = HealthWatch::new(1, 0, false);
    // Snoozed during the grace: the version is done (not stuck for ever).
    assert!(w.snoozed(100, true, &r));
    assert_eq!(w.observe(100, Check::Snoozed, true, &r), Decision::Proven);
    assert!(w.snoozed(5_099, true, &r));
    assert!(!w.snooze_expired(5_099, &r));
    assert!(!w.snoozed(5_100, true, &r), "snooze_max reached");
    assert!(w.snooze_expired(5_100, &r));
    // Checks resume and count as usual.
    w.observe(5_100, failed("down"), true, &r);
    w.observe(5_200, failed("down"), true, &r);
    assert!(matches!(
        w.observe(5_300, failed("down"), true, &r),
        Decision::Restart { .. }
    ));
    // Removing the file ends the snooze; a new file snoozes again from its own start.
    assert!(!w.snoozed(5_400, false, &r));
    assert!(w.snoozed(5_500, true, &r));
    assert!(w.snoozed(10_499, true, &r));
    assert!(!w.snoozed(10_500, true, &r));
}

#[test]
fn a_watch_of_a_version_done_before_an_agent_restart_starts_healthy() {
    let r = rules();
    let mut w = HealthWatch::new(4, 7_000, true);
    w.started(7_010);
    assert!(
        w.proven() && w.healthy(),
        "its process starting again is no failure"
    );
    assert_eq!(w.version, 4);
    assert_eq!(
        w.observe(7_200, failed("warming"), true, &r),
        Decision::Keep
    );
    assert_eq!(w.observe(7_300, Check::Passed, true, &r), Decision::Keep);
}
