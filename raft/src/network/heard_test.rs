//! When a peer was last heard from: never (since the record began), per peer, and never back in time.

use std::time::{Duration, Instant};

use super::Heard;

#[test]
fn a_peer_never_heard_from_is_silent_since_the_record_began() {
    let born = Instant::now();
    let heard = Heard::since(born);
    assert_eq!(
        heard.silence(2, born + Duration::from_millis(700)),
        Duration::from_millis(700)
    );
}

#[test]
fn silence_counts_from_the_last_rpc_of_that_peer_only() {
    let born = Instant::now();
    let heard = Heard::since(born);
    heard.from(2, born + Duration::from_millis(100));
    heard.from(3, born + Duration::from_millis(900));
    let now = born + Duration::from_secs(1);
    assert_eq!(heard.silence(2, now), Duration::from_millis(900));
    assert_eq!(heard.silence(3, now), Duration::from_millis(100));
}

#[test]
fn an_older_rpc_recorded_late_does_not_move_the_time_back() {
    let born = Instant::now();
    let heard = Heard::since(born);
    heard.from(2, born + Duration::from_millis(500));
    heard.from(2, born + Duration::from_millis(200));
    assert_eq!(
        heard.silence(2, born + Duration::from_millis(600)),
        Duration::from_millis(100)
    );
    // A time before the last one heard (a clock read earlier than the record) is no silence.
    assert_eq!(
        heard.silence(2, born + Duration::from_millis(400)),
        Duration::ZERO
    );
}
