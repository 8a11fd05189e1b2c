use super::*;
use crate::deployment::Deployment;
use crate::values::ids::{Actor, DeploymentId};
use crate::values::strategy::Settings;
use crate::ErrorKind;

/// Checks one row of the table: every target status is allowed exactly when listed.
fn row(from: Status, expected: &[Status]) {
    for to in Status::ALL {
        let ok = expected.contains(&to);
        assert_eq!(allowed(from, to), ok, "{from} -> {to}");
        match check(DeploymentId(7), from, to) {
            Ok(changed) => {
                assert!(ok || from == to, "{from} -> {to} should be refused");
                assert_eq!(changed, from != to);
            }
            Err(e) => {
                assert!(!ok && from != to, "{from} -> {to} should be allowed");
                assert_eq!(e.kind(), ErrorKind::Conflict);
                assert!(
                    e.to_string()
                        .starts_with(&format!("deployment \"d-7\" is {from}; cannot ")),
                    "{e}"
                );
            }
        }
    }
}

#[test]
fn row_rolling_forward() {
    row(
        RollingForward,
        &[
            RollingBack,
            RollForwardPaused,
            RollForwardAwaitingPulse,
            RolledForward,
            Aborted,
            Failed,
        ],
    );
}
#[test]
fn row_rolling_back() {
    row(
        RollingBack,
        &[
            RollBackPaused,
            RollBackAwaitingPulse,
            RolledBack,
            Aborted,
            Failed,
        ],
    );
}
#[test]
fn row_roll_forward_paused() {
    row(
        RollForwardPaused,
        &[
            RollingForward,
            RollingBack,
            RollForwardAwaitingPulse,
            Aborted,
        ],
    );
}
#[test]
fn row_roll_back_paused() {
    row(
        RollBackPaused,
        &[RollingBack, RollBackAwaitingPulse, Aborted],
    );
}
#[test]
fn row_roll_forward_awaiting_pulse() {
    row(
        RollForwardAwaitingPulse,
        &[RollingForward, RollingBack, RollForwardPaused, Aborted],
    );
}
#[test]
fn row_roll_back_awaiting_pulse() {
    row(
        RollBackAwaitingPulse,
        &[RollingBack, RollBackPaused, Aborted],
    );
}
#[test]
fn rows_terminal_allow_nothing() {
    for t in [RolledForward, RolledBack, Aborted, Failed] {
        assert!(t.is_terminal());
        row(t, &[]);
    }
}

#[test]
fn statuses_serialize_with_aurora_names() {
    for s in Status::ALL {
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            format!("\"{}\"", s.as_str())
        );
    }
    assert_eq!(
        serde_json::to_string(&PausedBy::PulseTimeout).unwrap(),
        "\"pulse_timeout\""
    );
}

fn at(status: Status) -> Deployment {
    let d = Deployment::new(
        DeploymentId(3),
        "c".into(),
        "r".into(),
        2,
        Settings::default(),
        vec![],
        true,
        0,
    );
    d.standing_in(status)
}

type OpFn = fn(&mut Deployment) -> Result<bool, crate::DomainError>;

/// Expected outcome of an operation from each status: `Some(status after)` or `None` for a refusal.
fn op_table(name: &str, op: OpFn, table: &[(Status, Option<Status>)]) {
    for &(from, expected) in table {
        let mut d = at(from);
        let before = d.clone();
        match (op(&mut d), expected) {
            (Ok(_), Some(to)) => assert_eq!(d.status, to, "{name} from {from}"),
            (Err(e), None) => {
                assert_eq!(
                    d, before,
                    "{name} from {from} refused but changed the deployment"
                );
                assert!(e.to_string().contains(from.as_str()), "{e}");
            }
            (r, e) => panic!("{name} from {from}: got {r:?}, expected {e:?}"),
        }
    }
}

#[test]
fn pause_from_every_status() {
    op_table(
        "pause",
        |d| d.pause(1, Actor::User, None),
        &[
            (RollingForward, Some(RollForwardPaused)),
            (RollingBack, Some(RollBackPaused)),
            (RollForwardPaused, Some(RollForwardPaused)),
            (RollBackPaused, Some(RollBackPaused)),
            (RollForwardAwaitingPulse, Some(RollForwardPaused)),
            (RollBackAwaitingPulse, Some(RollBackPaused)),
            (RolledForward, None),
            (RolledBack, None),
            (Aborted, None),
            (Failed, None),
        ],
    );
    let mut d = at(RollingForward);
    d.pause(1, Actor::User, None).unwrap();
    assert_eq!(d.paused_by(), Some(PausedBy::User));
    assert_eq!(
        at(RolledForward)
            .pause(1, Actor::User, None)
            .unwrap_err()
            .to_string(),
        "deployment \"d-3\" is ROLLED_FORWARD; cannot pause a terminal deployment"
    );
}

#[test]
fn resume_from_every_status() {
    op_table(
        "resume",
        |d| d.resume(1, Actor::User, None),
        &[
            (RollingForward, Some(RollingForward)),
            (RollingBack, Some(RollingBack)),
            (RollForwardPaused, Some(RollingForward)),
            (RollBackPaused, Some(RollingBack)),
            (RollForwardAwaitingPulse, None),
            (RollBackAwaitingPulse, None),
            (RolledForward, None),
            (RolledBack, None),
            (Aborted, None),
            (Failed, None),
        ],
    );
}

#[test]
fn abort_from_every_status() {
    op_table(
        "abort",
        |d| d.abort(1, Actor::User, None),
        &[
            (RollingForward, Some(Aborted)),
            (RollingBack, Some(Aborted)),
            (RollForwardPaused, Some(Aborted)),
            (RollBackPaused, Some(Aborted)),
            (RollForwardAwaitingPulse, Some(Aborted)),
            (RollBackAwaitingPulse, Some(Aborted)),
            (RolledForward, None),
            (RolledBack, None),
            (Aborted, Some(Aborted)),
            (Failed, None),
        ],
    );
}

#[test]
fn rollback_from_every_status() {
    op_table(
        "rollback",
        |d| d.rollback(1, Actor::User, None),
        &[
            (RollingForward, Some(RollingBack)),
            (RollingBack, Some(RollingBack)),
            (RollForwardPaused, Some(RollingBack)),
            (RollBackPaused, None),
            (RollForwardAwaitingPulse, Some(RollingBack)),
            (RollBackAwaitingPulse, None),
            (RolledForward, None),
            (RolledBack, None),
            (Aborted, None),
            (Failed, None),
        ],
    );
}

#[test]
fn every_transition_is_recorded_as_an_event() {
    let mut d = at(RollingForward);
    d.pause(5, Actor::User, Some("hold".into())).unwrap();
    d.resume(6, Actor::User, None).unwrap();
    d.abort(7, Actor::User, Some("stop".into())).unwrap();
    let got: Vec<_> = d
        .events
        .iter()
        .map(|e| (e.at, e.status, e.message.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (5, Some(RollForwardPaused), Some("hold".into())),
            (6, Some(RollingForward), None),
            (7, Some(Aborted), Some("stop".into())),
        ]
    );
}
