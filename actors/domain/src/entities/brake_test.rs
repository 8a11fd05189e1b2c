use super::*;

fn brake(max_failed: FailedNodes, window_ms: u64) -> Brake {
    Brake {
        enabled: true,
        max_failed,
        window_ms,
        min_failed: DEFAULT_MIN_FAILED,
    }
}

#[test]
fn the_default_is_on_at_twenty_percent_within_ten_minutes() {
    let b: Brake = serde_json::from_str("{}").unwrap();
    assert_eq!(b, Brake::default());
    assert!(b.enabled);
    assert_eq!(b.max_failed, FailedNodes::Percent(20));
    assert_eq!(b.window_ms, 600_000);
    let off: Brake = serde_json::from_str(r#"{"enabled": false}"#).unwrap();
    assert!(!off.enabled);
}

#[test]
fn more_than_the_share_trips_it_and_no_fewer() {
    let b = Brake::default();
    assert!(!b.exceeded(2, 10));
    assert!(b.exceeded(3, 10));
    // 1 of 4 is 25%, over 20%, but one node is no evidence: a share needs at least 3 nodes.
    assert!(!b.exceeded(1, 4));
    assert!(!b.exceeded(2, 4));
    assert!(b.exceeded(3, 4));
    let one = Brake {
        min_failed: 1,
        ..Brake::default()
    };
    assert!(one.exceeded(1, 4));
    let count = brake(FailedNodes::Count(5), 1_000);
    assert!(!count.exceeded(5, 100));
    assert!(count.exceeded(6, 100));
    assert!(!brake(FailedNodes::Percent(100), 1_000).exceeded(10, 10));
}

#[test]
fn each_node_counts_once_and_the_trip_clears_the_record() {
    let b = Brake::default();
    let mut r = BrakeRecord::default();
    assert_eq!(r.record(&b, 10, "n-0", 7, 1_000), None);
    assert_eq!(r.record(&b, 10, "n-0", 7, 2_000), None);
    assert_eq!(r.record(&b, 10, "n-1", 7, 3_000), None);
    let (trip, named) = r
        .record(&b, 10, "n-2", 7, 4_000)
        .expect("3 of 10 is over 20%");
    assert_eq!(
        trip.to_string(),
        "3 of 10 nodes failed it within 10m, over 20%"
    );
    assert_eq!(named.to_string(), "n-0, n-1, n-2");
    assert!(r.failures.is_empty());
}

#[test]
fn failures_out_of_the_window_no_longer_count() {
    let b = brake(FailedNodes::Count(1), 60_000);
    let mut r = BrakeRecord::default();
    assert_eq!(r.record(&b, 10, "n-0", 7, 1_000), None);
    // 60 s later the first failure has left the window.
    assert_eq!(r.record(&b, 10, "n-1", 7, 61_000), None);
    assert_eq!(r.failures.len(), 1);
    assert!(r.record(&b, 10, "n-2", 7, 62_000).is_some());
}

#[test]
fn a_failure_of_another_version_starts_again() {
    let b = brake(FailedNodes::Count(1), 60_000);
    let mut r = BrakeRecord::default();
    assert_eq!(r.record(&b, 10, "n-0", 7, 1_000), None);
    assert_eq!(r.record(&b, 10, "n-1", 8, 2_000), None);
    assert_eq!(r.version, 8);
    assert_eq!(r.failures.len(), 1);
}

#[test]
fn a_brake_turned_off_never_trips() {
    let b = Brake {
        enabled: false,
        ..Brake::default()
    };
    let mut r = BrakeRecord::default();
    for i in 0..10 {
        assert_eq!(r.record(&b, 10, &format!("n-{i}"), 7, 1_000), None);
    }
    assert!(r.failures.is_empty());
}

#[test]
fn bounds_are_refused_naming_the_field_and_the_value() {
    let e = brake(FailedNodes::Count(0), 60_000).validate().unwrap_err();
    assert_eq!(e.field, "brake.max_failed");
    assert_eq!(e.value, "0");
    let e = brake(FailedNodes::Percent(0), 60_000)
        .validate()
        .unwrap_err();
    assert_eq!(e.value, "0%");
    let e = brake(FailedNodes::Percent(101), 60_000)
        .validate()
        .unwrap_err();
    assert_eq!(e.value, "101%");
    let e = brake(FailedNodes::Count(1), 999).validate().unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.value.as_str()),
        ("brake.window_ms", "999")
    );
    let e = brake(FailedNodes::Count(1), MAX_WINDOW_MS + 1)
        .validate()
        .unwrap_err();
    assert_eq!(e.field, "brake.window_ms");
    assert!(brake(FailedNodes::Percent(100), MAX_WINDOW_MS)
        .validate()
        .is_ok());
    assert!(brake(FailedNodes::Count(1), MIN_WINDOW_MS)
        .validate()
        .is_ok());
    for bad in [0, MAX_MIN_FAILED + 1] {
        let b = Brake {
            min_failed: bad,
            ..Brake::default()
        };
        let e = b.validate().unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.value.as_str()),
            ("brake.min_failed", bad.to_string().as_str())
        );
    }
}

#[test]
fn an_event_names_the_first_ten_nodes_and_counts_the_rest() {
    let named = Named::of((0..15).map(|i| format!("n-{i}")));
    assert_eq!(
        named.to_string(),
        "n-0, n-1, n-2, n-3, n-4, n-5, n-6, n-7, n-8, n-9 and 5 more"
    );
    assert_eq!(Named::of(["a".to_string()]).to_string(), "a");
}

#[test]
fn spans_are_written_in_their_largest_whole_unit() {
    let s = |ms| Span(ms).to_string();
    assert_eq!(s(600_000), "10m");
    assert_eq!(s(7 * 86_400_000), "7d");
    assert_eq!(s(3_600_000), "1h");
    assert_eq!(s(90_000), "90s");
    assert_eq!(s(1_500), "1500ms");
}
