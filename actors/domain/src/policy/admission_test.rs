use crate::testing::*;
use crate::*;
use std::collections::BTreeSet;

fn rolling_spec(c: &str, r: &str, window: u32) -> DeploymentSpec {
    spec(
        c,
        r,
        2,
        Strategy::Rolling {
            install_window: window,
            download_window: 4,
        },
    )
}

/// Resources `r` (each with versions 1 and 2); consumers by name with their nodes, every node running
/// version 1 of every resource.
fn fleet(resources: &[&str], consumers: &[(&str, &[&str])]) -> Kit {
    let mut k = Kit::empty();
    for r in resources {
        k.ok(Command::CreateResource {
            name: r.to_string(),
        });
        k.publish_to(r);
        k.publish_to(r);
    }
    for (c, nodes) in consumers {
        k.ok(Command::CreateConsumer {
            name: c.to_string(),
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
        });
    }
    let nodes: BTreeSet<&str> = consumers
        .iter()
        .flat_map(|(_, n)| n.iter().copied())
        .collect();
    for n in nodes {
        for r in resources {
            k.report_node(n, r, Some(1), &[(1, vp(true, true, None))]);
        }
    }
    k
}

fn max_unavailable(consumer: &str, t: FailedNodes) -> Command {
    Command::SetBudget {
        consumer: consumer.into(),
        budget: Budget {
            max_unavailable: Some(t),
            min_available: None,
        },
    }
}

