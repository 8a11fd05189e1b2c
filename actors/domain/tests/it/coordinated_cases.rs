//! The five case studies of 000 (coordinated updates) as scenarios.

use convoy_domain::testing::*;
use convoy_domain::*;

const PULSE: u64 = 10_000;

fn coordinated(h: &mut Kit) -> DeploymentId {
    h.fleet("web", "app", 3);
    h.publish_to("app");
    let mut s = spec(
        "web",
        "app",
        2,
        Strategy::Rolling {
            install_window: 1,
            download_window: 1,
        },
    );
    s.pulse_interval_ms = Some(PULSE);
    let id = h.start(s);
    assert_eq!(
        h.status(id),
        Status::RollForwardAwaitingPulse,
        "a coordinated deployment starts awaiting a pulse"
    );
    assert!(
        h.installing("web", "app").is_empty(),
        "no progress before the first pulse"
    );
    id
}

#[test]
fn case1_successful_coordinated_update() {
    let mut h = Kit::empty();
    let id = coordinated(&mut h);
    assert_eq!(h.pulse(id), (PulseAnswer::Ok, Some(Status::RollingForward)));
    assert_eq!(h.installing("web", "app"), vec!["web-0"]);
    assert_eq!(h.s.deployment_deadline(id), Some(h.now + PULSE));
    for i in 0..3 {
        h.now += 1_000;
        assert_eq!(h.pulse(id).0, PulseAnswer::Ok);
        h.node_installed(&format!("web-{i}"), "app", 1, 2);
    }
    assert_eq!(h.status(id), Status::RolledForward);
    h.now += 1_000;
    assert_eq!(
        h.pulse(id),
        (PulseAnswer::Stop, Some(Status::RolledForward)),
        "a pulse on a finished deployment answers STOP"
    );
    assert_eq!(h.s.next_deadline(), None);
}

#[test]
fn case2_paused_on_missed_pulse_by_timer() {
    let mut h = Kit::empty();
    let id = coordinated(&mut h);
    h.pulse(id);
    let deadline = h.s.next_deadline().unwrap();
    assert_eq!(deadline, h.now + PULSE);
    h.tick_to(deadline - 1);
    assert_eq!(
        h.status(id),
        Status::RollingForward,
        "not before the deadline"
    );
    h.tick_to(deadline);
    let view = h.s.deployment(id).unwrap();
    assert_eq!(view.status, Status::RollForwardAwaitingPulse);
    assert_eq!(view.paused_by, Some(PausedBy::PulseTimeout));
    assert_eq!(
        view.events.last().unwrap().message.as_deref(),
        Some("pulses timed out")
    );
    assert_eq!(view.events.last().unwrap().by, Actor::Timer);
    // Node progress while blocked admits nobody new, and is judged only once a pulse lets it move (web-0 stays
    // in flight meanwhile: DEPLOYMENTS.md §6).
    h.node_installed("web-0", "app", 1, 2);
    assert_eq!(h.installing("web", "app"), vec!["web-0".to_string()]);
    assert_eq!(h.status(id), Status::RollForwardAwaitingPulse);
}

#[test]
fn case3_failover_new_leader_rearms_and_blocks_then_fresh_pulse_resumes() {
    let mut h = Kit::empty();
    let id = coordinated(&mut h);
    h.pulse(id);
    let last = h.now;
    // The leader dies; a new leader restores from a snapshot some time after the deadline.
    let mut follower = ClusterState::from_snapshot_bytes(&h.s.snapshot_bytes()).unwrap();
    let new_now = last + PULSE + 5_000;
    assert_eq!(
        follower.rearm_pulses(last + PULSE - 1),
        Vec::<DeploymentId>::new(),
        "not yet expired"
    );
    assert_eq!(follower.rearm_pulses(new_now), vec![id]);
    follower.apply(Command::Tick, new_now).unwrap();
    assert_eq!(
        follower.deployment(id).unwrap().status,
        Status::RollForwardAwaitingPulse
    );
    assert!(
        follower.rearm_pulses(new_now).is_empty(),
        "blocked deployments have no countdown"
    );
    let r = follower
        .apply(
            Command::Pulse {
                id,
                by: Actor::Pulse,
            },
            new_now + 1,
        )
        .unwrap();
    assert_eq!(
        r,
        Response::Pulse {
            answer: PulseAnswer::Ok,
            status: Some(Status::RollingForward)
        }
    );
    assert_eq!(follower.deployment_deadline(id), Some(new_now + 1 + PULSE));
}

#[test]
fn case3_quick_failover_keeps_going_and_blocks_at_deadline() {
    let mut h = Kit::empty();
    let id = coordinated(&mut h);
    h.pulse(id);
    let deadline = h.now + PULSE;
    assert!(h.s.rearm_pulses(h.now + 1).is_empty());
    assert_eq!(h.s.deployment_deadline(id), Some(deadline));
    h.tick_to(deadline);
    assert_eq!(h.status(id), Status::RollForwardAwaitingPulse);
}

#[test]
fn case4_partition_pauses_like_case2() {
    let mut h = Kit::empty();
    let id = coordinated(&mut h);
    h.pulse(id);
    h.node_installed("web-0", "app", 1, 2);
    // The monitoring service is partitioned away: no pulses arrive.
    h.tick_to(h.now + PULSE);
    assert_eq!(h.status(id), Status::RollForwardAwaitingPulse);
    // Resume never unblocks a pulse block.
    let e = h.err(resume(id, None, Actor::User));
    assert_eq!(e.kind(), ErrorKind::Conflict);
    // The partition heals; a fresh pulse unblocks at once.
    assert_eq!(h.pulse(id).0, PulseAnswer::Ok);
    assert_eq!(h.installing("web", "app"), vec!["web-1"]);
}

#[test]
fn case5_user_pause_then_pulse_answers_stop() {
    let mut h = Kit::empty();
    let id = coordinated(&mut h);
    h.pulse(id);
    assert_eq!(h.op_status(pause, id), Status::RollForwardPaused);
    h.now += 1_000;
    assert_eq!(
        h.pulse(id),
        (PulseAnswer::Stop, Some(Status::RollForwardPaused)),
        "a pulse never resumes a user pause"
    );
    assert_eq!(h.s.deployment(id).unwrap().paused_by, Some(PausedBy::User));
    // Resuming within the interval (the pulse was recorded) continues at once.
    h.now += 1_000;
    assert_eq!(h.op_status(resume, id), Status::RollingForward);
    // Resuming after the interval expired goes to AWAITING_PULSE instead.
    h.op_status(pause, id);
    h.now += PULSE + 1;
    assert_eq!(h.op_status(resume, id), Status::RollForwardAwaitingPulse);
    assert_eq!(h.pulse(id).0, PulseAnswer::Ok);
    assert_eq!(h.status(id), Status::RollingForward);
}

#[test]
fn pulse_on_unknown_deployment_answers_stop() {
    let mut h = Kit::empty();
    assert_eq!(h.pulse(DeploymentId(42)), (PulseAnswer::Stop, None));
}
