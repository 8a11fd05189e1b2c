//! One test per row of ARCHITECTURE's cross-entity table ("a node in several consumers").

use super::{LeftOut, Membership};
use crate::testing::*;
use crate::*;

/// Node `c-1` of consumer `c` (of `c-0`, `c-1`) is also in consumer `d`, after `d-0`.
fn shared() -> Kit {
    let mut k = Kit::new(2);
    k.ok(Command::CreateConsumer {
        name: "d".into(),
        nodes: vec!["d-0".into(), "c-1".into()],
    });
    k.report_node("d-0", "r", Some(1), &[(1, vp(true, true, None))]);
    k
}

fn node<'k>(k: &'k Kit, id: &str) -> &'k NodeState {
    k.s.node_table().get(id).expect("known node")
}

/// Both nodes of `c` fail version 2 in deployment `id`, which rolls back: version 2 is held back on `c`.
fn rolled_back_on_evidence(k: &mut Kit, id: DeploymentId) {
    for i in 0..2 {
        k.failed(i);
    }
    for i in 0..2 {
        k.report(i, Some(1), &[(1, vp(true, true, None))]);
    }
    assert_eq!(k.status(id), Status::RolledBack);
}

fn all_at_once(k: &mut Kit, consumer: &str) -> DeploymentId {
    k.start(spec(
        consumer,
        "r",
        2,
        Strategy::AllAtOnce { fail_fast: false },
    ))
}

#[test]
fn which_consumers_it_is_in_by_name_kept_with_their_node_lists() {
    let mut k = shared();
    k.ok(Command::CreateConsumer {
        name: "a".into(),
        nodes: vec!["c-1".into()],
    });
    let of = |k: &Kit| {
        Membership::consumers_of(node(k, "c-1"))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(of(&k), ["a", "c", "d"]);
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec![],
        remove: vec!["c-1".into()],
    });
    assert_eq!(of(&k), ["a", "d"]);
}

#[test]
fn which_deployment_of_a_resource_it_follows_one_at_a_time_whatever_the_consumer() {
    let mut k = shared();
    let on_c = all_at_once(&mut k, "c");
    let on_d = all_at_once(&mut k, "d");
    let of =
        |k: &Kit, n: &str, r: &str| Membership::deployment_of(node(k, n), r, k.s.deployment_map());
    assert_eq!(of(&k, "c-1", "r"), Some(on_c), "the first start took it");
    assert_eq!(of(&k, "d-0", "r"), Some(on_d));
    assert_eq!(of(&k, "c-1", "other"), None);
    k.ok(abort(on_c, None, Actor::User));
    assert_eq!(
        of(&k, "c-1", "r"),
        None,
        "an ended deployment takes nothing"
    );
}

#[test]
fn which_deployments_take_it_active_interested_not_held_elsewhere_not_taken() {
    let mut k = shared();
    let m = k.s.selection().membership();
    let takes = |n: &str, consumer: &str| {
        m.takes(node(&k, n), consumer, "r", 2, k.s.deployment_map())
            .map_err(|l| l.why("r", 2))
    };
    assert_eq!(takes("c-1", "d"), Ok(()));
    let on_c = all_at_once(&mut k, "c");
    let m = k.s.selection().membership();
    let taken = m.takes(node(&k, "c-1"), "d", "r", 2, k.s.deployment_map());
    assert_eq!(
        taken,
        Err(LeftOut::Taken {
            deployment: on_c,
            consumer: "c"
        })
    );
    // Both nodes fail version 2: the rollback holds it back on `c`, which keeps it off c-1 on `d` too.
    rolled_back_on_evidence(&mut k, on_c);
    let m = k.s.selection().membership();
    let held = m.takes(node(&k, "c-1"), "d", "r", 2, k.s.deployment_map());
    assert!(
        matches!(held, Err(LeftOut::Held { consumer: "c", .. })),
        "{held:?}"
    );
    assert_eq!(
        m.takes(node(&k, "c-1"), "c", "r", 2, k.s.deployment_map()),
        Ok(()),
        "its own consumer's hold is the start's to refuse, not the node's"
    );
    k.ok(Command::MarkInactive {
        nodes: vec!["d-0".into()],
    });
    let m = k.s.selection().membership();
    let inactive = m.takes(node(&k, "d-0"), "d", "r", 2, k.s.deployment_map());
    assert_eq!(inactive, Err(LeftOut::Inactive));
}

#[test]
fn which_subscription_gives_it_its_target_its_consumers_by_name() {
    let mut k = shared();
    k.subscribe("d", "r", Mode::Weak, None);
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: Some(1),
        policy: Policy::default(),
    });
    let m = k.s.selection().membership();
    let order: Vec<&str> = m.subscribers_of(node(&k, "c-1")).map(|(c, _)| c).collect();
    assert_eq!(order, ["c", "d"], "tried by name");
    // `c` is first and pins version 1: c-1 follows it, not d's selection of version 2.
    let version = |n: &str| k.target(n, "r").map(|t| t.version);
    assert_eq!(version("c-1"), Some(1));
    assert_eq!(version("d-0"), Some(2));
}

