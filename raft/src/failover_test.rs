//! Tests of the dead-leader watch's pure parts and its probe against real sockets.

use super::*;

#[test]
fn the_successor_is_the_lowest_voter_other_than_the_dead_leader() {
    let voters: BTreeSet<NodeId> = [1, 2, 3].into();
    assert_eq!(successor(1, &voters), Some(2));
    assert_eq!(successor(2, &voters), Some(1));
    assert_eq!(successor(3, &voters), Some(1));
    assert_eq!(successor(1, &[1].into()), None);
}

#[tokio::test]
async fn a_closed_port_is_refused_and_a_listening_one_is_not() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    assert_eq!(probe(&addr).await, Probe::Inconclusive, "something listens");
    drop(listener);
    assert_eq!(
        probe(&addr).await,
        Probe::Refused,
        "nothing listens any more"
    );
}

#[tokio::test]
async fn an_address_that_does_not_resolve_proves_nothing() {
    assert_eq!(probe("no-such-host.invalid:1").await, Probe::Inconclusive);
}
