use super::*;
use crate::ErrorKind;

fn rolling(i: u32, d: u32) -> Strategy {
    Strategy::Rolling {
        install_window: i,
        download_window: d,
    }
}

#[test]
fn nothing_set_anywhere_is_rolling_one_install_two_downloads_with_rollback() {
    let s = Policy::default().settings();
    assert_eq!(s.strategy, rolling(1, 2));
    assert_eq!(
        (
            s.min_healthy_ms,
            s.max_failures_per_node,
            s.max_failed_nodes
        ),
        (0, 0, None)
    );
    assert!(s.rollback_on_failure);
    assert_eq!(s.pulse_interval_ms, None);
    assert_eq!(s.completion, Completion::default());
}

#[test]
fn the_start_wins_field_by_field_over_the_subscription() {
    let sub = Policy {
        strategy: Some(rolling(3, 4)),
        min_healthy_ms: Some(5_000),
        max_failures_per_node: Some(2),
        max_failed_nodes: Some(FailedNodes::Count(1)),
        rollback_on_failure: Some(false),
        pulse_interval_ms: Some(60_000),
        completion: Some(Completion {
            quorum: Some(0.5),
            timeout_ms: None,
            ..Default::default()
        }),
        pacing: Some(Pacing {
            bake_ms: Some(60_000),
            ..Pacing::default()
        }),
        analysis: None,
        brake: None,
        start_jitter_ms: None,
    };
    let start = Policy {
        min_healthy_ms: Some(10),
        pulse_interval_ms: Some(1_000),
        ..Policy::default()
    };
    let s = start.or(&sub).settings();
    assert_eq!(s.strategy, rolling(3, 4));
    assert_eq!(s.min_healthy_ms, 10);
    assert_eq!(s.max_failures_per_node, 2);
    assert_eq!(s.max_failed_nodes, Some(FailedNodes::Count(1)));
    assert!(!s.rollback_on_failure);
    assert_eq!(s.pulse_interval_ms, Some(1_000));
    assert_eq!(s.completion.quorum, Some(0.5));
    assert_eq!(s.pacing.bake_ms, Some(60_000), "the subscription's pacing");
}

#[test]
fn a_patch_keeps_absent_fields_clears_nulls_and_sets_values() {
    let mut p = Policy {
        strategy: Some(rolling(2, 2)),
        min_healthy_ms: Some(100),
        pulse_interval_ms: Some(9),
        ..Policy::default()
    };
    p.patch(PolicyPatch {
        pulse_interval_ms: Change::Clear,
        max_failures_per_node: Change::Set(3),
        ..PolicyPatch::default()
    });
    assert_eq!(p.strategy, Some(rolling(2, 2)), "absent: kept");
    assert_eq!(p.min_healthy_ms, Some(100), "absent: kept");
    assert_eq!(p.pulse_interval_ms, None, "null: cleared");
    assert_eq!(p.max_failures_per_node, Some(3), "value: set");
    assert_eq!(Change::from_json(Some(None::<u64>)), Change::Clear);
    assert_eq!(Change::<u64>::from_json(None), Change::Keep);
}

#[test]
fn meaningless_policies_are_refused_by_name() {
    let cases = [
        (
            Policy {
                pulse_interval_ms: Some(0),
                ..Policy::default()
            },
            "pulse_interval_ms = 0",
        ),
        (
            Policy {
                strategy: Some(rolling(0, 1)),
                ..Policy::default()
            },
            "install_window = 0",
        ),
        (
            Policy {
                completion: Some(Completion {
                    quorum: None,
                    timeout_ms: Some(0),
                    ..Default::default()
                }),
                ..Policy::default()
            },
            "completion.timeout_ms = 0",
        ),
    ];
    for (p, msg) in cases {
        let e = p.validate().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert!(e.to_string().starts_with(msg), "{e}");
    }
}
