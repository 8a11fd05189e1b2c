//! Housekeeping through the supervisor: silent nodes in no consumer are forgotten, and a deployment
//! that ends while a `Prune` is committed is pruned after it.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use actix::Actor as _;

use super::super::messages::{Leadership, Report, StateChanged};
use super::super::testkit::*;
use super::super::{ProposeError, Supervisor, SupervisorConfig, DEFAULT_DEPLOYMENT_HISTORY};
use super::Housekeeping;
use crate::domain::{Command, DeploymentId, DeploymentSpec, Response};

#[actix::test]
async fn nodes_that_left_every_consumer_and_stayed_silent_are_forgotten() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    host.apply(Command::UpdateConsumerNodes {
        name: "web".into(),
        add: vec![],
        remove: vec!["web-1".into(), "web-2".into()],
    });
    let supervisor = Supervisor::new(
        host.clone(),
        SupervisorConfig {
            node_timeout: Duration::from_millis(100),
            deployment_history: DEFAULT_DEPLOYMENT_HISTORY,
            forget_nodes_after: Duration::from_millis(300),
        },
    )
    .start();
    supervisor.send(Leadership(true)).await.unwrap();
    // web-2 keeps reporting though it left the consumer; web-1 is silent.
    for _ in 0..12 {
        for node in ["web-0", "web-2"] {
            supervisor
                .send(Report(node_report(node, 1)))
                .await
                .unwrap()
                .ok();
        }
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    let forgets = host.count(|c| matches!(c, Command::ForgetNodes { .. }));
    let state = host.state.lock().unwrap();
    assert!(
        state.node("web-1").is_none(),
        "a silent node in no consumer is forgotten"
    );
    assert!(state.node("web-2").is_some(), "a reporting node is kept");
    assert!(
        state.node("web-0").is_some(),
        "a node of a consumer is kept"
    );
    assert_eq!(forgets, 1, "one ForgetNodes, nothing proposed again for it");
}

/// Starts a deployment of version 2 on "web" and aborts it: one more terminal deployment.
fn ended_deployment(host: &FakeHost) -> DeploymentId {
    let spec = DeploymentSpec {
        consumer: "web".into(),
        resource: "app".into(),
        version: Some(2),
        ..Default::default()
    };
    let id = match host.apply(Command::StartDeployment(spec)) {
        Response::DeploymentStarted { id, .. } => id,
        other => panic!("unexpected {other:?}"),
    };
    host.apply(Command::Abort {
        id,
        message: None,
        by: crate::domain::Actor::Pulse,
    });
    id
}

#[actix::test]
async fn a_deployment_that_ends_while_a_prune_is_committed_is_pruned_after_it() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 2);
    let (first, second) = (ended_deployment(&host), ended_deployment(&host));
    host.held.store(true, Ordering::SeqCst);
    host.answer_held.store(true, Ordering::SeqCst);
    let supervisor = Supervisor::new(
        host.clone(),
        SupervisorConfig {
            node_timeout: Duration::from_secs(60),
            deployment_history: 1,
            forget_nodes_after: Duration::ZERO,
        },
    )
    .start();
    // Two finished, one kept: a Prune is proposed and applied (the first is pruned) ...
    supervisor.send(Leadership(true)).await.unwrap();
    host.release.0.add_permits(1);
    wait_until(
        "the first Prune was never applied",
        Duration::from_secs(5),
        || status(&host, first).pruned,
    )
    .await;
    // ... but its answer has not reached the supervisor when a third deployment ends.
    let third = ended_deployment(&host);
    supervisor.send(StateChanged(0)).await.unwrap();
    assert!(!status(&host, second).pruned);
    // The answer arrives: the supervisor looks again and prunes the second as well.
    host.release.0.add_permits(1);
    host.answer.0.add_permits(2);
    wait_until(
        "the deployment that ended during the Prune was never pruned",
        Duration::from_secs(5),
        || status(&host, second).pruned,
    )
    .await;
    assert!(
        !status(&host, third).pruned,
        "the newest one keeps its detail"
    );
    let prunes = host.count(|c| matches!(c, Command::Prune { .. }));
    assert_eq!(prunes, 2, "one Prune per look, no more");
}

#[test]
fn one_prune_at_a_time_and_a_failed_one_is_tried_again() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    ended_deployment(&host);
    ended_deployment(&host);
    let mut housekeeping = Housekeeping::new(host.clone(), Duration::ZERO, 1);
    housekeeping.leadership_began();
    let prune = Some(Command::Prune { keep: 1 });
    assert_eq!(housekeeping.prune(), prune, "two finished, one kept");
    assert_eq!(housekeeping.prune(), None, "one Prune at a time");
    let lost = Err(ProposeError::Unavailable("leadership lost".into()));
    assert!(
        !housekeeping.pruned(lost),
        "a failed Prune: no look at once"
    );
    assert_eq!(
        housekeeping.prune(),
        prune,
        "a failed Prune is tried again though no deployment ended since"
    );
    assert!(
        housekeeping.pruned(Ok(Response::Done)),
        "look again at once"
    );
    assert_eq!(
        housekeeping.prune(),
        None,
        "nothing ended since the last look"
    );
}
