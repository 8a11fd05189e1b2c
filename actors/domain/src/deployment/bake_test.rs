use crate::testing::*;
use crate::*;

fn batches_of(size: u32, bake_ms: u64) -> impl FnOnce(&mut DeploymentSpec) {
    move |s| {
        s.strategy = Some(Strategy::Batch {
            sizes: vec![size],
            autopause: false,
        });
        s.pacing = Some(Pacing {
            bake_ms: Some(bake_ms),
            ..Pacing::default()
        });
    }
}

#[test]
fn the_next_batch_waits_the_bake_time_after_a_batch_succeeded() {
    let mut k = Kit::new(4);
    let id = k.start_with(batches_of(2, 1_000));
    k.installed(0);
    k.installed(1);
    assert_eq!(
        k.phases(id)[2..],
        [NodePhase::Pending, NodePhase::Pending],
        "batch 2 waits for the bake"
    );
    assert_eq!(k.d(id).baking_until(), Some(1_100));
    assert_eq!(k.s.deployment_deadline(id), Some(1_100), "a timer ends it");
    let summary = k.s.deployment_summary(id, 500).unwrap();
    assert_eq!(summary.pace.unwrap().baking_until, Some(1_100));
    let baking = k.d(id).events.iter().next_back().unwrap().clone();
    assert_eq!(baking.kind, EventKind::Bake);
    assert!(baking.message.unwrap().contains("batch 1 finished"));
    k.tick_to(1_099);
    assert_eq!(k.phases(id)[2], NodePhase::Pending);
    k.tick_to(1_100);
    assert_eq!(
        k.phases(id)[2..],
        [NodePhase::Installing, NodePhase::Installing]
    );
    k.installed(2);
    k.installed(3);
    assert_eq!(
        k.status(id),
        Status::RolledForward,
        "no bake after the last batch"
    );
}

#[test]
fn a_bake_is_frozen_while_the_deployment_is_paused() {
    let mut k = Kit::new(3);
    let id = k.start_with(batches_of(1, 1_000));
    k.installed(0);
    assert_eq!(k.d(id).baking_until(), Some(1_100));
    k.now = 600;
    k.op_status(pause, id);
    k.tick_to(5_000);
    assert_eq!(k.phases(id)[1], NodePhase::Pending);
    assert_eq!(
        k.s.deployment_summary(id, 5_000)
            .unwrap()
            .pace
            .unwrap()
            .bake_left_ms,
        Some(500)
    );
    k.op_status(resume, id);
    assert_eq!(k.d(id).baking_until(), Some(5_500), "500 ms were left");
    k.tick_to(5_499);
    assert_eq!(k.phases(id)[1], NodePhase::Pending);
    k.tick_to(5_500);
    assert_eq!(k.phases(id)[1], NodePhase::Installing);
}

#[test]
fn rolling_with_a_bake_goes_in_waves_of_the_install_window() {
    let mut k = Kit::new(4);
    let id = k.start_with(|s| {
        rolling(2, 2)(s);
        s.pacing = Some(Pacing {
            bake_ms: Some(1_000),
            ..Pacing::default()
        });
    });
    k.installed(0);
    assert_eq!(
        k.phases(id)[2],
        NodePhase::Downloading,
        "the wave is not over: node 2 only prefetches"
    );
    k.installed(1);
    assert_eq!(k.d(id).baking_until(), Some(1_100));
    k.tick_to(1_100);
    assert_eq!(
        k.phases(id)[2..],
        [NodePhase::Installing, NodePhase::Installing]
    );
}

#[test]
fn a_bake_needs_more_than_one_batch() {
    let mut k = Kit::new(2);
    let e = k.err(Command::StartDeployment(DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        version: Some(2),
        strategy: Some(Strategy::AllAtOnce { fail_fast: false }),
        pacing: Some(Pacing {
            bake_ms: Some(1_000),
            ..Pacing::default()
        }),
        ..DeploymentSpec::default()
    }));
    assert!(
        e.to_string().contains("all_at_once has a single batch"),
        "{e}"
    );
}
