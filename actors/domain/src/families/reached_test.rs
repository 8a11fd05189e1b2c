use super::*;
use crate::testing::*;
use crate::*;

/// `c` of three nodes on `r` 1, subscribed weakly.
fn fleet() -> Kit {
    let mut k = Kit::new(3);
    k.subscribe("c", "r", Mode::Weak, None);
    k
}

fn reached(k: &Kit) -> Option<u64> {
    k.s.consumer_map()["c"].subscriptions["r"].reached
}

#[test]
fn a_subscription_starts_from_the_lowest_version_its_active_nodes_run() {
    let k = fleet();
    assert_eq!(reached(&k), Some(1));
}

#[test]
fn the_mark_rises_with_the_lowest_node_and_never_falls_when_a_node_comes_back() {
    let mut k = fleet();
    k.installed(0);
    k.installed(1);
    assert_eq!(reached(&k), Some(1), "c-2 still runs 1");
    k.ok(Command::MarkInactive {
        nodes: vec!["c-2".into()],
    });
    assert_eq!(reached(&k), Some(2), "the node on 1 went stale");
    k.report(2, Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(reached(&k), Some(2), "it came back on 1");
}

#[test]
fn a_node_moving_back_starts_the_mark_over() {
    let mut k = fleet();
    for i in 0..3 {
        k.installed(i);
    }
    assert_eq!(reached(&k), Some(2));
    k.report(
        0,
        Some(1),
        &[(1, vp(true, true, None)), (2, vp(true, true, None))],
    );
    assert_eq!(reached(&k), Some(1), "c-0 runs 1 again");
}

#[test]
fn touched_pairs_keep_whether_one_of_their_changes_revokes() {
    let mut t = Touched::default();
    assert!(t.is_empty());
    t.note("c", "r", true);
    t.note("c", "r", false);
    t.note("d", "r", false);
    assert_eq!(
        t.0.into_iter().collect::<Vec<_>>(),
        vec![
            (("c".to_string(), "r".to_string()), true),
            (("d".to_string(), "r".to_string()), false)
        ]
    );
}
