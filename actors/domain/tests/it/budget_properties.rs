//! Property tests of disruption budgets (issue 24 §1): random fleets of up to three resources on two
//! consumers sharing nodes, random budgets and strategies, nodes that install when told (some failing),
//! reporting in random rounds. Checked after every command: no budgeted consumer has more nodes
//! installing, watching or failed in active deployments than its budget allows; and in the end, when no
//! budget is 0 and no install fails, every deployment has finished (a budget delays, never deadlocks).

use convoy_domain::testing::*;
use convoy_domain::Strategy;
use convoy_domain::*;
use proptest::prelude::*;
use proptest::strategy::Strategy as PStrategy;
use std::collections::{BTreeMap, BTreeSet};

const RESOURCES: [&str; 3] = ["a", "b", "c"];

#[derive(Clone, Debug)]
struct Case {
    nodes: usize,
    /// Each consumer's nodes, by index (never empty).
    members: [Vec<usize>; 2],
    /// Each consumer's budget, if any.
    budgets: [Option<Budget>; 2],
    /// Deployments to start, in order: (consumer, resource, strategy).
    starts: Vec<(usize, usize, Strategy)>,
    /// Install failures by (node, resource).
    fails: BTreeSet<(usize, usize)>,
    /// Which nodes report in each round.
    rounds: Vec<Vec<bool>>,
}

fn budget() -> impl PStrategy<Value = Option<Budget>> {
    let limit = prop_oneof![
        (0u32..4).prop_map(FailedNodes::Count),
        (1u32..101).prop_map(FailedNodes::Percent),
    ];
    prop::option::weighted(
        0.8,
        (limit, any::<bool>()).prop_map(|(t, max)| Budget {
            max_unavailable: max.then_some(t),
            min_available: (!max).then_some(t),
        }),
    )
}

fn strategy() -> impl PStrategy<Value = Strategy> {
    prop_oneof![
        (1u32..5, 1u32..3).prop_map(|(i, d)| Strategy::Rolling {
            install_window: i,
            download_window: d
        }),
        any::<bool>().prop_map(|fail_fast| Strategy::AllAtOnce { fail_fast }),
        prop::collection::vec(1u32..4, 1..3).prop_map(|sizes| Strategy::Batch {
            sizes,
            autopause: false
        }),
    ]
}

fn case() -> impl PStrategy<Value = Case> {
    (2usize..7).prop_flat_map(|n| {
        let members = prop::collection::btree_set(0..n, 1..=n)
            .prop_map(|s| s.into_iter().collect::<Vec<_>>());
        (
            [members.clone(), members],
            [budget(), budget()],
            prop::collection::vec((0usize..2, 0usize..3, strategy()), 1..5),
            prop::collection::btree_set((0..n, 0usize..3), 0..3),
            prop::collection::vec(prop::collection::vec(any::<bool>(), n), 60),
        )
            .prop_map(move |(members, budgets, starts, fails, rounds)| Case {
                nodes: n,
                members,
                budgets,
                starts,
                fails,
                rounds,
            })
    })
}

fn node(i: usize) -> String {
    format!("n{i}")
}

fn consumer(i: usize) -> String {
    format!("c{i}")
}

