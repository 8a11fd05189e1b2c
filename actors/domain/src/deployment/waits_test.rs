//! The set of waits, each reason lifted only by its owner, and the one active clock (DEPLOYMENTS.md §6).

use crate::deployment::reasons::Wait;
use crate::testing::*;
use crate::*;

fn reasons(k: &Kit, id: DeploymentId) -> Vec<Wait> {
    k.d(id).waits().iter().collect()
}

fn batches_of_one(autopause: bool, pulse: Option<u64>) -> impl FnOnce(&mut DeploymentSpec) {
    move |s| {
        s.strategy = Some(Strategy::Batch {
            sizes: vec![1],
            autopause,
        });
        s.pulse_interval_ms = pulse;
    }
}

#[test]
fn a_persons_pause_under_an_autopause_is_kept_and_answers_pulses_stop() {
    let mut k = Kit::new(3);
    let id = k.start_with(batches_of_one(true, Some(60_000)));
    assert_eq!(k.pulse(id).0, PulseAnswer::Ok);
    k.installed(0);
    assert_eq!(reasons(&k, id), [Wait::Auto]);
    assert_eq!(k.pulse(id).0, PulseAnswer::Ok, "the autopause is no person");
    k.op_status(pause, id);
    assert_eq!(reasons(&k, id), [Wait::User, Wait::Auto]);
    assert_eq!(
        k.d(id).paused_by(),
        Some(PausedBy::User),
        "the person ranks first"
    );
    assert_eq!(
        k.pulse(id).0,
        PulseAnswer::Stop,
        "seed 000 case 5: a person holds it"
    );
    assert_eq!(k.op_status(resume, id), Status::RollingForward);
    assert!(reasons(&k, id).is_empty(), "a resume lifts both");
    assert_eq!(k.pulse(id).0, PulseAnswer::Ok);
}

#[test]
fn a_confirm_lifts_only_its_gate_never_a_persons_pause() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        batches_of_one(false, None)(s);
        s.pacing = Some(Pacing {
            confirm: vec![Gate::BeforeEachBatch],
            ..Pacing::default()
        });
    });
    k.installed(0);
    assert_eq!(reasons(&k, id), [Wait::Confirm]);
    k.op_status(pause, id);
    assert_eq!(
        k.op_status(confirm, id),
        Status::RollForwardPaused,
        "the person still holds it"
    );
    assert_eq!(reasons(&k, id), [Wait::User]);
    assert_eq!(
        k.phases(id)[1],
        NodePhase::Pending,
        "nothing admitted past the person"
    );
    assert_eq!(k.op_status(resume, id), Status::RollingForward);
    assert_eq!(k.phases(id)[1], NodePhase::Installing);
}

#[test]
fn a_resume_of_a_gate_alone_is_refused_and_lifts_nothing() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        s.pacing = Some(Pacing {
            confirm: vec![Gate::BeforeStart],
            ..Pacing::default()
        })
    });
    let e = k.err(resume(id, None, Actor::User));
    assert!(e.to_string().contains("confirm"), "{e}");
}

#[test]
fn a_completion_timeout_counts_only_active_time() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.completion = Some(Completion {
            timeout_ms: Some(5_000),
            ..Completion::default()
        });
    });
    k.tick_to(1_100); // 1 s active
    k.op_status(pause, id);
    assert_eq!(
        k.s.deployment_deadline(id),
        None,
        "nothing is due while it waits"
    );
    k.tick_to(8_100); // 7 s paused: more than the timeout
    assert_eq!(k.status(id), Status::RollForwardPaused);
    k.op_status(resume, id);
    assert_eq!(
        k.s.deployment_deadline(id),
        Some(8_100 + 4_000),
        "the 4 s it had left"
    );
    k.tick_to(12_099);
    assert_eq!(k.status(id), Status::RollingForward);
    k.installed(0);
    k.installed(1);
    assert_eq!(
        k.status(id),
        Status::RolledForward,
        "it finished, nothing rolled back"
    );
}

#[test]
fn a_node_that_fails_and_recovers_while_the_deployment_waits_is_watched_again() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.min_healthy_ms = Some(1_000);
    });
    k.holding(0);
    k.op_status(pause, id);
    k.failed(0);
    assert_eq!(
        k.phases(id)[0],
        NodePhase::Installing,
        "not judged while it waits"
    );
    k.installed(0);
    k.op_status(resume, id);
    assert_eq!(
        k.phases(id)[0],
        NodePhase::Watching,
        "judged on what it says now"
    );
    assert_eq!(k.d(id).nodes[0].failures, 0);
}

#[test]
fn a_node_still_failing_at_the_resume_is_judged_then() {
    let mut k = Kit::new(2);
    let id = k.start_with(rolling(1, 1));
    k.holding(0);
    k.op_status(pause, id);
    k.failed(0);
    assert_eq!(k.d(id).tally.failed, 0);
    k.op_status(resume, id);
    assert_eq!(k.d(id).tally.failed, 1, "the failure counts once it moves");
    assert_ne!(
        k.status(id),
        Status::RollingForward,
        "and takes the failure path"
    );
}

#[test]
fn a_node_deadline_stands_still_while_the_deployment_waits() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.pacing = Some(Pacing {
            healthy_deadline_ms: Some(5_000),
            ..Pacing::default()
        });
    });
    k.holding(0);
    k.tick_to(2_100);
    k.op_status(pause, id);
    k.tick_to(60_000);
    k.op_status(resume, id);
    assert_eq!(
        k.phases(id)[0],
        NodePhase::Installing,
        "3 s of its deadline left"
    );
    assert_eq!(k.d(id).node_deadline(0), Some(63_000));
    k.tick_to(63_000);
    assert_eq!(k.d(id).tally.failed, 1, "then it fires");
    assert_ne!(k.status(id), Status::RollingForward);
}

#[test]
fn a_coordinated_deployment_waits_for_its_first_pulse_and_says_so() {
    let mut k = Kit::new(1);
    let id = k.start_with(batches_of_one(false, Some(10_000)));
    assert_eq!(reasons(&k, id), [Wait::Pulse]);
    k.op_status(pause, id);
    k.op_status(resume, id);
    assert_eq!(k.status(id), Status::RollForwardAwaitingPulse);
    let last = k.d(id).events.iter().next_back().unwrap().clone();
    assert_eq!(last.message.as_deref(), None);
    assert_eq!(k.pulse(id).0, PulseAnswer::Ok);
    assert_eq!(k.status(id), Status::RollingForward);
}
