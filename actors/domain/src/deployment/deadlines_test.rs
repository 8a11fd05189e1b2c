use crate::testing::*;
use crate::*;

fn one_at_a_time(pacing: Pacing) -> impl FnOnce(&mut DeploymentSpec) {
    move |s| {
        s.strategy = Some(Strategy::Batch {
            sizes: vec![1],
            autopause: false,
        });
        s.max_failed_nodes = Some(FailedNodes::Count(1));
        s.pacing = Some(pacing);
    }
}

fn healthy(ms: u64) -> Pacing {
    Pacing {
        healthy_deadline_ms: Some(ms),
        ..Pacing::default()
    }
}

#[test]
fn a_node_past_its_healthy_deadline_fails_and_frees_its_batch() {
    let mut k = Kit::new(3);
    let id = k.start_with(one_at_a_time(healthy(5_000)));
    k.holding(0);
    assert_eq!(k.s.deployment_deadline(id), Some(5_100));
    k.tick_to(5_099);
    assert_eq!(
        k.phases(id)[..2],
        [NodePhase::Installing, NodePhase::Pending]
    );
    k.tick_to(5_100);
    assert_eq!(
        k.phases(id)[..2],
        [NodePhase::Failed, NodePhase::Installing],
        "the stuck node counts as failed and the next batch goes"
    );
    let failed = k
        .d(id)
        .events
        .iter()
        .find(|e| e.kind == EventKind::Failed)
        .unwrap()
        .clone();
    assert_eq!(failed.by, Actor::Timer);
    assert!(failed
        .message
        .unwrap()
        .contains("healthy deadline of 5000 ms"));
}

#[test]
fn the_healthy_deadline_counts_from_the_install_start_not_the_download() {
    let mut k = Kit::new(2);
    let id = k.start_with(one_at_a_time(healthy(5_000)));
    assert_eq!(k.d(id).node_deadline(0), None, "still downloading");
    k.now = 3_000;
    k.holding(0);
    assert_eq!(k.d(id).node_deadline(0), Some(8_000));
    k.tick_to(7_999);
    assert_eq!(k.phases(id)[0], NodePhase::Installing);
    k.tick_to(8_000);
    assert_eq!(k.phases(id)[0], NodePhase::Failed);
}

#[test]
fn a_node_past_its_deadline_uses_its_retries() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        one_at_a_time(healthy(5_000))(s);
        s.max_failures_per_node = Some(1);
    });
    k.holding(0);
    k.tick_to(5_100);
    assert_eq!(k.phases(id)[0], NodePhase::Installing, "one retry left");
    assert_eq!(k.d(id).nodes[0].failures, 1);
    assert_eq!(k.d(id).node_deadline(0), Some(10_100), "a new deadline");
    k.tick_to(10_100);
    assert_eq!(k.phases(id)[0], NodePhase::Failed);
}

#[test]
fn the_default_healthy_deadline_is_ten_minutes_past_min_healthy() {
    let mut k = Kit::new(1);
    let id = k.start_with(|s| s.min_healthy_ms = Some(60_000));
    k.holding(0);
    assert_eq!(k.d(id).node_deadline(0), Some(100 + 600_000 + 60_000));
    k.installed(0);
    assert_eq!(k.phases(id)[0], NodePhase::Watching);
    assert_eq!(
        k.d(id).node_deadline(0),
        Some(100 + 600_000 + 60_000),
        "the watch counts within the same deadline"
    );
    k.tick_to(100 + 60_000);
    assert_eq!(k.status(id), Status::RolledForward);
    assert_eq!(k.d(id).node_deadline(0), None);
}

#[test]
fn a_download_deadline_bounds_an_admitted_node_without_the_version() {
    let mut k = Kit::new(2);
    let id = k.start_with(one_at_a_time(Pacing {
        download_deadline_ms: Some(1_000),
        ..Pacing::default()
    }));
    assert_eq!(k.d(id).node_deadline(0), Some(1_100));
    k.tick_to(1_100);
    assert_eq!(
        k.phases(id)[..2],
        [NodePhase::Failed, NodePhase::Installing]
    );
    let failed = k.d(id).events.iter().find(|e| e.kind == EventKind::Failed);
    assert!(failed
        .unwrap()
        .message
        .as_deref()
        .unwrap()
        .contains("download deadline"));
}

#[test]
fn past_the_progress_deadline_the_deployment_takes_the_failure_path() {
    let mut k = Kit::new(3);
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.pacing = Some(Pacing {
            progress_deadline_ms: Some(10_000),
            ..Pacing::default()
        });
    });
    k.now = 5_000;
    k.installed(0);
    assert_eq!(
        k.s.deployment_summary(id, 5_000)
            .unwrap()
            .pace
            .unwrap()
            .progress_deadline,
        Some(15_000),
        "a success resets it"
    );
    k.tick_to(14_999);
    assert_eq!(k.status(id), Status::RollingForward);
    k.tick_to(15_000);
    assert_eq!(k.status(id), Status::RollingBack);
    let last = k.d(id).events.iter().rfind(|e| e.kind == EventKind::Status);
    let last = last.unwrap();
    assert_eq!(last.by, Actor::Timer);
    assert!(last
        .message
        .as_deref()
        .unwrap()
        .contains("progress deadline"));
}

#[test]
fn the_progress_deadline_stands_still_while_paused_and_keeps_what_it_had_left() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.pacing = Some(Pacing {
            progress_deadline_ms: Some(10_000),
            ..Pacing::default()
        });
    });
    k.now = 3_000;
    k.op_status(pause, id);
    assert_eq!(k.s.deployment_deadline(id), None, "held: nothing to time");
    k.tick_to(50_000);
    assert_eq!(k.status(id), Status::RollForwardPaused);
    k.op_status(resume, id);
    assert_eq!(
        k.s.deployment_summary(id, 50_000)
            .unwrap()
            .pace
            .unwrap()
            .progress_deadline,
        Some(50_000 + 7_100),
        "the 7.1 s it had left when paused at 3 s (started at 0.1 s)"
    );
}

#[test]
fn a_deadline_no_longer_than_min_healthy_is_refused_naming_both() {
    let mut k = Kit::new(1);
    let e = k.err(Command::StartDeployment(DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        version: Some(2),
        min_healthy_ms: Some(5_000),
        pacing: Some(healthy(4_000)),
        ..DeploymentSpec::default()
    }));
    let text = e.to_string();
    assert!(text.contains("pacing.healthy_deadline_ms = 4000"), "{text}");
    assert!(text.contains("min_healthy_ms = 5000"), "{text}");
}
