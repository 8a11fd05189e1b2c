//! The feed's events, coalescing and heartbeats. The pace is shortened so the tests are quick; they assert
//! the order and content of chunks and lower bounds of time only (a sleep never ends early).

use futures::StreamExt;

use super::*;

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
    let stream = feed(rx, describe, QUICK, Slot::claim().unwrap());
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
    let stream = feed(rx, describe, QUICK, Slot::claim().unwrap());
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

#[test]
fn streams_are_bounded_and_places_come_back() {
    let held: Vec<Slot> = std::iter::from_fn(Slot::claim)
        .take(MAX_STREAMS + 5)
        .collect();
    assert!(held.len() <= MAX_STREAMS);
    assert!(Slot::claim().is_none());
    drop(held);
    assert!(Slot::claim().is_some());
}
