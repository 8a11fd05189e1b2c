//! The supervisor's children: a tick only for the deployment whose deadline came, an unrelated batch
//! re-arming no actor, a new leader ticking an expired pulse countdown at once.

use std::sync::Arc;
use std::time::Duration;

use super::super::messages::{ArmedDeadline, Leadership, ListChildren, StateChanged, Told};
use super::super::testkit::*;
use crate::domain::{Command, DeploymentId, DeploymentSpec, PausedBy, Response, Status, Strategy};

/// Consumer `name` of one node `<name>-0` running v1 of `app` (besides `web`).
fn consumer(host: &FakeHost, name: &str) {
    let node = format!("{name}-0");
    host.apply(Command::CreateConsumer {
        name: name.into(),
        nodes: vec![node.clone()],
    });
    host.apply(Command::ReportNodes(vec![node_report(&node, 1)]));
}

/// A coordinated deployment of `app` v2 to `consumer`, pulsed once (its countdown runs).
fn pulsed(host: &FakeHost, consumer: &str, pulse_ms: u64) -> DeploymentId {
    let spec = DeploymentSpec {
        consumer: consumer.into(),
        resource: "app".into(),
        version: Some(2),
        strategy: Some(Strategy::AllAtOnce { fail_fast: false }),
        pulse_interval_ms: Some(pulse_ms),
        ..Default::default()
    };
    let id = match host.apply(Command::StartDeployment(spec)) {
        Response::DeploymentStarted { id, .. } => id,
        other => panic!("unexpected {other:?}"),
    };
    host.apply(Command::Pulse {
        id,
        by: crate::domain::Actor::Pulse,
    });
    id
}

fn ticks_for(host: &FakeHost, id: DeploymentId) -> usize {
    host.count(|c| matches!(c, Command::TickDeployment { id: t } if *t == id))
}

#[actix::test]
async fn a_tick_is_proposed_only_for_the_deployment_whose_deadline_came() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    consumer(&host, "api");
    let soon = pulsed(&host, "web", 200);
    let later = pulsed(&host, "api", 60_000);
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    let deadline = host
        .state
        .lock()
        .unwrap()
        .deployment_deadline(soon)
        .unwrap();
    tokio::time::sleep(Duration::from_millis(
        deadline.saturating_sub(wall_ms()) + 150,
    ))
    .await;
    assert_eq!(status(&host, soon).status, Status::RollForwardAwaitingPulse);
    assert_eq!(status(&host, later).status, Status::RollingForward);
    assert_eq!(ticks_for(&host, soon), 1, "one tick, for its deployment");
    assert_eq!(
        ticks_for(&host, later),
        0,
        "no tick for the other deployment"
    );
    assert_eq!(
        host.count(|c| matches!(c, Command::Tick)),
        0,
        "no global tick"
    );
}

#[actix::test]
async fn an_unrelated_batch_leaves_every_deployment_actor_untouched() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    consumer(&host, "api");
    let web = pulsed(&host, "web", 60_000);
    let api = pulsed(&host, "api", 60_000);
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    let children = supervisor.send(ListChildren).await.unwrap();
    let ids: Vec<DeploymentId> = children.deployments.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, vec![web, api]);
    let told = || async {
        let mut out = Vec::new();
        for (_, addr) in &children.deployments {
            out.push(addr.send(Told).await.unwrap());
        }
        out
    };
    let before = told().await;
    assert_eq!(before, vec![1, 1], "each actor armed once at its start");

    // A batch that touches no deployment: a new resource and a node of no consumer reporting.
    host.apply(Command::CreateResource { name: "db".into() });
    host.apply(Command::ReportNodes(vec![node_report("stray-0", 1)]));
    supervisor.send(StateChanged(2)).await.unwrap();
    assert_eq!(told().await, before, "an unrelated batch re-armed an actor");

    // A pulse moves one deadline: only that deployment's actor hears of it.
    host.apply(Command::Pulse {
        id: api,
        by: crate::domain::Actor::Pulse,
    });
    supervisor.send(StateChanged(3)).await.unwrap();
    assert_eq!(told().await, vec![1, 2]);
    let armed = children.deployments[1].1.send(ArmedDeadline).await.unwrap();
    assert_eq!(armed, host.state.lock().unwrap().deployment_deadline(api));
}

#[actix::test]
async fn a_new_leader_ticks_at_once_for_a_pulse_countdown_that_ran_out_without_a_leader() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    consumer(&host, "api");
    let expired = pulsed(&host, "web", 100);
    let running = pulsed(&host, "api", 60_000);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let now = wall_ms();
    assert_eq!(
        host.state.lock().unwrap().rearm_pulses(now),
        vec![expired],
        "the countdown ran out while no leader watched"
    );
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    for _ in 0..100 {
        if status(&host, expired).status == Status::RollForwardAwaitingPulse {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let view = status(&host, expired);
    assert_eq!(
        (view.status, view.paused_by),
        (
            Status::RollForwardAwaitingPulse,
            Some(PausedBy::PulseTimeout)
        )
    );
    assert_eq!(ticks_for(&host, expired), 1);
    assert_eq!(ticks_for(&host, running), 0);
    assert_eq!(status(&host, running).status, Status::RollingForward);
}
