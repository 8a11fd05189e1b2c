//! Report routing and liveness through the supervisor: reports reach their consumers' actors in
//! order, silent nodes are marked inactive once, and a report right after its consumer's creation is
//! applied.

use std::sync::Arc;
use std::time::Duration;

use super::super::messages::{Leadership, Report, ReportBatch, ReportRejected, StateChanged};
use super::super::testkit::*;
use crate::domain::Command;

#[actix::test]
async fn silent_nodes_are_marked_inactive() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 2);
    let supervisor = leader(&host, Duration::from_millis(200));
    supervisor.send(Leadership(true)).await.unwrap();
    for _ in 0..8 {
        supervisor
            .send(Report(node_report("web-0", 1)))
            .await
            .unwrap()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    let state = host.state.lock().unwrap();
    assert!(
        state.node("web-0").unwrap().active,
        "a reporting node stays active"
    );
    assert!(
        !state.node("web-1").unwrap().active,
        "a silent node is marked inactive"
    );
}

#[actix::test]
async fn a_node_in_three_consumers_stays_active_while_it_reports_and_goes_inactive_once() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    for name in ["api", "batch"] {
        host.apply(Command::CreateConsumer {
            name: name.into(),
            nodes: vec!["web-0".into()],
        });
    }
    let supervisor = leader(&host, Duration::from_millis(200));
    supervisor.send(Leadership(true)).await.unwrap();
    supervisor.send(StateChanged(1)).await.unwrap();
    // Reports every 60 ms for 4 node timeouts: the node must never be marked inactive.
    for _ in 0..14 {
        supervisor
            .send(Report(node_report("web-0", 1)))
            .await
            .unwrap()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(
            host.state.lock().unwrap().node("web-0").unwrap().active,
            "a reporting node in three consumers was marked inactive"
        );
    }
    assert_eq!(host.count(|c| matches!(c, Command::MarkInactive { .. })), 0);

    // Silent: marked inactive after the timeout, by one proposal naming it once.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!host.state.lock().unwrap().node("web-0").unwrap().active);
    let marks: Vec<Command> = host
        .proposals
        .lock()
        .unwrap()
        .iter()
        .filter(|c| matches!(c, Command::MarkInactive { .. }))
        .cloned()
        .collect();
    assert_eq!(
        marks,
        vec![Command::MarkInactive {
            nodes: vec!["web-0".into()]
        }]
    );
}

#[actix::test]
async fn a_batch_is_routed_per_consumer_and_answered_per_report_in_order() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    host.apply(Command::CreateConsumer {
        name: "db".into(),
        nodes: vec!["db-0".into()],
    });
    let supervisor = leader(&host, Duration::from_secs(30));
    let batch = || {
        ReportBatch(vec![
            node_report("web-0", 2),
            node_report("db-0", 1),
            node_report("stray", 1),
            node_report("web-1", 2),
        ])
    };
    let refused = supervisor.send(batch()).await.unwrap();
    assert_eq!(refused, vec![Err(ReportRejected::NotLeader); 4]);

    supervisor.send(Leadership(true)).await.unwrap();
    let before = host.count(|c| matches!(c, Command::ReportNodes(_)));
    let answers = supervisor.send(batch()).await.unwrap();
    assert_eq!(answers, vec![Ok(()); 4]);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let state = host.state.lock().unwrap();
    for (node, version) in [("web-0", 2), ("web-1", 2), ("db-0", 1)] {
        let view = state.node(node).unwrap_or_else(|| panic!("{node} unknown"));
        assert_eq!(view.resources["app"].current, Some(version), "{node}");
    }
    // A node in no consumer is answered but never written to the log.
    assert!(state.node("stray").is_none());
    drop(state);
    // web's two changes share one proposal, db's one its own; the stray node none.
    assert_eq!(
        host.count(|c| matches!(c, Command::ReportNodes(_))) - before,
        2
    );
}

#[actix::test]
async fn a_report_right_after_its_consumer_is_created_is_applied() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    // The consumer is applied, but the supervisor has not been told yet (`StateChanged` comes
    // asynchronously from the applied-index watcher): the report arrives in between.
    host.apply(Command::CreateConsumer {
        name: "late".into(),
        nodes: vec!["late-0".into()],
    });
    supervisor
        .send(Report(node_report("late-0", 1)))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let state = host.state.lock().unwrap();
    let node = state.node("late-0").expect("late-0 is a consumer node");
    assert!(node.active, "an answered report was never applied");
    assert_eq!(node.resources["app"].current, Some(1));
}

#[actix::test]
async fn made_up_node_ids_never_enter_the_liveness_table() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 2);
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    let mut batch: Vec<_> = (0..3_000)
        .map(|i| node_report(&format!("ghost-{i}"), 1))
        .collect();
    batch.push(node_report("web-0", 1));
    let answers = supervisor.send(ReportBatch(batch)).await.unwrap();
    assert!(answers.iter().all(Result::is_ok));
    assert_eq!(
        super::super::ingest_stats::snapshot().liveness,
        1,
        "only the consumer's node is recorded"
    );
}
