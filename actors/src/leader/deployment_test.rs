//! The deployment actor: its one timer fires at the deadline and proposes a tick for its deployment alone.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use actix::Actor as _;

use super::super::messages::ArmedDeadline;
use super::super::testkit::*;
use super::DeploymentActor;
use crate::domain::{Command, PausedBy, Status};

#[actix::test]
async fn timer_blocks_a_coordinated_deployment_within_100ms_of_its_deadline() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    let id = coordinated(&host, 300);
    host.apply(Command::Pulse {
        id,
        by: crate::domain::Actor::Pulse,
    });
    let deadline = host.state.lock().unwrap().deployment_deadline(id).unwrap();
    let actor = DeploymentActor::new(id, host.clone()).start();
    assert_eq!(
        actor.send(ArmedDeadline).await.unwrap(),
        Some(deadline),
        "armed at the pulse deadline"
    );
    // A bare timer for the same deadline: on a loaded machine every timer fires late, and the bound
    // below is on what the actor adds to that, not on the machine's scheduling.
    let reference = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(deadline.saturating_sub(wall_ms()))).await;
        wall_ms()
    });

    let timer_fired_at = reference.await.unwrap().max(deadline);
    // Wait for the actor's proposal to apply (a loaded machine may take a while; the bound is checked on
    // the event's time, not here).
    wait_until(
        "the deployment was never blocked",
        Duration::from_secs(5),
        || status(&host, id).status == Status::RollForwardAwaitingPulse,
    )
    .await;
    let view = status(&host, id);
    assert_eq!(view.status, Status::RollForwardAwaitingPulse);
    assert_eq!(view.paused_by, Some(PausedBy::PulseTimeout));
    let blocked_at = view
        .events
        .iter()
        .rev()
        .find(|e| e.status == Some(Status::RollForwardAwaitingPulse))
        .expect("a transition event")
        .at;
    assert!(
        blocked_at >= deadline && blocked_at.saturating_sub(timer_fired_at) <= 100,
        "acted {}ms after the deadline, {}ms after a bare timer for it fired",
        blocked_at - deadline,
        blocked_at.saturating_sub(timer_fired_at)
    );
    // Blocked: no deadline left, so no more ticks.
    let ticks = host.ticks.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        host.ticks.load(Ordering::SeqCst),
        ticks,
        "a blocked deployment must not keep ticking"
    );
    assert_eq!(actor.send(ArmedDeadline).await.unwrap(), None);
}
