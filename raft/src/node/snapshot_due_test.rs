use super::*;

#[test]
fn a_small_state_snapshots_every_snapshot_every_entries() {
    assert_eq!(entries_between(10_000, 1_000_000, 0), 10_000);
    assert_eq!(entries_between(10_000, 1_000_000, 600_000), 10_000);
}

#[test]
fn a_large_state_snapshots_once_per_64_bytes_of_snapshot_up_to_the_maximum() {
    // 35 MB (1M plain resources): one snapshot per 546,875 entries.
    assert_eq!(entries_between(10_000, 1_000_000, 35_000_000), 546_875);
    // 110 MB (1M fleet nodes) would be 1.7M entries: capped.
    assert_eq!(entries_between(10_000, 1_000_000, 110_000_000), 1_000_000);
}

#[test]
fn a_maximum_below_snapshot_every_means_a_fixed_interval() {
    assert_eq!(entries_between(1_000, 1_000, 110_000_000), 1_000);
    assert_eq!(entries_between(5_000, 10, 110_000_000), 5_000);
}

#[test]
fn due_counts_from_the_later_of_the_snapshot_and_the_last_request() {
    let mut due = Due::default();
    assert!(!due.check(99, 0, 100));
    assert!(due.check(100, 0, 100));
    // The build asked for at 100 is still running: not asked again at 150.
    assert!(!due.check(150, 0, 100));
    // It finished at 100; the next is due 100 entries after it.
    assert!(!due.check(199, 100, 100));
    assert!(due.check(200, 100, 100));
    // A build that failed (snapshot still at 100) is asked for again one interval later.
    assert!(!due.check(299, 100, 100));
    assert!(due.check(300, 100, 100));
}

#[test]
fn may_be_due_is_the_smallest_interval_from_the_same_base() {
    let mut due = Due::default();
    assert!(!due.may_be_due(9, 0, 10));
    assert!(due.may_be_due(10, 0, 10));
    assert!(due.check(10, 0, 10));
    assert!(!due.may_be_due(19, 0, 10));
    assert!(due.may_be_due(20, 0, 10));
    // Never true where check could be for a larger interval, never false where it could be true.
    assert!(!due.check(19, 0, 10));
}