/// Per budgeted consumer: (nodes down now, disruptions allowed).
fn down(k: &Kit, case: &Case) -> BTreeMap<usize, (u32, u32)> {
    let mut busy = BTreeSet::new();
    for id in k.s.active_deployments() {
        for n in k.d(id).nodes.iter() {
            if matches!(
                n.phase,
                NodePhase::Installing | NodePhase::Watching | NodePhase::Failed
            ) {
                busy.insert(n.id.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    for c in 0..2 {
        if let Some(b) = case.budgets[c] {
            let members = &case.members[c];
            let count = members.iter().filter(|i| busy.contains(&node(**i))).count() as u32;
            out.insert(c, (count, b.disruptions(members.len() as u32)));
        }
    }
    out
}

fn check(k: &Kit, case: &Case, what: &str) -> Result<(), TestCaseError> {
    for (c, (count, allowed)) in down(k, case) {
        prop_assert!(
            count <= allowed,
            "after {what}: {} has {count} nodes down, its budget allows {allowed}",
            consumer(c)
        );
    }
    Ok(())
}

fn run(case: Case) -> Result<(), TestCaseError> {
    let mut k = Kit::empty();
    for r in RESOURCES {
        k.ok(Command::CreateResource { name: r.into() });
        k.publish_to(r);
        k.publish_to(r);
    }
    for (c, members) in case.members.iter().enumerate() {
        k.ok(Command::CreateConsumer {
            name: consumer(c),
            nodes: members.iter().map(|i| node(*i)).collect(),
        });
    }
    // Every node runs version 1 of every resource: one report of all three.
    let mut current: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let report = |k: &mut Kit, i: usize, current: &BTreeMap<(usize, usize), u64>| {
        let resources = RESOURCES
            .iter()
            .enumerate()
            .map(|(r, name)| {
                let v = current.get(&(i, r)).copied().unwrap_or(1);
                let failed = v == 1 && current.contains_key(&(i, r));
                let mut versions = BTreeMap::from([(1, vp(true, true, None))]);
                if v == 2 {
                    versions.insert(2, vp(true, true, None));
                } else if failed {
                    versions.insert(2, vp(true, true, Some("exit 1")));
                }
                let rr = ResourceReport {
                    interested: None,
                    current: Some(v),
                    versions,
                    removed: false,
                    log: None,
                };
                (name.to_string(), rr)
            })
            .collect();
        k.ok(Command::ReportNodes(vec![NodeReport {
            node: node(i),
            active: Some(true),
            resources,
            ..Default::default()
        }]));
    };
    for i in 0..case.nodes {
        report(&mut k, i, &current);
    }
    for (c, b) in case.budgets.iter().enumerate() {
        if let Some(budget) = b {
            k.ok(Command::SetBudget {
                consumer: consumer(c),
                budget: *budget,
            });
        }
    }
    let mut started = Vec::new();
    for (c, r, strategy) in &case.starts {
        let mut s = spec(&consumer(*c), RESOURCES[*r], 2, strategy.clone());
        s.rollback_on_failure = Some(false);
        s.force = true;
        // A second deployment of a resource on a consumer is refused while the first runs.
        if let Ok(Response::DeploymentStarted { id, .. }) =
            k.s.apply(Command::StartDeployment(s), k.now)
        {
            started.push(id);
        }
        check(&k, &case, "a start")?;
    }
    for round in &case.rounds {
        for (i, reports) in round.iter().enumerate() {
            if !reports {
                continue;
            }
            for (r, name) in RESOURCES.iter().enumerate() {
                let told = k
                    .target(&node(i), name)
                    .is_some_and(|t| t.install && t.version == 2);
                if told && !current.contains_key(&(i, r)) {
                    let v = if case.fails.contains(&(i, r)) { 1 } else { 2 };
                    current.insert((i, r), v);
                }
            }
            report(&mut k, i, &current);
            check(&k, &case, &format!("a report of {}", node(i)))?;
        }
    }
    // Then every node reports until nothing moves: every deployment ends.
    for _ in 0..4 * case.nodes * RESOURCES.len() {
        for i in 0..case.nodes {
            for (r, name) in RESOURCES.iter().enumerate() {
                let told = k
                    .target(&node(i), name)
                    .is_some_and(|t| t.install && t.version == 2);
                if told && !current.contains_key(&(i, r)) {
                    let v = if case.fails.contains(&(i, r)) { 1 } else { 2 };
                    current.insert((i, r), v);
                }
            }
            report(&mut k, i, &current);
            check(&k, &case, "a final report")?;
        }
    }
    // A budget of 0 holds everything on its nodes, and a failed node holds its slot while its deployment
    // runs (an operator aborts or rolls back): the deployments end when neither happens.
    let live = case.fails.is_empty()
        && (0..2).all(|c| {
            case.budgets[c].is_none_or(|b| b.disruptions(case.members[c].len() as u32) > 0)
        });
    if !live {
        return Ok(());
    }
    for id in started {
        prop_assert!(
            k.status(id).is_terminal(),
            "{id} still {:?}: {:?}",
            k.status(id),
            k.s.deployment_summary(id, k.now)
                .map(|s| (s.counts, s.waiting_on))
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn no_consumer_ever_has_more_nodes_down_than_its_budget_and_every_deployment_ends(case in case()) {
        run(case)?;
    }
}