#[test]
fn which_subscriptions_slot_it_takes_the_first_subscribing_consumer_outside_a_deployment() {
    let mut k = shared();
    k.subscribe("d", "r", Mode::Weak, None);
    let m = k.s.selection().membership();
    let follows = |k: &Kit, n: &str| {
        m.follows(node(k, n), "r", k.s.deployment_map())
            .map(String::from)
    };
    assert_eq!(
        follows(&k, "c-1").as_deref(),
        Some("d"),
        "c does not subscribe"
    );
    assert_eq!(follows(&k, "c-0"), None, "no consumer of c-0 subscribes");
    all_at_once(&mut k, "d");
    let m = k.s.selection().membership();
    let inside = m.follows(node(&k, "c-1"), "r", k.s.deployment_map());
    assert_eq!(
        inside, None,
        "inside a deployment it follows the deployment"
    );
}

#[test]
fn which_holds_keep_a_version_off_it_its_consumers_first_then_every_other() {
    let mut k = shared();
    let on_c = all_at_once(&mut k, "c");
    rolled_back_on_evidence(&mut k, on_c);
    let m = k.s.selection().membership();
    let holders = |n: &str, consumer: &str, v: u64| -> Vec<String> {
        m.holds_on(node(&k, n), consumer, "r", v)
            .map(|(c, _)| c.to_string())
            .collect()
    };
    assert_eq!(
        holders("c-1", "d", 2),
        ["c"],
        "held on c, another consumer of c-1"
    );
    assert_eq!(
        holders("c-1", "c", 2),
        ["c"],
        "its own consumer's hold, once"
    );
    assert!(holders("d-0", "d", 2).is_empty(), "d-0 is not in c");
    assert!(holders("c-1", "d", 1).is_empty());
}

#[test]
fn who_takes_its_reports_its_first_consumer_or_any_while_it_still_removes() {
    let mut k = shared();
    k.subscribe("d", "r", Mode::Weak, None);
    let m = k.s.selection().membership();
    assert_eq!(m.report_consumer(node(&k, "c-1")), Some("c"));
    k.ok(Command::UpdateConsumerNodes {
        name: "d".into(),
        add: vec![],
        remove: vec!["d-0".into()],
    });
    let m = k.s.selection().membership();
    let gone = node(&k, "d-0");
    assert!(gone.removing.contains("r"), "it must remove r");
    assert_eq!(
        m.report_consumer(gone),
        Some("c"),
        "the first consumer of the state"
    );
    k.report_node("stray", "r", None, &[]);
    let m = k.s.selection().membership();
    assert_eq!(m.report_consumer(node(&k, "stray")), None);
}

#[test]
fn liveness_once_per_node_while_it_is_active_in_some_consumer() {
    let mut k = shared();
    assert!(Membership::expects_reports(node(&k, "c-1")));
    k.report_node("stray", "r", None, &[]);
    assert!(
        !Membership::expects_reports(node(&k, "stray")),
        "in no consumer"
    );
    k.ok(Command::MarkInactive {
        nodes: vec!["c-1".into()],
    });
    assert!(!Membership::expects_reports(node(&k, "c-1")));
    let expected: Vec<&str> = k.s.reporting_nodes().collect();
    assert_eq!(expected, ["c-0", "d-0"], "each node once");
}

#[test]
fn leaving_one_consumer_keeps_what_another_still_subscribes_to() {
    let mut k = shared();
    k.subscribe("c", "r", Mode::Weak, None);
    k.subscribe("d", "r", Mode::Weak, None);
    let m = k.s.selection().membership();
    assert!(m.wanted(node(&k, "c-1"), "r"));
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec![],
        remove: vec!["c-1".into(), "c-0".into()],
    });
    let m = k.s.selection().membership();
    assert!(m.wanted(node(&k, "c-1"), "r"), "d still subscribes");
    assert!(!node(&k, "c-1").removing.contains("r"));
    assert!(!m.wanted(node(&k, "c-0"), "r"), "c-0 is in no consumer now");
    assert!(node(&k, "c-0").removing.contains("r"));
}

#[test]
fn leaving_every_consumer_and_deployment_makes_it_forgettable() {
    let mut k = shared();
    let on_d = all_at_once(&mut k, "d");
    for name in ["c", "d"] {
        k.ok(Command::UpdateConsumerNodes {
            name: name.into(),
            add: vec![],
            remove: vec!["c-1".into()],
        });
    }
    assert!(Membership::forgettable(node(&k, "c-1")), "it left both");
    assert!(
        !Membership::forgettable(node(&k, "d-0")),
        "in d and in {on_d}"
    );
    k.ok(Command::UpdateConsumerNodes {
        name: "d".into(),
        add: vec![],
        remove: vec!["d-0".into()],
    });
    assert!(Membership::forgettable(node(&k, "d-0")));
}