/// Nodes installing or watching in any active deployment.
fn installing(k: &Kit) -> BTreeSet<String> {
    k.s.active_set()
        .iter()
        .flat_map(|id| {
            let d = k.d(*id);
            d.nodes
                .iter()
                .filter(|n| matches!(n.phase, NodePhase::Installing | NodePhase::Watching))
                .map(|n| n.id.clone())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn several_resources_rolling_at_once_on_one_consumer_stay_within_its_budget() {
    let nodes = ["n0", "n1", "n2", "n3"];
    let mut k = fleet(&["a", "b", "c"], &[("web", &nodes)]);
    k.ok(max_unavailable("web", FailedNodes::Count(1)));
    let ids: Vec<DeploymentId> = ["a", "b", "c"]
        .iter()
        .map(|r| k.start(rolling_spec("web", r, 2)))
        .collect();
    // Three deployments, each with an install window of 2: one node of the consumer at a time.
    let mut steps = 0;
    while ids.iter().any(|id| k.status(*id) == Status::RollingForward) {
        let now = installing(&k);
        assert!(now.len() <= 1, "more than the budget installs: {now:?}");
        let Some((id, n)) = ids.iter().find_map(|id| {
            k.d(*id)
                .nodes
                .iter()
                .find(|n| n.phase == NodePhase::Installing)
                .map(|n| (*id, n.id.clone()))
        }) else {
            panic!(
                "nothing installs and a deployment still rolls: {:?}",
                k.s.deployment_summary(ids[2], k.now)
            );
        };
        let r = k.d(id).resource.clone();
        k.node_installed(&n, &r, 1, 2);
        steps += 1;
        assert!(steps <= 12, "too many steps");
    }
    for id in ids {
        assert_eq!(k.status(id), Status::RolledForward);
    }
    assert_eq!(steps, 12, "each of 4 nodes installed each of 3 resources");
}

#[test]
fn a_deployment_held_by_the_budget_waits_unpaused_and_names_who_holds_it() {
    let nodes = ["n0", "n1", "n2"];
    let mut k = fleet(&["a", "b"], &[("web", &nodes)]);
    k.ok(max_unavailable("web", FailedNodes::Count(1)));
    let first = k.start(rolling_spec("web", "a", 1));
    let second = k.start(rolling_spec("web", "b", 1));
    assert_eq!(k.phases(first)[0], NodePhase::Installing);
    // n0 installs a: b may take n0 at no cost (it is unavailable already), not n1.
    assert_eq!(k.status(second), Status::RollingForward);
    let summary = k.s.deployment_summary(second, k.now).unwrap();
    assert_eq!(summary.paused_by, None);
    assert_eq!(summary.waiting_for, None, "n0 is free for b");
    k.node_installed("n0", "a", 1, 2);
    // a's next node n1 would be a second disruption while b installs on n0: a waits, unpaused.
    assert_eq!(installing(&k).into_iter().collect::<Vec<_>>(), vec!["n0"]);
    let summary = k.s.deployment_summary(first, k.now).unwrap();
    assert_eq!(summary.status, Status::RollingForward);
    assert_eq!(summary.paused_by, None);
    assert_eq!(summary.waiting_for.as_deref(), Some("budget"));
    let waiting = summary.waiting_on.expect("a waits for the budget");
    assert_eq!(waiting.consumers, vec!["web".to_string()]);
    assert_eq!(waiting.holders, vec![second]);
    let budget = k.s.budget("web").unwrap();
    assert_eq!(
        (
            budget.allowed,
            budget.unavailable,
            budget.disruptions_allowed
        ),
        (1, 1, 0)
    );
    assert_eq!(budget.holders, vec![second]);
    assert_eq!(k.s.consumer("web").unwrap().budget, Some(budget));
    // `deploy why` names the policy holding the next node, and only that node.
    let why = k.s.node_history(first, "n1").unwrap().now;
    assert!(
        why.contains("disruption budget of web") && why.contains(&second.to_string()),
        "{why}"
    );
    assert!(!k
        .s
        .node_history(first, "n2")
        .unwrap()
        .now
        .contains("budget"));
    // b finishes on n0: a goes on with n1.
    k.node_installed("n0", "b", 1, 2);
    assert_eq!(k.phases(first)[1], NodePhase::Installing);
}

#[test]
fn a_node_in_two_consumers_counts_against_both_budgets() {
    let mut k = fleet(
        &["a", "b"],
        &[("one", &["n0", "shared"]), ("two", &["n2", "shared"])],
    );
    k.ok(max_unavailable("two", FailedNodes::Count(1)));
    let on_two = k.start(rolling_spec("two", "b", 2));
    assert_eq!(
        k.phases(on_two),
        vec![NodePhase::Installing, NodePhase::Downloading]
    );
    // "one" has no budget, but its node "shared" is in "two", whose budget n2 spent.
    let on_one = k.start(rolling_spec("one", "a", 2));
    assert_eq!(
        k.phases(on_one),
        vec![NodePhase::Installing, NodePhase::Downloading]
    );
    let waiting =
        k.s.deployment_summary(on_one, k.now)
            .unwrap()
            .waiting_on
            .unwrap();
    assert_eq!(waiting.consumers, vec!["two".to_string()]);
    assert_eq!(waiting.holders, vec![on_two]);
    k.node_installed("n2", "b", 1, 2);
    // The slot n2 freed goes to the older deployment first: "two" takes "shared" for b, and "one" may
    // then install a on it at no further cost.
    assert_eq!(k.phases(on_two)[1], NodePhase::Installing);
    assert_eq!(k.phases(on_one)[1], NodePhase::Installing);
}

#[test]
fn inactive_nodes_spend_the_budget_and_downloads_do_not() {
    let nodes = ["n0", "n1", "n2", "n3"];
    let mut k = fleet(&["a"], &[("web", &nodes)]);
    k.ok(max_unavailable("web", FailedNodes::Count(1)));
    k.ok(Command::MarkInactive {
        nodes: vec!["n3".into()],
    });
    let id = k.start(rolling_spec("web", "a", 2));
    // n3 is down already (and out of the deployment): nothing installs, but the download window fills.
    assert_eq!(k.phases(id), vec![NodePhase::Downloading; 3]);
    assert_eq!(k.s.budget("web").unwrap().unavailable, 1);
    k.report_node("n3", "a", Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(k.phases(id)[0], NodePhase::Installing);
}

#[test]
fn removing_the_last_budget_lets_the_deployments_windows_decide_at_once() {
    let nodes = ["n0", "n1", "n2"];
    let mut k = fleet(&["a"], &[("web", &nodes)]);
    k.ok(max_unavailable("web", FailedNodes::Count(1)));
    let id = k.start(rolling_spec("web", "a", 3));
    assert_eq!(installing(&k).len(), 1);
    k.ok(Command::DeleteBudget {
        consumer: "web".into(),
    });
    assert_eq!(installing(&k).len(), 3);
    assert_eq!(k.s.budget("web"), None);
    let err = k.err(Command::DeleteBudget {
        consumer: "web".into(),
    });
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(k.status(id), Status::RollingForward);
}

#[test]
fn a_budget_is_refused_for_an_unknown_consumer_or_with_both_limits_and_goes_with_its_consumer() {
    let mut k = fleet(&["a"], &[("web", &["n0"])]);
    let err = k.err(max_unavailable("nope", FailedNodes::Count(1)));
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let err = k.err(Command::SetBudget {
        consumer: "web".into(),
        budget: Budget {
            max_unavailable: Some(FailedNodes::Count(1)),
            min_available: Some(FailedNodes::Count(1)),
        },
    });
    assert_eq!(err.kind(), ErrorKind::Invalid);
    assert_eq!(k.s.budget("web"), None);
    k.ok(max_unavailable("web", FailedNodes::Percent(50)));
    assert_eq!(k.s.budget("web").unwrap().allowed, 1);
    k.ok(Command::DeleteConsumer { name: "web".into() });
    assert_eq!(k.s.budget("web"), None);
}

#[test]
fn batches_are_cut_by_the_budget() {
    let nodes = ["n0", "n1", "n2", "n3"];
    let mut k = fleet(&["a"], &[("web", &nodes)]);
    k.ok(max_unavailable("web", FailedNodes::Count(2)));
    let id = k.start(spec(
        "web",
        "a",
        2,
        Strategy::Batch {
            sizes: vec![4],
            autopause: false,
        },
    ));
    assert_eq!(
        installing(&k).len(),
        2,
        "a batch of 4 cut to the budget of 2"
    );
    k.node_installed("n0", "a", 1, 2);
    assert_eq!(
        installing(&k).len(),
        1,
        "the batch is what the budget let in"
    );
    k.node_installed("n1", "a", 1, 2);
    assert_eq!(installing(&k).len(), 2, "the next batch, cut again");
    k.node_installed("n2", "a", 1, 2);
    k.node_installed("n3", "a", 1, 2);
    assert_eq!(k.status(id), Status::RolledForward);
}

#[test]
fn a_rollback_is_admitted_past_the_budget() {
    let nodes = ["n0", "n1", "n2"];
    let mut k = fleet(&["a"], &[("web", &nodes)]);
    k.ok(max_unavailable("web", FailedNodes::Count(1)));
    let id = k.start(spec(
        "web",
        "a",
        2,
        Strategy::AllAtOnce { fail_fast: false },
    ));
    assert_eq!(installing(&k).len(), 1, "all at once, within the budget");
    k.node_installed("n0", "a", 1, 2);
    assert_eq!(installing(&k).len(), 1);
    k.node_installed("n1", "a", 1, 2);
    assert_eq!(installing(&k).len(), 1);
    // n0 and n1 run version 2 and go back to 1 together; n2 never left 1.
    k.ok(Command::Rollback {
        id,
        message: None,
        by: Actor::User,
    });
    let rolling_back = k
        .phases(id)
        .into_iter()
        .filter(|p| *p == NodePhase::RollingBack)
        .count();
    assert_eq!(rolling_back, 2, "repairs are admitted past the budget");
}

#[test]
fn a_rolling_deployment_whose_failed_nodes_hold_every_budget_slot_fails_naming_the_budget() {
    // Issue 36 item 4: the window rule counted `install_window` (3), not the one slot the budget grants,
    // so a tolerated failure holding it stalled the deployment for good.
    for n in [4, 12] {
        let nodes: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
        let names: Vec<&str> = nodes.iter().map(String::as_str).collect();
        let mut k = fleet(&["a"], &[("web", &names)]);
        k.ok(max_unavailable("web", FailedNodes::Count(1)));
        let mut s = rolling_spec("web", "a", 3);
        s.max_failed_nodes = Some(FailedNodes::Count(1));
        let id = k.start(s);
        assert_eq!(k.phases(id)[0], NodePhase::Installing);
        k.install_failed("n0", "a", 1, 2);
        assert_eq!(k.phases(id)[0], NodePhase::Failed);
        assert!(
            matches!(k.status(id), Status::RollingBack | Status::RolledBack),
            "n = {n}: {:?}",
            k.status(id)
        );
        let why = k
            .d(id)
            .events
            .iter()
            .find(|e| e.status == Some(Status::RollingBack))
            .and_then(|e| e.message.clone())
            .unwrap();
        assert_eq!(
            why,
            "disruption budget of web (1 unavailable at most) is entirely taken by 1 failed nodes of this deployment: node n1 can never be admitted"
        );
    }
}

#[test]
fn a_budget_slot_another_cause_holds_may_free_so_the_deployment_waits() {
    let mut k = fleet(&["a"], &[("web", &["n0", "n1", "n2", "n3"])]);
    k.ok(max_unavailable("web", FailedNodes::Count(2)));
    let mut s = rolling_spec("web", "a", 3);
    s.max_failed_nodes = Some(FailedNodes::Count(1));
    let id = k.start(s);
    k.install_failed("n0", "a", 1, 2);
    // n3 went silent: the second slot is its, and it may come back.
    k.ok(Command::MarkInactive {
        nodes: vec!["n3".into()],
    });
    k.node_installed("n1", "a", 1, 2);
    assert_eq!(k.status(id), Status::RollingForward);
    k.report_node("n3", "a", Some(1), &[(1, vp(true, true, None))]);
    assert!(matches!(
        k.phases(id)[2],
        NodePhase::Installing | NodePhase::Succeeded
    ));
}
