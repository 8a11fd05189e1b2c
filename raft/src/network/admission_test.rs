//! Tests of the pending-handshake table and the refusal summary.

use std::net::Ipv4Addr;

use super::*;

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
}

#[test]
fn a_source_at_its_cap_displaces_its_own_oldest_handshake() {
    let mut p = Pending::new(2, 10);
    let (a, none) = p.admit(ip(1), "a");
    assert!(none.is_none());
    p.admit(ip(2), "other source");
    p.admit(ip(1), "b");
    let (_, evicted) = p.admit(ip(1), "c");
    assert_eq!(evicted, Some((ip(1), "a")));
    assert_eq!(p.pending_from(ip(1)), 2);
    assert_eq!(p.pending_from(ip(2)), 1, "other sources are untouched");
    assert_eq!(p.finish(a), None, "an evicted ticket is gone");
    assert_eq!(p.len(), 3);
}

#[test]
fn a_full_table_displaces_the_oldest_of_all() {
    let mut p = Pending::new(10, 3);
    for i in 1..=3 {
        assert!(p.admit(ip(i), i).1.is_none());
    }
    assert_eq!(p.admit(ip(9), 9).1, Some((ip(1), 1)));
    assert_eq!(p.admit(ip(9), 10).1, Some((ip(2), 2)));
    assert_eq!(p.len(), 3);
    assert_eq!(p.pending_from(ip(1)), 0);
}

#[test]
fn finished_handshakes_free_their_slots() {
    let mut p = Pending::new(1, 1);
    let (t, _) = p.admit(ip(1), ());
    assert_eq!(p.finish(t), Some((ip(1), ())));
    assert!(p.is_empty());
    assert_eq!(p.pending_from(ip(1)), 0);
    assert!(p.admit(ip(1), ()).1.is_none(), "room again");
}

#[test]
fn caps_of_zero_still_admit_one() {
    let mut p = Pending::new(0, 0);
    assert!(p.admit(ip(1), 1).1.is_none());
    assert_eq!(p.admit(ip(1), 2).1, Some((ip(1), 1)));
}

#[test]
fn refusals_are_summarised_once_per_interval() {
    let start = Instant::now();
    let every = Duration::from_secs(10);
    let mut log = RefusalLog::new(every, start);
    for i in 0..1000u32 {
        let why = match i % 3 {
            0 => Refusal::BadHandshake,
            1 => Refusal::TimedOut,
            _ => Refusal::Evicted,
        };
        log.refused(ip((i % 7) as u8), why);
    }
    log.accept_failed(&std::io::Error::other("Too many open files"));
    assert_eq!(log.due(start + Duration::from_secs(9)), None, "not yet");
    let summary = log.due(start + every).expect("one summary");
    assert_eq!(
        (summary.refused, summary.sources, summary.accept_errors),
        (1000, 7, 1)
    );
    assert_eq!(
        (summary.bad_handshake, summary.timed_out, summary.evicted),
        (334, 333, 333)
    );
    let line = summary.to_string();
    assert!(
        line.starts_with("refused 1000 unauthenticated connections from 7 sources in the last 10s"),
        "{line}"
    );
    assert!(line.contains("Too many open files"), "{line}");
    // The next interval starts empty: nothing to say.
    assert_eq!(log.due(start + 2 * every), None);
    assert_eq!(log.total_refused(), 1000);
    // At shutdown whatever is left is said, interval over or not.
    log.refused(ip(1), Refusal::TimedOut);
    let last = log
        .take(start + 2 * every + Duration::from_secs(1))
        .unwrap();
    assert_eq!((last.refused, last.timed_out), (1, 1));
    assert_eq!(last.interval, Duration::from_secs(1));
    assert_eq!(log.take(start + 3 * every), None);
}

#[test]
fn sources_tracked_are_bounded() {
    let start = Instant::now();
    let mut log = RefusalLog::new(Duration::from_secs(1), start);
    for i in 0..(MAX_SOURCES_TRACKED as u32 + 100) {
        log.refused(IpAddr::V4(Ipv4Addr::from(i)), Refusal::BadHandshake);
    }
    let summary = log.due(start + Duration::from_secs(1)).unwrap();
    assert_eq!(summary.sources, MAX_SOURCES_TRACKED);
    assert_eq!(summary.refused, MAX_SOURCES_TRACKED as u64 + 100);
}
