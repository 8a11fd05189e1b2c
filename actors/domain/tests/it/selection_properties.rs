//! Property tests of which version a node should run (issue 22): holds on nodes in two consumers,
//! dependencies with blank joiners, re-imaged nodes and stale nodes coming back (issue 36), canaries on
//! pinned subscriptions (weak and strong), and follow-ups that never chain. Nodes follow their targets, as
//! agents do.

use convoy_domain::testing::*;
use convoy_domain::Strategy;
use convoy_domain::*;
use proptest::prelude::*;
use proptest::strategy::Strategy as PStrategy;
use std::collections::BTreeMap;

const NODES: usize = 5;

#[derive(Clone, Debug)]
enum Op {
    /// Node i does what its target says for `r` (installs it, or removes it).
    Follow(usize),
    /// Node i fails to install what its target says.
    Fail(usize),
    /// Node i comes back re-imaged: it holds nothing of `r`.
    Reimage(usize),
    /// A blank node joins consumer `b` (or `c`, the only one, in one-consumer runs).
    Join,
    /// Publish a version of `r`.
    Publish,
    /// Deploy the newest version to `a` by hand (all at once) and roll it back: it is held back on `a`.
    HoldNewest,
    /// Lift the oldest hold on `a`.
    Lift,
    /// Delete the subscription of `a` or `b` to `r` and subscribe it again.
    Resubscribe(bool),
}

fn op() -> impl PStrategy<Value = Op> {
    prop_oneof![
        8 => (0..NODES).prop_map(Op::Follow),
        1 => (0..NODES).prop_map(Op::Fail),
        2 => (0..NODES).prop_map(Op::Reimage),
        1 => Just(Op::Join),
        2 => Just(Op::Publish),
        2 => Just(Op::HoldNewest),
        1 => Just(Op::Lift),
        1 => any::<bool>().prop_map(Op::Resubscribe),
    ]
}

fn report(k: &mut Kit, node: &str, r: &str, rr: ResourceReport) {
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: node.into(),
        active: Some(true),
        resources: BTreeMap::from([(r.to_string(), rr)]),
        ..Default::default()
    }]));
}

fn removed() -> ResourceReport {
    ResourceReport {
        interested: None,
        current: None,
        versions: BTreeMap::new(),
        removed: true,
        log: None,
    }
}

/// Node `node` acts on its target for `r`: installs it (or fails to), or removes `r`.
fn follow(k: &mut Kit, node: &str, r: &str, fail: bool) {
    let Some(t) = k.target(node, r) else {
        return;
    };
    if t.uninstall {
        return report(k, node, r, removed());
    }
    if !t.install {
        return;
    }
    let current =
        k.s.node(node)
            .and_then(|n| n.resources.get(r).and_then(|x| x.current));
    let mut versions = BTreeMap::new();
    if let Some(c) = current {
        versions.insert(c, vp(true, true, None));
    }
    let error = fail.then_some("exit 1");
    versions.insert(t.version, vp(true, true, error));
    let now = if fail { current } else { Some(t.version) };
    let rr = ResourceReport {
        interested: None,
        current: now,
        versions,
        removed: false,
        log: None,
    };
    report(k, node, r, rr);
}

fn weak(k: &mut Kit, c: &str) {
    k.subscribe(c, "r", Mode::Weak, None);
}

/// Consumers `a` and `b` share nodes `a-0..`, both subscribed weakly to `r` (version 1 running).
fn two_consumers() -> Kit {
    let mut k = Kit::empty();
    k.fleet("a", "r", NODES);
    let nodes: Vec<String> = (0..NODES).map(|i| format!("a-{i}")).collect();
    k.ok(Command::CreateConsumer {
        name: "b".into(),
        nodes,
    });
    weak(&mut k, "a");
    weak(&mut k, "b");
    k
}

/// The versions of `r` held back on any consumer of `node`.
fn held_for(k: &Kit, node: &str) -> Vec<u64> {
    let Some(n) = k.s.node(node) else {
        return Vec::new();
    };
    n.consumers
        .iter()
        .filter_map(|c| k.s.consumer(c))
        .flat_map(|c| c.holds.into_iter())
        .filter(|h| h.resource == "r")
        .map(|h| h.version)
        .collect()
}

