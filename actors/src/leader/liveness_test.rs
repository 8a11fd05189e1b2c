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

#[test]
fn nodes_are_to_forget_only_after_the_forget_time_and_never_when_it_is_off() {
    let start = Instant::now();
    let forget = Duration::from_millis(1000);
    let mut l = Liveness::new(T, start).forgetting_after(forget);
    l.seen("a", start + Duration::from_millis(500));
    let at = start + Duration::from_millis(1200);
    // a reported 700 ms ago: silent past the timeout, not past the forget time; b never reported.
    assert_eq!(l.silent(["a"], at), vec!["a"]);
    assert_eq!(l.silent_to_forget(["a", "b"], at), vec!["b"]);
    l.forget_stale(at);
    assert_eq!(l.len(), 1, "kept for the forget time, not just the timeout");
    assert_eq!(
        l.age("a", at),
        None,
        "the age is shown within the timeout only"
    );
    let later = start + Duration::from_millis(1600);
    assert_eq!(l.silent_to_forget(["a", "b"], later), vec!["a", "b"]);
    l.forget_stale(later);
    assert_eq!(l.silent_to_forget(["a", "b"], later), vec!["a", "b"]);

    let off = Liveness::new(T, start).forgetting_after(Duration::ZERO);
    assert!(off.silent_to_forget(["a"], later).is_empty());
}

#[test]
fn a_full_table_records_no_new_node_but_refreshes_the_ones_it_holds() {
    let start = Instant::now();
    let mut l = Liveness::new(T, start).with_limit(2);
    l.seen("a", start);
    l.seen("b", start);
    l.seen("c", start);
    assert_eq!(l.len(), 2);
    assert_eq!(l.age("c", start), None, "c was not recorded");
    let later = start + Duration::from_millis(50);
    l.seen("a", later);
    assert_eq!(l.age("a", later), Some(Duration::ZERO));
}
