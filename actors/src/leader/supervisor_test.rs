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
