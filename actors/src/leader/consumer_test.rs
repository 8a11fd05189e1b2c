//! The consumer actor: heartbeats stay off the log, changes are batched, the queue bound refuses new
//! nodes only, a report follows a change being committed, and a change keeps its report's sender.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use actix::Actor as _;

use super::super::messages::{Report, ReportBatch, ReportRejected};
use super::super::testkit::*;
use super::ConsumerActor;
use crate::domain::{Actor, Command, NodeReport};

#[actix::test]
async fn heartbeats_stay_off_the_log_and_changes_are_batched() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    let actor = ConsumerActor::new("web".into(), host.clone()).start();
    let before = host.count(|c| matches!(c, Command::ReportNodes(_)));
    for _ in 0..5 {
        actor
            .send(Report(node_report("web-0", 1)))
            .await
            .unwrap()
            .unwrap();
    }
    assert_eq!(
        host.count(|c| matches!(c, Command::ReportNodes(_))),
        before,
        "heartbeats reached the log"
    );

    host.stalled.store(true, Ordering::SeqCst);
    actor
        .send(Report(node_report("web-0", 2)))
        .await
        .unwrap()
        .unwrap(); // in flight
    actor
        .send(Report(node_report("web-1", 2)))
        .await
        .unwrap()
        .unwrap(); // pending
    actor
        .send(Report(node_report("web-2", 2)))
        .await
        .unwrap()
        .unwrap(); // pending, same batch
    let proposals = host.count(|c| matches!(c, Command::ReportNodes(_)));
    assert_eq!(proposals, before + 1, "one proposal in flight at a time");
}

#[actix::test]
async fn a_full_queue_refuses_new_nodes_but_replaces_waiting_ones() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    host.stalled.store(true, Ordering::SeqCst);
    let actor = ConsumerActor::with_limit("web".into(), host.clone(), 1).start();
    actor
        .send(Report(node_report("web-0", 2)))
        .await
        .unwrap()
        .unwrap(); // in flight
    actor
        .send(Report(node_report("web-1", 2)))
        .await
        .unwrap()
        .unwrap(); // fills the queue
    let refused = actor.send(Report(node_report("web-2", 2))).await.unwrap();
    assert_eq!(
        refused,
        Err(ReportRejected::Busy {
            consumer: "web".into(),
            pending: 1,
            limit: 1
        })
    );
    // web-1 is already waiting: its newer change replaces the old one instead of being refused.
    assert_eq!(
        actor.send(Report(node_report("web-1", 1))).await.unwrap(),
        Ok(())
    );
}

#[actix::test]
async fn a_batch_past_the_queue_bound_refuses_only_the_nodes_that_do_not_fit() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 4);
    host.stalled.store(true, Ordering::SeqCst);
    let actor = ConsumerActor::with_limit("web".into(), host.clone(), 2).start();
    let answers = actor
        .send(ReportBatch(vec![
            node_report("web-0", 2),
            node_report("web-1", 2),
            node_report("web-2", 2),
            node_report("web-3", 1), // a heartbeat: always taken
        ]))
        .await
        .unwrap();
    assert_eq!(answers[..2], [Ok(()), Ok(())]);
    assert_eq!(
        answers[2],
        Err(ReportRejected::Busy {
            consumer: "web".into(),
            pending: 2,
            limit: 2
        })
    );
    assert_eq!(answers[3], Ok(()));
    assert_eq!(
        host.count(|c| matches!(c, Command::ReportNodes(_))),
        1,
        "the two changes that fit share one proposal, in flight"
    );
}

#[actix::test]
async fn a_report_back_to_the_applied_state_follows_a_change_being_committed() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    host.held.store(true, Ordering::SeqCst);
    let actor = ConsumerActor::new("web".into(), host.clone()).start();
    let report = |v| actor.send(Report(node_report("web-0", v)));
    report(2).await.unwrap().unwrap(); // a change, in flight (held)
                                       // Equal to the applied state (1), but the change in flight is about to overwrite it.
    report(1).await.unwrap().unwrap();
    host.release.0.add_permits(2);
    for _ in 0..100 {
        if host.count(|c| matches!(c, Command::ReportNodes(_))) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let state = host.state.lock().unwrap();
    assert_eq!(
        state.node("web-0").unwrap().resources["app"].current,
        Some(1),
        "the node's last report was lost"
    );
}