fn apply_two(k: &mut Kit, op: &Op, joined: &mut usize) {
    let node = |i: usize| format!("a-{i}");
    match op {
        Op::Follow(i) => follow(k, &node(*i), "r", false),
        Op::Fail(i) => follow(k, &node(*i), "r", true),
        Op::Reimage(i) => report(k, &node(*i), "r", removed()),
        Op::Join => {
            let id = format!("b-{joined}");
            *joined += 1;
            k.ok(Command::UpdateConsumerNodes {
                name: "b".into(),
                add: vec![id.clone()],
                remove: vec![],
            });
            report(k, &id, "r", removed());
        }
        Op::Publish => {
            k.publish_to("r");
        }
        Op::HoldNewest => {
            let newest =
                k.s.resource("r")
                    .and_then(|r| r.versions.last().map(|v| v.version));
            let Some(v) = newest else { return };
            let mut spec = spec("a", "r", v, Strategy::AllAtOnce { fail_fast: false });
            spec.force = true;
            if let Ok(Response::DeploymentStarted { id, .. }) =
                k.s.apply(Command::StartDeployment(spec), k.now)
            {
                let _ = k.s.apply(rollback(id, None, Actor::User), k.now);
            }
        }
        Op::Lift => {
            let hold = k.s.consumer("a").and_then(|c| c.holds.first().cloned());
            if let Some(h) = hold {
                k.ok(Command::ClearHold {
                    consumer: "a".into(),
                    resource: h.resource,
                    version: h.version,
                    by: Actor::User,
                });
            }
        }
        Op::Resubscribe(first) => {
            let c = if *first { "a" } else { "b" };
            let gone = k.s.apply(
                Command::Unsubscribe {
                    consumer: c.into(),
                    resource: "r".into(),
                },
                k.now,
            );
            if gone.is_ok() {
                weak(k, c);
            }
        }
    }
}

/// Consumer `c`: `lib` 2 on every node (weakly), `r` 3 needs `lib` 2.
fn dependency() -> Kit {
    let mut k = Kit::empty();
    k.fleet("c", "r", NODES);
    k.ok(Command::CreateResource { name: "lib".into() });
    k.publish_to("lib");
    k.publish_to("lib");
    for i in 0..NODES {
        let rr = ResourceReport {
            interested: None,
            current: Some(2),
            versions: BTreeMap::from([(2, vp(true, true, None))]),
            removed: false,
            log: None,
        };
        report(&mut k, &format!("c-{i}"), "lib", rr);
    }
    k.subscribe("c", "lib", Mode::Weak, None);
    k.subscribe("c", "r", Mode::Weak, None);
    k.publish_to("r");
    k.publish_deps("r", vec![("lib", 2)]);
    k
}

/// What nodes of the holder do to a dependency that holds (issue 36 §6): go stale, come back on what they
/// ran, follow their targets, join on an older version.
#[derive(Clone, Debug)]
enum Back {
    /// Node i stops reporting: the leader marks it inactive.
    Stale(usize),
    /// Node i reports again what the server last heard it run (back from stale, or just reporting).
    Return(usize),
    /// Node i does what its target says for `lib`.
    Follow(usize),
    /// A node joins `c` running `lib` 1.
    Join,
}

fn back() -> impl PStrategy<Value = Back> {
    prop_oneof![
        2 => (0..NODES).prop_map(Back::Stale),
        3 => (0..NODES).prop_map(Back::Return),
        3 => (0..NODES).prop_map(Back::Follow),
        1 => Just(Back::Join),
    ]
}

fn runs(version: u64) -> ResourceReport {
    ResourceReport {
        interested: None,
        current: Some(version),
        versions: BTreeMap::from([(version, vp(true, true, None))]),
        removed: false,
        log: None,
    }
}

