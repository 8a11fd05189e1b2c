//! Property tests of the fleet-wide limits (issue 24 §3): random fleets of up to three resources on two
//! consumers, random limits on installs and downloads, random strategies and start jitters, nodes that
//! download and install when told (some failing), reporting in random rounds while the clock moves on.
//! Checked after every command: no more nodes install (installing or watching, every deployment counted)
//! than `max_concurrent_installs`, and no more download (told to download, or installing without the
//! version) than `max_concurrent_downloads`; and in the end, when no install fails, every deployment has
//! finished (a limit delays, never deadlocks).

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
    limits: FleetLimits,
    /// Deployments to start, in order: (consumer, resource, strategy, start jitter in ms).
    starts: Vec<(usize, usize, Strategy, u64)>,
    /// Install failures by (node, resource).
    fails: BTreeSet<(usize, usize)>,
    /// Which nodes report in each round (a second passes between rounds).
    rounds: Vec<Vec<bool>>,
}

fn strategy() -> impl PStrategy<Value = Strategy> {
    prop_oneof![
        (1u32..5, 1u32..4).prop_map(|(i, d)| Strategy::Rolling {
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
    (2usize..8).prop_flat_map(|n| {
        let members = prop::collection::btree_set(0..n, 1..=n)
            .prop_map(|s| s.into_iter().collect::<Vec<_>>());
        (
            [members.clone(), members],
            prop::option::weighted(0.8, 1u32..4),
            prop::option::weighted(0.6, 1u32..4),
            prop::collection::vec(
                (
                    0usize..2,
                    0usize..3,
                    strategy(),
                    prop_oneof![Just(0u64), 1u64..5_000],
                ),
                1..5,
            ),
            prop::collection::btree_set((0..n, 0usize..3), 0..3),
            prop::collection::vec(prop::collection::vec(any::<bool>(), n), 40),
        )
            .prop_map(
                move |(members, installs, downloads, starts, fails, rounds)| Case {
                    nodes: n,
                    members,
                    limits: FleetLimits {
                        max_concurrent_installs: installs,
                        max_concurrent_downloads: downloads,
                    },
                    starts,
                    fails,
                    rounds,
                },
            )
    })
}

fn node(i: usize) -> String {
    format!("n{i}")
}

fn consumer(i: usize) -> String {
    format!("c{i}")
}

/// (installing, downloading) over every active deployment.
fn in_flight(k: &Kit) -> (u32, u32) {
    let (mut installs, mut downloads) = (0, 0);
    for id in k.s.active_deployments() {
        let d = k.d(id);
        for n in d.nodes.iter() {
            match n.phase {
                NodePhase::Installing | NodePhase::Watching => {
                    installs += 1;
                    if n.phase == NodePhase::Installing && !n.seen.has(Fact::Have) {
                        downloads += 1;
                    }
                }
                NodePhase::Downloading => downloads += 1,
                _ => {}
            }
        }
    }
    (installs, downloads)
}

fn check(k: &Kit, case: &Case, what: &str) -> Result<(), TestCaseError> {
    let (installs, downloads) = in_flight(k);
    if let Some(m) = case.limits.max_concurrent_installs {
        prop_assert!(
            installs <= m,
            "after {what}: {installs} nodes install, max_concurrent_installs is {m}"
        );
    }
    if let Some(m) = case.limits.max_concurrent_downloads {
        prop_assert!(
            downloads <= m,
            "after {what}: {downloads} nodes download, max_concurrent_downloads is {m}"
        );
    }
    Ok(())
}

/// What node `i` holds of resource `r`: 0 nothing new, 1 downloaded version 2, 2 installed it, 3 failed it.
type Held = BTreeMap<(usize, usize), u8>;

fn report(k: &mut Kit, i: usize, held: &Held) {
    let resources = RESOURCES
        .iter()
        .enumerate()
        .map(|(r, name)| {
            let h = held.get(&(i, r)).copied().unwrap_or(0);
            let mut versions = BTreeMap::from([(1, vp(true, true, None))]);
            match h {
                1 => {
                    versions.insert(2, vp(true, false, None));
                }
                2 => {
                    versions.insert(2, vp(true, true, None));
                }
                3 => {
                    versions.insert(2, vp(true, true, Some("exit 1")));
                }
                _ => {}
            }
            let rr = ResourceReport {
                interested: None,
                current: Some(if h == 2 { 2 } else { 1 }),
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
}

/// Node `i` does what its targets say: downloads version 2 when told to, installs it (or fails) when told to.
fn obey(k: &Kit, case: &Case, i: usize, held: &mut Held) {
    for (r, name) in RESOURCES.iter().enumerate() {
        let Some(t) = k.target(&node(i), name).filter(|t| t.version == 2) else {
            continue;
        };
        let h = held.entry((i, r)).or_insert(0);
        if t.install && *h < 2 {
            *h = if case.fails.contains(&(i, r)) { 3 } else { 2 };
        } else if t.download && *h == 0 {
            *h = 1;
        }
    }
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
    let mut held = Held::new();
    for i in 0..case.nodes {
        report(&mut k, i, &held);
    }
    k.ok(Command::SetFleetLimits {
        limits: case.limits,
        source: LimitSource::Api,
    });
    let mut started = Vec::new();
    for (c, r, strategy, jitter) in &case.starts {
        let mut s = spec(&consumer(*c), RESOURCES[*r], 2, strategy.clone());
        s.rollback_on_failure = Some(false);
        s.force = true;
        s.start_jitter_ms = Some(*jitter);
        // A second deployment of a resource on a consumer is refused while the first runs.
        if let Ok(Response::DeploymentStarted { id, .. }) =
            k.s.apply(Command::StartDeployment(s), k.now)
        {
            started.push(id);
        }
        check(&k, &case, "a start")?;
    }
    for round in &case.rounds {
        k.tick_to(k.now + 1_000);
        check(&k, &case, "a tick")?;
        for (i, reports) in round.iter().enumerate() {
            if *reports {
                obey(&k, &case, i, &mut held);
                report(&mut k, i, &held);
                check(&k, &case, &format!("a report of {}", node(i)))?;
            }
        }
    }
    // Then every node reports until nothing moves (the jitters long passed): every deployment ends.
    for _ in 0..4 * case.nodes * RESOURCES.len() {
        k.tick_to(k.now + 1_000);
        for i in 0..case.nodes {
            obey(&k, &case, i, &mut held);
            report(&mut k, i, &held);
            check(&k, &case, "a final report")?;
        }
    }
    if !case.fails.is_empty() {
        return Ok(());
    }
    for id in started {
        prop_assert!(
            k.status(id).is_terminal(),
            "{id} still {:?}: {:?}",
            k.status(id),
            k.s.deployment_summary(id, k.now)
                .map(|s| (s.counts, s.waiting_for))
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn no_more_nodes_install_or_download_than_the_fleet_limits_and_every_deployment_ends(case in case()) {
        run(case)?;
    }
}
