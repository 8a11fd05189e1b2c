//! Start jitter for weak subscriptions, with time passed in (issue 35 §6): each node moves at its own offset,
//! the leader's tick releases the next, a move back is never jittered, and a jitter over a day is refused.

use super::offset;
use crate::testing::*;
use crate::*;

const JITTER: u64 = 60_000;
const T0: u64 = 1_000_000;

/// Consumer `c` of `n` nodes on version 1 of `r`, weakly subscribed with a start jitter of a minute.
fn jittered(n: usize) -> Kit {
    let mut k = Kit::empty();
    k.now = T0 - 10_000;
    k.fleet("c", "r", n);
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: None,
        policy: Policy {
            start_jitter_ms: Some(JITTER),
            ..Policy::default()
        },
    });
    k
}

/// Ticks at every time the leader would, up to `until`.
fn tick_through(k: &mut Kit, until: u64) {
    while let Some(t) = k.s.weak_tick_at().filter(|t| *t <= until) {
        k.tick_to(t);
    }
}

fn moved(k: &Kit, n: usize) -> usize {
    k.targets_of("c", "r", n)
        .iter()
        .filter(|t| **t == go(2))
        .count()
}

#[test]
fn each_of_4_nodes_moves_at_its_own_offset_and_not_before() {
    let n = 4;
    let mut k = jittered(n);
    k.now = T0;
    assert_eq!(k.publish_to("r"), 2);
    let times: Vec<u64> = (0..n)
        .map(|i| T0 + offset("c", "r", 2, &format!("c-{i}"), JITTER))
        .collect();
    let mut order = times.clone();
    order.sort();
    order.dedup();
    for t in order {
        // Just before: only the nodes whose time passed move.
        if t > T0 {
            tick_through(&mut k, t - 1);
            for (i, at) in times.iter().enumerate() {
                let want = if *at < t { go(2) } else { stay(1) };
                assert_eq!(k.target(&format!("c-{i}"), "r"), want, "c-{i} at {}", t - 1);
            }
            assert_eq!(
                k.s.weak_tick_at(),
                Some(t),
                "the leader ticks at the next node's time"
            );
        }
        tick_through(&mut k, t);
        for (i, at) in times.iter().enumerate() {
            let want = if *at <= t { go(2) } else { stay(1) };
            assert_eq!(k.target(&format!("c-{i}"), "r"), want, "c-{i} at {t}");
        }
    }
    assert_eq!(k.s.weak_tick_at(), None, "nothing left to tick");
}

#[test]
fn a_large_consumer_is_spread_over_the_jitter() {
    let n = 200;
    let mut k = jittered(n);
    k.now = T0;
    k.publish_to("r");
    assert!(moved(&k, n) < n / 10, "{} moved at once", moved(&k, n));
    tick_through(&mut k, T0 + JITTER / 2);
    let half = moved(&k, n);
    assert!(
        (n / 4..3 * n / 4).contains(&half),
        "{half} of {n} moved in half the jitter"
    );
    tick_through(&mut k, T0 + JITTER);
    assert_eq!(moved(&k, n), n, "every node moved within the jitter");
}

#[test]
fn a_move_back_is_not_jittered_and_a_new_version_spreads_again() {
    let n = 4;
    let mut k = jittered(n);
    k.now = T0;
    k.publish_to("r");
    tick_through(&mut k, T0 + JITTER);
    for i in 0..n {
        k.node_installed(&format!("c-{i}"), "r", 1, 2);
    }
    // Retracting 2 selects 1 again: every node goes back at once.
    k.now = T0 + JITTER + 1_000;
    k.ok(Command::RetractVersion {
        resource: "r".into(),
        version: 2,
        message: None,
        by: Actor::User,
    });
    for t in k.targets_of("c", "r", n) {
        let t = t.expect("a target");
        assert!(t.version == 1 && t.install, "{t:?}");
    }
    // A version 3 spreads from its own publish.
    let t3 = k.now + 5_000;
    k.now = t3;
    assert_eq!(k.publish_to("r"), 3);
    let spread =
        k.s.weak_jitter()
            .spread("c", "r")
            .expect("a spread")
            .clone();
    assert_eq!((spread.version, spread.since), (3, t3));
}

#[test]
fn no_jitter_moves_everyone_at_once_and_records_nothing() {
    let mut k = Kit::empty();
    k.fleet("c", "r", 4);
    k.subscribe("c", "r", Mode::Weak, None);
    k.publish_to("r");
    assert_eq!(k.targets_of("c", "r", 4), vec![go(2); 4]);
    assert!(k.s.weak_jitter().spreads.is_empty());
}

#[test]
fn a_jitter_over_a_day_is_refused_naming_it() {
    let mut k = Kit::empty();
    k.fleet("c", "r", 1);
    let e = k.err(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: None,
        policy: Policy {
            start_jitter_ms: Some(MAX_START_JITTER_MS + 1),
            ..Policy::default()
        },
    });
    assert!(e.to_string().contains("start_jitter_ms"), "{e}");
}
