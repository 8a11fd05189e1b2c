//! Tests of the per-node liveness table.

use std::time::{Duration, Instant};

use super::Liveness;

const T: Duration = Duration::from_millis(100);

#[test]
fn a_node_is_silent_only_after_the_timeout_since_its_last_report() {
    let start = Instant::now();
    let mut l = Liveness::new(T, start);
    l.seen("a", start + Duration::from_millis(50));
    let at = start + Duration::from_millis(120);
    assert_eq!(
        l.silent(["a", "b"], at),
        vec!["b".to_string()],
        "b never reported"
    );
    let later = start + Duration::from_millis(151);
    assert_eq!(l.silent(["a", "b"], later), vec!["a", "b"]);
}

#[test]
fn one_report_counts_for_the_node_whatever_asks() {
    // The same node listed by three consumers' checks: one report keeps it alive for all.
    let start = Instant::now();
    let mut l = Liveness::new(T, start);
    let at = start + Duration::from_millis(500);
    l.seen("n", at);
    for _ in 0..3 {
        assert!(l.silent(["n"], at + Duration::from_millis(90)).is_empty());
    }
}

#[test]
fn restart_gives_every_node_a_full_timeout_and_forgetting_changes_no_answer() {
    let start = Instant::now();
    let mut l = Liveness::new(T, start);
    l.seen("a", start);
    let new_term = start + Duration::from_secs(5);
    l.restart(new_term);
    assert_eq!(l.len(), 0);
    assert!(l
        .silent(["a"], new_term + Duration::from_millis(99))
        .is_empty());

    l.seen("a", new_term);
    l.seen("b", new_term + Duration::from_millis(80));
    let at = new_term + Duration::from_millis(150);
    let before = l.silent(["a", "b", "c"], at);
    l.forget_stale(at);
    assert_eq!(l.len(), 1, "only b was heard within the timeout");
    assert_eq!(l.silent(["a", "b", "c"], at), before);
}

#[test]
fn the_age_of_a_report_is_known_until_it_is_forgotten() {
    let start = Instant::now();
    let mut l = Liveness::new(T, start);
    assert_eq!(l.age("a", start), None);
    l.seen("a", start + Duration::from_millis(10));
    assert_eq!(
        l.age("a", start + Duration::from_millis(60)),
        Some(Duration::from_millis(50))
    );
    l.forget_stale(start + Duration::from_millis(200));
    assert_eq!(l.age("a", start + Duration::from_millis(200)), None);
}
