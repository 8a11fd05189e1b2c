use super::*;

#[test]
fn a_peer_that_refuses_this_server_makes_it_unready_until_one_accepts_it() {
    let standing = Standing::default();
    assert_eq!(standing.refused_by_peers(), None);
    standing.trouble(1, Trouble::RefusesUs, "server 1 refuses server 3: replaced");
    assert_eq!(
        standing.refused_by_peers().as_deref(),
        Some("server 1 refuses server 3: replaced")
    );
    standing.ok(2);
    assert_eq!(standing.refused_by_peers(), None);
}

#[test]
fn a_server_that_exchanges_with_its_peers_stays_ready_whatever_a_stray_one_says() {
    let standing = Standing::default();
    standing.anonymous_refusal(
        "a peer at 10.0.0.9:4000 dialed this server with another cluster secret",
    );
    assert!(standing.refused_by_peers().is_some());
    std::thread::sleep(Duration::from_millis(5));
    standing.exchanged();
    assert_eq!(standing.refused_by_peers(), None);
}

#[test]
fn only_refusals_of_this_server_count_for_readiness() {
    let standing = Standing::default();
    standing.trouble(3, Trouble::WeRefuse, "server 1 refuses server 3");
    standing.trouble(2, Trouble::Down, "cannot connect");
    assert_eq!(standing.refused_by_peers(), None);
    standing.anonymous_refusal(
        "a peer at 10.0.0.9:4000 dialed this server with another cluster secret",
    );
    assert!(standing
        .refused_by_peers()
        .is_some_and(|why| why.contains("another cluster secret")));
}

#[test]
fn a_troubled_peer_is_one_entry_until_it_is_back() {
    let standing = Standing::default();
    for _ in 0..100 {
        standing.trouble(2, Trouble::Down, "cannot connect");
    }
    assert_eq!(standing.troubled().len(), 1);
    standing.ok(2);
    assert!(standing.troubled().is_empty());
}

#[test]
fn reversions_are_counted() {
    let standing = Standing::default();
    standing.reverted();
    standing.reverted();
    assert_eq!(standing.reversions(), 2);
}
