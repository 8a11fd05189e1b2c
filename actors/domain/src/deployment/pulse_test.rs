use crate::testing::*;
use crate::*;

fn coordinated(k: &mut Kit) -> DeploymentId {
    k.start_with(|s| s.pulse_interval_ms = Some(1_000))
}

fn pulse(k: &mut Kit, id: DeploymentId) -> Response {
    k.ok(Command::Pulse {
        id,
        by: Actor::Pulse,
    })
}

#[test]
fn starts_awaiting_and_has_no_countdown_until_the_first_pulse() {
    let mut k = Kit::new(2);
    let id = coordinated(&mut k);
    assert_eq!(k.d(id).status, Status::RollForwardAwaitingPulse);
    assert_eq!(k.s.deployment_deadline(id), None);
    assert!(k.flags(2).0.is_empty());
    assert_eq!(
        pulse(&mut k, id),
        Response::Pulse {
            answer: PulseAnswer::Ok,
            status: Some(Status::RollingForward)
        }
    );
    assert_eq!(k.s.deployment_deadline(id), Some(k.now + 1_000));
    assert_eq!(k.flags(2).0, vec![0, 1]);
}

#[test]
fn blocks_exactly_at_the_deadline_on_tick() {
    let mut k = Kit::new(2);
    let id = coordinated(&mut k);
    pulse(&mut k, id);
    k.now += 999;
    k.ok(Command::Tick);
    assert_eq!(k.d(id).status, Status::RollingForward);
    k.now += 1;
    k.ok(Command::Tick);
    assert_eq!(
        (k.d(id).status, k.d(id).paused_by()),
        (
            Status::RollForwardAwaitingPulse,
            Some(PausedBy::PulseTimeout)
        )
    );
    assert_eq!(k.s.next_deadline(), None);
}

#[test]
fn pulse_while_auto_paused_answers_ok_but_does_not_resume() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        s.pulse_interval_ms = Some(1_000);
        s.strategy = Some(Strategy::Batch {
            sizes: vec![1],
            autopause: true,
        });
    });
    pulse(&mut k, id);
    k.installed(0);
    assert_eq!(k.d(id).paused_by(), Some(PausedBy::Auto));
    assert_eq!(
        pulse(&mut k, id),
        Response::Pulse {
            answer: PulseAnswer::Ok,
            status: Some(Status::RollForwardPaused)
        }
    );
}

#[test]
fn rollback_with_an_expired_pulse_blocks_rolling_back() {
    let mut k = Kit::new(2);
    let id = coordinated(&mut k);
    pulse(&mut k, id);
    k.now += 5_000;
    k.op(pause, id).unwrap();
    k.op(rollback, id).unwrap();
    assert_eq!(
        (k.d(id).status, k.d(id).paused_by()),
        (Status::RollBackAwaitingPulse, Some(PausedBy::PulseTimeout))
    );
    pulse(&mut k, id);
    assert_eq!(
        k.d(id).status,
        Status::RolledBack,
        "nodes still ran version 1"
    );
}

#[test]
fn rearm_lists_only_expired_rolling_coordinated_deployments() {
    let mut k = Kit::new(1);
    let id = coordinated(&mut k);
    assert!(
        k.s.rearm_pulses(u64::MAX).is_empty(),
        "awaiting: nothing to block"
    );
    pulse(&mut k, id);
    assert!(k.s.rearm_pulses(k.now + 999).is_empty());
    assert_eq!(k.s.rearm_pulses(k.now + 1_000), vec![id]);
}
