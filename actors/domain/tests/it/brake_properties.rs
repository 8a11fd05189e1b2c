//! Property tests of a weak subscription's brake (issue 23 item 4): whatever the order and timing of the
//! nodes' reports, a failing version never reaches more than `max_failed` + 1 nodes (the one whose failure
//! trips the brake) of a weak consumer within the window, once held it is sent to no node, and the hold
//! stays until a person lifts it. Nodes follow their targets, as agents do; version 2 fails everywhere.

use convoy_domain::testing::*;
use convoy_domain::*;
use proptest::prelude::*;
use proptest::strategy::Strategy as PStrategy;
use std::collections::BTreeMap;

const NODES: usize = 10;

#[derive(Clone, Debug)]
enum Op {
    /// Node i does what its target says: version 2 fails, version 1 runs (and its failed attempt is dropped).
    Follow(usize),
    /// The clock moves on this many ms.
    Wait(u64),
    /// A person lifts the hold on version 2, if there is one.
    Lift,
}

fn op() -> impl PStrategy<Value = Op> {
    prop_oneof![
        8 => (0..NODES).prop_map(Op::Follow),
        3 => (1u64..30_000).prop_map(Op::Wait),
        1 => Just(Op::Lift),
    ]
}

fn brake() -> impl PStrategy<Value = Brake> {
    let max_failed = prop_oneof![
        (1u32..6).prop_map(FailedNodes::Count),
        (1u32..60).prop_map(FailedNodes::Percent),
    ];
    (max_failed, 1_000u64..60_000, 1u32..5).prop_map(|(max_failed, window_ms, min_failed)| Brake {
        enabled: true,
        max_failed,
        window_ms,
        min_failed,
    })
}

/// The most failed nodes the brake tolerates among `NODES`.
fn tolerated(b: &Brake) -> usize {
    match b.max_failed {
        FailedNodes::Count(n) => n as usize,
        FailedNodes::Percent(p) => (NODES * p as usize / 100).max(b.min_failed as usize - 1),
    }
}

fn follow(k: &mut Kit, i: usize) -> bool {
    let node = format!("c-{i}");
    let target = k.s.targets(&node)["r"].version;
    let failed = target == 2;
    let mut versions = BTreeMap::from([(1, vp(true, true, None))]);
    if failed {
        versions.insert(2, vp(true, true, Some("exit 1")));
    }
    k.ok(Command::ReportNodes(vec![NodeReport {
        node,
        active: Some(true),
        resources: BTreeMap::from([(
            "r".to_string(),
            ResourceReport {
                current: Some(1),
                versions,
                ..ResourceReport::default()
            },
        )]),
        ..Default::default()
    }]));
    failed
}

fn held(k: &Kit) -> bool {
    k.s.consumer("c")
        .unwrap()
        .holds
        .iter()
        .any(|h| h.version == 2 && h.by == "brake")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_failing_version_reaches_at_most_max_failed_plus_one_node_within_the_window(
        b in brake(),
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        let mut k = Kit::new(NODES);
        k.ok(Command::Subscribe {
            consumer: "c".into(),
            resource: "r".into(),
            mode: Mode::Weak,
            pin: None,
            policy: Policy { brake: Some(b), ..Policy::default() },
        });
        // The model: when each node last began failing version 2 (since the last lift), and whether its
        // report still shows that failure.
        let mut failed_at: BTreeMap<usize, u64> = BTreeMap::new();
        let mut showing = [false; NODES];
        for op in ops {
            let was_held = held(&k);
            match op {
                Op::Follow(i) => {
                    let failed = follow(&mut k, i);
                    if failed && !showing[i] {
                        failed_at.insert(i, k.now);
                    }
                    showing[i] = failed;
                }
                Op::Wait(ms) => k.now += ms,
                Op::Lift => {
                    if was_held {
                        k.ok(Command::ClearHold {
                            consumer: "c".into(),
                            resource: "r".into(),
                            version: 2,
                            by: Actor::User,
                        });
                        failed_at.clear();
                    }
                }
            }
            let now = k.now;
            let within = failed_at.values().filter(|t| now - **t < b.window_ms).count();
            prop_assert!(
                within <= tolerated(&b) + 1,
                "{within} nodes failed version 2 within {} ms; {} tolerated", b.window_ms, tolerated(&b)
            );
            if within > tolerated(&b) {
                prop_assert!(held(&k), "{within} failures within the window, no hold");
            }
            if was_held && !matches!(op, Op::Lift) {
                prop_assert!(held(&k), "the hold went without a person");
            }
            if held(&k) {
                for n in 0..NODES {
                    prop_assert_eq!(k.s.targets(&format!("c-{n}"))["r"].version, 1);
                }
            }
        }
    }
}
