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

#[test]
fn a_server_alone_that_refuses_its_peers_as_another_clusters_is_the_odd_one_out() {
    let standing = Standing::default();
    let other = Refusal::OtherCluster {
        by: 0,
        of: 1,
        ours: crate::identity::ClusterId(7),
        theirs: crate::identity::ClusterId(9),
    };
    standing.we_refuse(1, &other);
    assert!(standing
        .refuses_peers()
        .is_some_and(|why| why.contains("different clusters")));
    assert_eq!(standing.refused_by_peers(), None);
    // A replaced peer is the peer's fault, not this server's.
    let replaced = Standing::default();
    replaced.we_refuse(
        2,
        &Refusal::Replaced {
            by: 0,
            of: 2,
            known: 1,
            got: 2,
        },
    );
    assert_eq!(replaced.refuses_peers(), None);
    // Working with some peer since: a stray one of another cluster changes nothing.
    std::thread::sleep(Duration::from_millis(5));
    standing.exchanged();
    assert_eq!(standing.refuses_peers(), None);
}

#[test]
fn a_server_that_exchanged_a_moment_before_a_refusal_stays_ready() {
    // A leader working with its healthy follower exchanges many times a second: a stray server refusing it (or
    // refused by it) between two heartbeats must not make it stop serving (issue 37; the e2e test
    // `a_server_on_another_clusters_data_is_not_ready_and_serves_nothing` saw its writes answered 503).
    let standing = Standing::default();
    standing.exchanged();
    std::thread::sleep(Duration::from_millis(5));
    standing.we_refuse(
        2,
        &Refusal::OtherCluster {
            by: 0,
            of: 2,
            ours: crate::identity::ClusterId(7),
            theirs: crate::identity::ClusterId(9),
        },
    );
    standing.trouble(
        2,
        Trouble::RefusesUs,
        "server 2 refuses server 0: different clusters",
    );
    assert_eq!(standing.refuses_peers(), None);
    assert_eq!(standing.refused_by_peers(), None);
}