#[actix::test]
async fn a_report_out_of_bounds_is_refused_alone_and_the_batch_goes_on() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    let actor = ConsumerActor::new("web".into(), host.clone()).start();
    let before = super::super::ingest_stats::snapshot().refused;
    let mut bad = node_report("web-1", 2);
    bad.resources.insert("made-up".into(), Default::default());
    let answers = actor
        .send(ReportBatch(vec![
            node_report("web-0", 2),
            bad,
            node_report("web-2", 2),
        ]))
        .await
        .unwrap();
    assert_eq!(answers[0], Ok(()));
    assert_eq!(answers[2], Ok(()));
    match &answers[1] {
        Err(ReportRejected::Invalid { node, reason }) => {
            assert_eq!(node, "web-1");
            assert!(reason.contains("made-up"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(super::super::ingest_stats::snapshot().refused - before, 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let state = host.state.lock().unwrap();
    for node in ["web-0", "web-2"] {
        assert_eq!(state.node(node).unwrap().resources["app"].current, Some(2));
    }
    assert_eq!(
        state.node("web-1").unwrap().resources["app"].current,
        Some(1)
    );
}

#[actix::test]
async fn batches_heavy_with_errors_are_paced_and_coalesce_meanwhile() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    // 2 KB of errors per second: a 1 KB error pays for half a second.
    let actor = ConsumerActor::with_byte_rate("web".into(), host.clone(), 2_000).start();
    let before = host.count(|c| matches!(c, Command::ReportNodes(_)));
    let failed = |node: &str, round: usize| {
        let mut r = node_report(node, 2);
        let error = format!("round {round} {}", "x".repeat(990));
        r.resources
            .get_mut("app")
            .unwrap()
            .versions
            .get_mut(&2)
            .unwrap()
            .error = Some(error);
        r
    };
    actor
        .send(Report(failed("web-0", 0)))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    for round in 1..=5 {
        actor
            .send(Report(failed("web-1", round)))
            .await
            .unwrap()
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        host.count(|c| matches!(c, Command::ReportNodes(_))) - before,
        1,
        "the second batch waits for the first one's error bytes"
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        host.count(|c| matches!(c, Command::ReportNodes(_))) - before,
        2
    );
    let state = host.state.lock().unwrap();
    let error = state.node("web-1").unwrap().resources["app"]
        .versions
        .get(&2)
        .and_then(|v| v.error.clone())
        .unwrap();
    assert!(
        error.starts_with("round 5 "),
        "only the latest report of web-1 is written"
    );
}

#[actix::test]
async fn a_change_keeps_its_senders_name_and_a_newer_reports_sender_wins() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 2);
    host.held.store(true, Ordering::SeqCst);
    let actor = ConsumerActor::new("web".into(), host.clone()).start();
    let from = |node: &str, token: &str| NodeReport {
        by: Actor::Token(token.into()),
        ..node_report(node, 2)
    };
    let before = host.count(|c| matches!(c, Command::ReportNodes(_)));
    for (node, token) in [
        ("web-0", "agent-a"),
        ("web-1", "agent-a"),
        ("web-1", "agent-b"),
    ] {
        // web-0's change goes in flight (held); web-1's waits, then its newer report replaces it.
        actor
            .send(Report(from(node, token)))
            .await
            .unwrap()
            .unwrap();
    }
    host.release.0.add_permits(2);
    wait_until("both batches proposed", Duration::from_secs(5), || {
        host.count(|c| matches!(c, Command::ReportNodes(_))) == before + 2
    })
    .await;
    let sent: Vec<Vec<(String, String)>> = host
        .proposals
        .lock()
        .unwrap()
        .iter()
        .filter_map(|c| match c {
            Command::ReportNodes(reports) => Some(
                reports
                    .iter()
                    .map(|r| (r.node.clone(), r.by.name().to_string()))
                    .collect(),
            ),
            _ => None,
        })
        .skip(before)
        .collect();
    let pair = |n: &str, t: &str| vec![(n.to_string(), t.to_string())];
    assert_eq!(
        sent,
        vec![pair("web-0", "agent-a"), pair("web-1", "agent-b")]
    );
}

#[actix::test]
async fn a_batch_carries_a_bounded_amount_of_error_text_and_the_rest_follows() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 10);
    host.held.store(true, Ordering::SeqCst);
    // About 1 KB of error per report: two fit in a batch of 2,500 bytes, a third does not.
    let actor = ConsumerActor::with_batch_error_bytes("web".into(), host.clone(), 2_500).start();
    let before = host.count(|c| matches!(c, Command::ReportNodes(_)));
    let failed = |node: &str| {
        let mut r = node_report(node, 2);
        r.resources
            .get_mut("app")
            .unwrap()
            .versions
            .get_mut(&2)
            .unwrap()
            .error = Some(format!("{node} {}", "x".repeat(1000)));
        r
    };
    // web-0's batch is being committed (held) while the nine others arrive.
    for i in 0..10 {
        actor
            .send(Report(failed(&format!("web-{i}"))))
            .await
            .unwrap()
            .unwrap();
    }
    let failed_nodes = || {
        let state = host.state.lock().unwrap();
        (0..10)
            .filter(|i| {
                state.node(&format!("web-{i}")).unwrap().resources["app"]
                    .versions
                    .get(&2)
                    .is_some_and(|v| v.error.is_some())
            })
            .count()
    };
    for _ in 0..400 {
        if failed_nodes() == 10 {
            break;
        }
        host.release.0.add_permits(1);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(failed_nodes(), 10, "a node's change was lost");
    let batches: Vec<Vec<usize>> = host.proposals.lock().unwrap()[before..]
        .iter()
        .filter_map(|c| match c {
            Command::ReportNodes(reports) => Some(
                reports
                    .iter()
                    .map(|r| {
                        r.resources["app"].versions[&2]
                            .error
                            .as_ref()
                            .map_or(0, String::len)
                    })
                    .collect(),
            ),
            _ => None,
        })
        .collect();
    for batch in &batches {
        assert!(
            batch.len() == 1 || batch.iter().sum::<usize>() <= 2_500,
            "a batch of {} error bytes: {batches:?}",
            batch.iter().sum::<usize>()
        );
    }
    assert_eq!(batches.iter().map(Vec::len).sum::<usize>(), 10);
}

