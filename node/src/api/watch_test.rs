//! The feed's events, coalescing and heartbeats. The pace is shortened so the tests are quick; they assert
//! the order and content of chunks and lower bounds of time only (a sleep never ends early).

use futures::StreamExt;

use super::*;
use crate::api::auth::Caller;

const QUICK: Pace = Pace {
    min_gap: Duration::from_millis(40),
    heartbeat: Duration::from_millis(120),
};

fn text(chunk: Option<Result<Bytes, Infallible>>) -> String {
    let chunk = chunk.expect("a chunk").expect("infallible");
    String::from_utf8(chunk.to_vec()).expect("utf-8")
}

fn describe(index: u64) -> String {
    format!("{{\"applied\":{index}}}")
}

#[tokio::test]
async fn first_event_at_once_then_changes_coalesced_with_the_latest_index() {
    let (tx, rx) = watch::channel(7u64);
    let stream = feed(rx, describe, |_| None, QUICK, anonymous());
    futures::pin_mut!(stream);
    assert_eq!(
        text(stream.next().await),
        "event: applied\nid: 7\ndata: {\"applied\":7}\n\n"
    );
    let t0 = Instant::now();
    for i in 8..=20 {
        tx.send(i).unwrap();
    }
    // Thirteen changes before the gap is over: one event, with the latest index.
    let second = text(stream.next().await);
    assert!(second.starts_with("event: applied\nid: 20\n"), "{second}");
    assert!(Instant::now() - t0 >= QUICK.min_gap);
    tx.send(21).unwrap();
    tx.send(22).unwrap();
    let t1 = Instant::now();
    let third = text(stream.next().await);
    assert!(third.contains("id: 22\n"), "{third}");
    assert!(Instant::now() - t1 >= QUICK.min_gap - Duration::from_millis(1));
    assert!(!PACE.min_gap.is_zero() && PACE.min_gap >= Duration::from_millis(250));
}

#[tokio::test]
async fn silence_brings_heartbeats_and_a_dropped_sender_ends_the_stream() {
    let (tx, rx) = watch::channel(1u64);
    let stream = feed(rx, describe, |_| None, QUICK, anonymous());
    futures::pin_mut!(stream);
    text(stream.next().await);
    let t0 = Instant::now();
    assert_eq!(text(stream.next().await), ": heartbeat\n\n");
    assert!(Instant::now() - t0 >= QUICK.heartbeat - Duration::from_millis(1));
    // A change back to the value already sent is no event.
    tx.send(1).unwrap();
    assert_eq!(text(stream.next().await), ": heartbeat\n\n");
    drop(tx);
    assert!(stream.next().await.is_none());
}

fn anonymous() -> Slot {
    SLOTS.claim(&Caller::Anonymous).expect("a slot")
}

#[test]
fn streams_are_bounded_and_places_come_back() {
    let held: Vec<Slot> = std::iter::from_fn(|| SLOTS.claim(&Caller::Anonymous).ok())
        .take(MAX_STREAMS + 5)
        .collect();
    assert!(held.len() <= MAX_STREAMS);
    assert!(SLOTS.claim(&Caller::Anonymous).is_err());
    drop(held);
    assert!(SLOTS.claim(&Caller::Anonymous).is_ok());
}

#[tokio::test]
async fn a_guard_that_says_stop_sends_its_final_event_and_ends_the_stream() {
    let (tx, rx) = watch::channel(3u64);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let guard = move |index: u64| {
        flag.load(std::sync::atomic::Ordering::SeqCst)
            .then(|| format!("event: closed\nid: {index}\ndata: {{}}\n\n"))
    };
    let stream = feed(rx, describe, guard, QUICK, anonymous());
    futures::pin_mut!(stream);
    assert!(text(stream.next().await).starts_with("event: applied\nid: 3\n"));
    // Checked on a heartbeat: silence, then the guard says stop.
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        text(stream.next().await),
        "event: closed\nid: 3\ndata: {}\n\n"
    );
    assert!(stream.next().await.is_none());
    assert!(
        tx.send(4).is_err(),
        "the ended stream let go of its receiver"
    );
}

#[tokio::test]
async fn a_guard_is_asked_before_an_event_too() {
    let (tx, rx) = watch::channel(3u64);
    let guard = |index: u64| (index >= 5).then(|| format!("closed at {index}"));
    let stream = feed(rx, describe, guard, QUICK, anonymous());
    futures::pin_mut!(stream);
    text(stream.next().await);
    tx.send(5).unwrap();
    assert_eq!(text(stream.next().await), "closed at 5");
    assert!(stream.next().await.is_none());
}