/// Consumer `c`: `lib` 1 on `c-3` and `c-4`, which went stale, and 2 on the others (weakly); `r` 3 needs
/// `lib` 2, which holds.
fn dependency_with_stale_nodes() -> Kit {
    let mut k = Kit::empty();
    k.fleet("c", "r", NODES);
    k.ok(Command::CreateResource { name: "lib".into() });
    k.publish_to("lib");
    k.publish_to("lib");
    for i in 0..NODES {
        report(
            &mut k,
            &format!("c-{i}"),
            "lib",
            runs(if i < 3 { 2 } else { 1 }),
        );
    }
    k.subscribe("c", "lib", Mode::Weak, None);
    k.subscribe("c", "r", Mode::Weak, None);
    k.ok(Command::MarkInactive {
        nodes: vec!["c-3".into(), "c-4".into()],
    });
    k.publish_to("r");
    k.publish_deps("r", vec![("lib", 2)]);
    k
}

/// `c` strong, pinned at 1 (every node runs it), then a canary of 2 by hand on `canary`, rolled forward.
fn canary_on_pinned_strong(canary: (usize, usize)) -> Kit {
    let mut k = Kit::new(NODES);
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Strong,
        pin: Some(1),
        policy: Policy::default(),
    });
    let mut s = spec("c", "r", 2, Strategy::AllAtOnce { fail_fast: false });
    s.nodes = Some(format!("{}-{}", canary.0, canary.1));
    k.start(s);
    for i in canary.0..=canary.1 {
        follow(&mut k, &format!("c-{i}"), "r", false);
    }
    k
}

/// Every node of `c` follows its target until nothing moves (at most `rounds` rounds).
fn settle(k: &mut Kit, rounds: usize) {
    for _ in 0..rounds {
        for i in 0..NODES {
            follow(k, &format!("c-{i}"), "r", false);
        }
    }
}

