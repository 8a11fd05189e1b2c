//! Weak subscriptions under disruption budgets and fleet-wide limits (issue 35 §6).

use super::{judge, Slot};
use crate::testing::*;
use crate::*;

#[test]
fn the_rule_keeps_a_slot_until_the_node_is_at_rest() {
    assert_eq!(
        judge(Some(2), None, true, true),
        Slot::Wants {
            version: 2,
            fetch: true
        }
    );
    assert_eq!(
        judge(Some(3), Some(2), false, false),
        Slot::Keep(3),
        "a new selection keeps the slot"
    );
    assert_eq!(
        judge(None, Some(2), false, false),
        Slot::Keep(2),
        "installing, failed or unhealthy: unavailable"
    );
    assert_eq!(
        judge(None, Some(2), true, false),
        Slot::Free,
        "at rest: the slot goes back"
    );
    assert_eq!(
        judge(None, None, false, false),
        Slot::Free,
        "a health restart of what it ran takes no slot"
    );
}

fn budget(consumer: &str, n: u32) -> Command {
    Command::SetBudget {
        consumer: consumer.into(),
        budget: Budget {
            max_unavailable: Some(FailedNodes::Count(n)),
            min_available: None,
        },
    }
}

/// Consumer `c` of 4 nodes on version 1 of `r`, weakly subscribed.
fn weak_fleet() -> Kit {
    let mut k = Kit::empty();
    k.fleet("c", "r", 4);
    k.subscribe("c", "r", Mode::Weak, None);
    k
}

#[test]
fn a_budget_of_one_lets_one_weak_node_move_at_a_time() {
    let mut k = weak_fleet();
    k.ok(budget("c", 1));
    assert_eq!(k.publish_to("r"), 2);
    assert_eq!(
        k.targets_of("c", "r", 4),
        vec![go(2), stay(1), stay(1), stay(1)]
    );
    assert_eq!(k.s.weak_slots().waiting, 3);
    assert_eq!(
        k.s.budget("c").unwrap().unavailable,
        1,
        "the moving node is unavailable"
    );
    // Installing: still the only one.
    k.report_node(
        "c-0",
        "r",
        Some(1),
        &[(1, vp(true, true, None)), (2, vp(true, false, None))],
    );
    assert_eq!(k.targets_of("c", "r", 4)[1], stay(1));
    // Done and healthy: its slot goes to the next node.
    k.node_installed("c-0", "r", 1, 2);
    assert_eq!(
        k.targets_of("c", "r", 4),
        vec![go(2), go(2), stay(1), stay(1)]
    );
    for i in 1..4 {
        k.node_installed(&format!("c-{i}"), "r", 1, 2);
    }
    assert_eq!(k.targets_of("c", "r", 4), vec![go(2); 4]);
    assert!(k.s.weak_slots().is_empty(), "{:?}", k.s.weak_slots());
}

#[test]
fn two_weak_subscriptions_under_a_budget_of_one_move_one_node() {
    let mut k = weak_fleet();
    k.ok(Command::CreateResource { name: "s".into() });
    k.publish_to("s");
    for i in 0..4 {
        k.report_node(
            &format!("c-{i}"),
            "s",
            Some(1),
            &[(1, vp(true, true, None))],
        );
    }
    k.subscribe("c", "s", Mode::Weak, None);
    k.ok(budget("c", 1));
    k.publish_to("r");
    k.publish_to("s");
    let moving = |k: &Kit, r: &str| {
        k.targets_of("c", r, 4)
            .iter()
            .filter(|t| t.is_some_and(|t| t.install))
            .count()
    };
    assert_eq!((moving(&k, "r"), moving(&k, "s")), (1, 1));
    // The same node moves both: one disruption.
    assert_eq!(k.target("c-0", "s"), go(2));
    assert_eq!(k.s.budget("c").unwrap().unavailable, 1);
}

#[test]
fn a_failed_weak_node_keeps_its_slot() {
    let mut k = weak_fleet();
    k.ok(budget("c", 1));
    k.publish_to("r");
    k.install_failed("c-0", "r", 1, 2);
    assert_eq!(
        k.targets_of("c", "r", 4)[1..],
        vec![stay(1); 3],
        "the failed node is unavailable"
    );
    assert_eq!(k.s.budget("c").unwrap().unavailable, 1);
}

#[test]
fn the_fleet_limit_bounds_weak_installs() {
    let mut k = weak_fleet();
    k.ok(Command::SetFleetLimits {
        limits: FleetLimits {
            max_concurrent_installs: Some(2),
            max_concurrent_downloads: None,
        },
        source: LimitSource::Api,
    });
    k.publish_to("r");
    assert_eq!(
        k.targets_of("c", "r", 4),
        vec![go(2), go(2), stay(1), stay(1)]
    );
    assert_eq!(k.s.fleet_limits_view().installing, 2);
    k.node_installed("c-1", "r", 1, 2);
    assert_eq!(
        k.targets_of("c", "r", 4),
        vec![go(2), go(2), go(2), stay(1)]
    );
}

#[test]
fn a_weak_nodes_slot_counts_against_a_deployment_on_the_same_budget() {
    let mut k = weak_fleet();
    // Consumer `e` shares c-1..c-3 and deploys `s` strongly; `c`'s budget counts every node of `c`.
    k.ok(Command::CreateResource { name: "s".into() });
    k.publish_to("s");
    k.ok(Command::CreateConsumer {
        name: "e".into(),
        nodes: vec!["c-1".into(), "c-2".into(), "c-3".into()],
    });
    for i in 1..4 {
        k.report_node(
            &format!("c-{i}"),
            "s",
            Some(1),
            &[(1, vp(true, true, None))],
        );
    }
    k.subscribe("e", "s", Mode::Strong, None);
    k.ok(budget("c", 1));
    k.publish_to("r");
    assert_eq!(k.target("c-0", "r"), go(2));
    k.publish_to("s");
    assert_eq!(
        k.installing("e", "s"),
        Vec::<String>::new(),
        "the weak node holds c's only slot"
    );
    k.node_installed("c-0", "r", 1, 2);
    assert_eq!(
        k.installing("e", "s").len(),
        1,
        "the slot came back to the deployment"
    );
}
