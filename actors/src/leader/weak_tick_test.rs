//! The leader ticks when a window change that a weak subscription waits for comes, once at a time.

use std::sync::Arc;
use std::time::Duration;

use super::super::testkit::*;
use super::WeakTick;
use crate::domain::{AppliesTo, Command, Mode, Overrun, Policy, Window, WindowKind};

#[actix::test]
async fn a_recorded_window_change_is_ticked_once_and_then_the_next_one_is_awaited() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 2);
    host.apply(Command::Subscribe {
        consumer: "web".into(),
        resource: "app".into(),
        mode: Mode::Weak,
        pin: None,
        policy: Policy::default(),
    });
    // Opens every 10 s for 5 s (6 openings a minute, the most a window may have): a change within 5 s.
    host.apply(Command::CreateWindow(Window {
        name: "flicker".into(),
        kind: WindowKind::Deny,
        schedule: "*/10 * * * * *".into(),
        duration_ms: 5_000,
        time_zone: "UTC".into(),
        applies_to: AppliesTo::default(),
        overrun: Overrun::FinishInFlight,
        allow_rollback: true,
    }));
    let check_at = host
        .state
        .lock()
        .unwrap()
        .weak_gate()
        .check_at
        .expect("a change recorded");
    let mut tick = WeakTick::new(host.clone());
    while wall_ms() < check_at {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cmd = tick.due(false).expect("due at the recorded change");
    assert!(matches!(cmd, Command::Tick));
    assert!(tick.due(false).is_none(), "one at a time");
    let answer = host.apply(cmd);
    tick.ticked(Ok(answer));
    let next = host.state.lock().unwrap().weak_gate().check_at.unwrap();
    assert!(
        next > check_at,
        "the next change is recorded: {next} after {check_at}"
    );
    if wall_ms() < next {
        assert!(tick.due(false).is_none(), "not due before the next change");
    }
}
