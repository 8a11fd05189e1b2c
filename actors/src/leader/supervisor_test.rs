//! The supervisor follows leadership: a follower refuses reports and runs no timers, a leader does.

use std::sync::Arc;
use std::time::Duration;

use super::super::messages::{Leadership, Report, ReportRejected, StateChanged};
use super::super::testkit::*;
use crate::domain::{Command, Status};

#[actix::test]
async fn leadership_starts_and_stops_the_children() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    let id = coordinated(&host, 250);
    host.apply(Command::Pulse {
        id,
        by: crate::domain::Actor::Pulse,
    });
    let supervisor = leader(&host, Duration::from_secs(30));

    // A follower refuses reports and runs no timers.
    let refused = supervisor
        .send(Report(node_report("web-0", 1)))
        .await
        .unwrap();
    assert_eq!(refused, Err(ReportRejected::NotLeader));

    supervisor.send(Leadership(true)).await.unwrap();
    supervisor.send(StateChanged(1)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(
        status(&host, id).status,
        Status::RollForwardAwaitingPulse,
        "the new leader's timer fired"
    );

    // A fresh pulse resumes it; after stepping down, nobody blocks it any more.
    host.apply(Command::Pulse {
        id,
        by: crate::domain::Actor::Pulse,
    });
    assert_eq!(status(&host, id).status, Status::RollingForward);
    supervisor.send(Leadership(false)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(
        status(&host, id).status,
        Status::RollingForward,
        "a follower must not act on deadlines"
    );
    let refused = supervisor
        .send(Report(node_report("web-0", 1)))
        .await
        .unwrap();
    assert_eq!(refused, Err(ReportRejected::NotLeader));
}

#[actix::test]
async fn a_window_change_for_weak_subscriptions_is_ticked_at_its_time_not_on_the_liveness_interval()
{
    let host = Arc::new(FakeHost::default());
    fleet(&host, 2);
    host.apply(Command::Subscribe {
        consumer: "web".into(),
        resource: "app".into(),
        mode: crate::domain::Mode::Weak,
        pin: None,
        policy: crate::domain::Policy::default(),
    });
    // Opens every 10 s for 5 s: its next change is at most 5 s away.
    host.apply(Command::CreateWindow(crate::domain::Window {
        name: "flicker".into(),
        kind: crate::domain::WindowKind::Deny,
        schedule: "*/10 * * * * *".into(),
        duration_ms: 5_000,
        time_zone: "UTC".into(),
        applies_to: crate::domain::AppliesTo::default(),
        overrun: crate::domain::Overrun::FinishInFlight,
        allow_rollback: true,
    }));
    let check_at = |host: &FakeHost| host.state.lock().unwrap().weak_gate().check_at;
    let first = check_at(&host).expect("a change recorded");
    // The liveness interval is 7.5 s (a quarter of the node timeout): longer than the wait for the change.
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    supervisor.send(StateChanged(1)).await.unwrap();
    wait_until(
        "the Tick is proposed at the recorded change",
        Duration::from_millis(first.saturating_sub(wall_ms()) + 2_000),
        || host.count(|c| matches!(c, Command::Tick)) >= 1,
    )
    .await;
    let next = check_at(&host).expect("the next change recorded");
    assert!(next > first, "the tick judged the windows again");
    // The commit's state change re-arms the timer at the next change.
    supervisor.send(StateChanged(2)).await.unwrap();
    wait_until(
        "the next change is ticked at its time too",
        Duration::from_millis(next.saturating_sub(wall_ms()) + 2_000),
        || host.count(|c| matches!(c, Command::Tick)) >= 2,
    )
    .await;
}
