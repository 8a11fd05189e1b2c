use crate::testing::*;
use crate::*;

#[test]
fn awaiting_a_pulse_freezes_the_progress_deadline_without_resetting_it() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        rolling(1, 1)(s);
        s.pulse_interval_ms = Some(1_000);
        s.pacing = Some(Pacing {
            progress_deadline_ms: Some(10_000),
            ..Pacing::default()
        });
    });
    assert_eq!(k.status(id), Status::RollForwardAwaitingPulse);
    k.now = 2_000;
    k.pulse(id);
    let progress = |k: &Kit| {
        k.s.deployment_summary(id, k.now)
            .unwrap()
            .pace
            .and_then(|p| p.progress_deadline)
    };
    assert_eq!(
        progress(&k),
        Some(12_000),
        "frozen at 10 s until the first pulse"
    );
    k.tick_to(3_000);
    assert_eq!(k.status(id), Status::RollForwardAwaitingPulse);
    k.now = 8_000;
    k.pulse(id);
    assert_eq!(progress(&k), Some(17_000), "9 s were left at 3 s");
}

#[test]
fn a_restored_state_keeps_every_pacing_clock() {
    let mut k = Kit::new(3);
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::Batch {
            sizes: vec![1],
            autopause: false,
        });
        s.pacing = Some(Pacing {
            bake_ms: Some(1_000),
            progress_deadline_ms: Some(50_000),
            ..Pacing::default()
        });
    });
    k.installed(0);
    k.holding(1);
    let restored = ClusterState::from_snapshot_bytes(&k.s.snapshot_bytes()).unwrap();
    assert_eq!(restored.deployment_deadline(id), Some(1_100));
    assert_eq!(restored.deployment_map()[&id].pace, k.d(id).pace);
}