#[actix::test]
async fn nodes_that_keep_changing_do_not_hold_back_the_others_waiting() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 6);
    host.held.store(true, Ordering::SeqCst);
    let actor = ConsumerActor::with_batch_error_bytes("web".into(), host.clone(), 2_500).start();
    let failed = |node: &str, round: usize| {
        let mut r = node_report(node, 2);
        r.resources
            .get_mut("app")
            .unwrap()
            .versions
            .get_mut(&2)
            .unwrap()
            .error = Some(format!("{node} round {round} {}", "x".repeat(1000)));
        r
    };
    for i in 0..6 {
        actor
            .send(Report(failed(&format!("web-{i}"), 0)))
            .await
            .unwrap()
            .unwrap();
    }
    let written = |node: &str| {
        host.state.lock().unwrap().node(node).unwrap().resources["app"]
            .versions
            .get(&2)
            .is_some_and(|v| v.error.is_some())
    };
    // web-0 and web-1 (first in id order) change again before every batch: two of them fill one.
    for round in 1..=40 {
        if (2..6).all(|i| written(&format!("web-{i}"))) {
            break;
        }
        for node in ["web-0", "web-1"] {
            actor
                .send(Report(failed(node, round)))
                .await
                .unwrap()
                .unwrap();
        }
        host.release.0.add_permits(1);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for i in 2..6 {
        assert!(written(&format!("web-{i}")), "web-{i} was never written");
    }
}