fn current(k: &Kit, node: &str) -> Option<u64> {
    k.s.node(node)?.resources.get("r")?.current
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// A version held back on one consumer of a node is never sent to it outside a deployment, whichever
    /// consumer decides its target (issue 22 item 12).
    #[test]
    fn a_hold_keeps_its_version_off_every_node_of_the_consumer(ops in prop::collection::vec(op(), 1..50)) {
        let mut k = two_consumers();
        let mut joined = 0;
        for op in &ops {
            apply_two(&mut k, op, &mut joined);
            let nodes = k.s.consumer("b").map(|c| c.nodes).unwrap_or_default();
            for n in nodes {
                let in_deployment = k.s.node(&n).is_some_and(|v| !v.deployments.is_empty());
                let Some(t) = k.target(&n, "r") else { continue };
                if in_deployment || !(t.install || t.download) {
                    continue;
                }
                let held = held_for(&k, &n);
                prop_assert!(!held.contains(&t.version), "{n} sent {} held in {held:?} after {op:?}", t.version);
            }
        }
    }

    /// Blank joiners and re-imaged nodes never revoke a dependency that holds: the selection never flips
    /// back (issue 22 item 6).
    #[test]
    fn a_dependency_that_holds_never_flaps(ops in prop::collection::vec(op(), 1..40)) {
        let mut k = dependency();
        prop_assert_eq!(k.s.selected_version("c", "r"), Some(3));
        let mut joined = 0;
        for op in &ops {
            match op {
                Op::Reimage(i) => report(&mut k, &format!("c-{i}"), "lib", removed()),
                Op::Join => {
                    let id = format!("c-new-{joined}");
                    joined += 1;
                    k.ok(Command::UpdateConsumerNodes { name: "c".into(), add: vec![id.clone()], remove: vec![] });
                    report(&mut k, &id, "r", removed());
                }
                Op::Follow(i) | Op::Fail(i) => follow(&mut k, &format!("c-{i}"), "lib", false),
                _ => continue,
            }
            prop_assert_eq!(k.s.selected_version("c", "r"), Some(3), "after {:?}", op);
        }
    }

    /// A dependency that holds is never revoked by a node that comes back from stale, or joins, on an older
    /// version: the selection never flips back (issue 36 §6, seed 003).
    #[test]
    fn a_dependency_that_holds_never_flaps_as_nodes_go_stale_and_come_back(ops in prop::collection::vec(back(), 1..40)) {
        let mut k = dependency_with_stale_nodes();
        prop_assert_eq!(k.s.selected_version("c", "r"), Some(3));
        let mut joined = 0;
        for op in &ops {
            match op {
                Back::Stale(i) => {
                    k.ok(Command::MarkInactive { nodes: vec![format!("c-{i}")] });
                }
                Back::Return(i) => {
                    let node = format!("c-{i}");
                    let was = k.s.node(&node).and_then(|n| n.resources.get("lib").and_then(|x| x.current));
                    report(&mut k, &node, "lib", was.map_or_else(removed, runs));
                }
                Back::Follow(i) => follow(&mut k, &format!("c-{i}"), "lib", false),
                Back::Join => {
                    let id = format!("c-new-{joined}");
                    joined += 1;
                    k.ok(Command::UpdateConsumerNodes { name: "c".into(), add: vec![id.clone()], remove: vec![] });
                    report(&mut k, &id, "lib", runs(1));
                }
            }
            prop_assert_eq!(k.s.selected_version("c", "r"), Some(3), "after {:?}", op);
        }
    }

    /// After a canary on a weak subscription pinned at 1, the canary's nodes keep version 2 and the others
    /// are sent 1, whatever nodes do, until the pin changes (issue 22 item 7).
    #[test]
    fn a_canary_on_a_pinned_weak_subscription_sticks(
        a in 0..NODES, len in 0..NODES, abort_it in any::<bool>(),
        moves in prop::collection::vec(0..NODES, 0..20),
    ) {
        let b = (a + len).min(NODES - 1);
        let mut k = Kit::new(NODES);
        k.ok(Command::Subscribe { consumer: "c".into(), resource: "r".into(), mode: Mode::Weak, pin: Some(1), policy: Policy::default() });
        let mut s = spec("c", "r", 2, Strategy::AllAtOnce { fail_fast: false });
        s.nodes = Some(format!("{a}-{b}"));
        let id = k.start(s);
        if abort_it {
            follow(&mut k, &format!("c-{a}"), "r", false);
            // Ended already when the canary is one node.
            let _ = k.s.apply(abort(id, None, Actor::User), k.now);
        } else {
            for i in a..=b {
                follow(&mut k, &format!("c-{i}"), "r", false);
            }
        }
        for i in moves {
            follow(&mut k, &format!("c-{i}"), "r", false);
        }
        for i in 0..NODES {
            let n = format!("c-{i}");
            let want = if current(&k, &n) == Some(2) { 2 } else { 1 };
            prop_assert_eq!(k.target(&n, "r").map(|t| t.version), Some(want), "{}", n);
            prop_assert_eq!(current(&k, &n), Some(want), "{}", n);
        }
    }

    /// A strong consumer pinned at 1 after a canary of 2: nodes that come back empty get 1 again through
    /// follow-ups, canary nodes keep 2, and the follow-ups end (issue 22 items 4, 8).
    #[test]
    fn after_a_canary_empty_nodes_reconverge_and_canary_nodes_keep_theirs(
        a in 0..NODES, len in 0..NODES,
        ops in prop::collection::vec(op(), 0..30),
    ) {
        let b = (a + len).min(NODES - 1);
        let mut k = canary_on_pinned_strong((a, b));
        for op in &ops {
            match op {
                Op::Reimage(i) => report(&mut k, &format!("c-{i}"), "r", removed()),
                Op::Follow(i) => follow(&mut k, &format!("c-{i}"), "r", false),
                _ => continue,
            }
        }
        settle(&mut k, 4);
        prop_assert!(k.s.active_deployments().is_empty(), "follow-ups end");
        for i in 0..NODES {
            let n = format!("c-{i}");
            let got = current(&k, &n);
            let canary = (a..=b).contains(&i);
            prop_assert!(got == Some(1) || (canary && got == Some(2)), "{} runs {:?}", n, got);
        }
        let started = k.s.deployments(&DeploymentFilter::default()).len();
        prop_assert!(started <= 1 + NODES + ops.len(), "no chain of follow-ups: {}", started);
    }
}
