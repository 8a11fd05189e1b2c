//! Property tests of the walk back over blank nodes (nothing to restore) with reports in batches, as the
//! server's consumer actor forms them (DEPLOYMENTS.md §6, "rollback order"): every touched node is visited
//! once, in exactly the reverse of the forward order (re-targeted, or counted back at once when it holds
//! nothing), and the nodes counted back that one batch shows running the version after all are re-targeted
//! again in that order too, whatever the batch's order (seed 1068 of the simulation).

use convoy_domain::Strategy;
use convoy_domain::*;
use proptest::prelude::*;
use proptest::strategy::Strategy as PStrategy;
use std::collections::{BTreeMap, BTreeSet};

const NODES: usize = 6;

/// What one node says of `r` in a batch.
#[derive(Clone, Copy, Debug)]
enum Says {
    /// It runs the version `v`, installed and healthy.
    Runs(u64),
    /// Its install of `v` failed; it runs nothing.
    Failed(u64),
    /// It holds nothing of `r` (never installed it, or removed it).
    Nothing,
}

#[derive(Clone, Debug)]
enum Op {
    /// One `ReportNodes` of these nodes, in this order.
    Batch(Vec<(usize, Says)>),
    /// A deployment of version 1 or 2 with this strategy.
    Start(u64, Strategy),
    /// A person rolls the latest deployment back.
    Rollback,
}

fn strategy() -> impl PStrategy<Value = Strategy> {
    prop_oneof![
        any::<bool>().prop_map(|fail_fast| Strategy::AllAtOnce { fail_fast }),
        (1u32..4, 1u32..4).prop_map(|(i, d)| Strategy::Rolling {
            install_window: i,
            download_window: d
        }),
        prop::collection::vec(1u32..4, 1..3).prop_map(|sizes| Strategy::Batch {
            sizes,
            autopause: false
        }),
    ]
}

fn says() -> impl PStrategy<Value = Says> {
    prop_oneof![
        4 => (1u64..3).prop_map(Says::Runs),
        1 => (1u64..3).prop_map(Says::Failed),
        3 => Just(Says::Nothing),
    ]
}

fn op() -> impl PStrategy<Value = Op> {
    prop_oneof![
        6 => prop::collection::vec((0..NODES, says()), 1..5).prop_map(Op::Batch),
        2 => (1u64..3, strategy()).prop_map(|(v, s)| Op::Start(v, s)),
        2 => Just(Op::Rollback),
    ]
}

fn node(i: usize) -> String {
    format!("n-{i}")
}

fn report(i: usize, says: Says) -> NodeReport {
    let done = |error: Option<&str>| VersionProgress {
        downloaded: true,
        installed: error.is_none(),
        done: true,
        error: error.map(String::from),
        healthy: None,
    };
    let (current, versions) = match says {
        Says::Runs(v) => (Some(v), BTreeMap::from([(v, done(None))])),
        Says::Failed(v) => (None, BTreeMap::from([(v, done(Some("boom")))])),
        Says::Nothing => (None, BTreeMap::new()),
    };
    let removed = current.is_none();
    NodeReport {
        node: node(i),
        active: Some(true),
        resources: BTreeMap::from([(
            "r".to_string(),
            ResourceReport {
                interested: None,
                current,
                versions,
                removed,
                log: None,
            },
        )]),
        ..Default::default()
    }
}

fn command(s: &ClusterState, op: &Op) -> Command {
    let latest = s
        .deployments(&DeploymentFilter::default())
        .last()
        .map(|d| d.id)
        .unwrap_or(DeploymentId(1));
    match op.clone() {
        Op::Batch(mut reports) => {
            // One report per node, in the order drawn (not the node order).
            let mut seen = BTreeSet::new();
            reports.retain(|(i, _)| seen.insert(*i));
            Command::ReportNodes(reports.into_iter().map(|(i, s)| report(i, s)).collect())
        }
        Op::Start(v, strategy) => Command::StartDeployment(DeploymentSpec {
            consumer: "c".into(),
            resource: "r".into(),
            version: Some(v),
            strategy: Some(strategy),
            ..DeploymentSpec::default()
        }),
        Op::Rollback => Command::Rollback {
            id: latest,
            message: None,
            by: Actor::User,
        },
    }
}

/// Resource `r` with versions 1 and 2, consumer `c` of blank nodes (they report `r` and hold nothing).
fn setup() -> ClusterState {
    let mut s = ClusterState::default();
    s.apply(Command::CreateResource { name: "r".into() }, 0)
        .unwrap();
    for _ in 0..2 {
        let publish = Command::PublishVersion {
            resource: "r".into(),
            label: None,
            artifact: None,
            metadata: BTreeMap::new(),
            depends_on: vec![],
            health_port: None,
        };
        s.apply(publish, 0).unwrap();
    }
    let nodes = (0..NODES).map(node).collect();
    s.apply(
        Command::CreateConsumer {
            name: "c".into(),
            nodes,
        },
        0,
    )
    .unwrap();
    let blank = (0..NODES).map(|i| report(i, Says::Nothing)).collect();
    s.apply(Command::ReportNodes(blank), 0).unwrap();
    s
}

/// Where each node stands in the forward order (its last admission to install).
fn forward(view: &DeploymentView) -> BTreeMap<String, usize> {
    view.events
        .iter()
        .filter(|e| e.action == Some(EventKind::Install))
        .filter_map(|e| e.node.clone())
        .enumerate()
        .map(|(k, n)| (n, k))
        .collect()
}

fn visits(e: &EventView) -> bool {
    matches!(e.action, Some(EventKind::Rollback | EventKind::RolledBack))
}

/// The walk back visits each node once, in exactly the reverse of the forward order; and the nodes
/// re-targeted again by one command (its events from `from` on) come in that order too.
fn check(view: &DeploymentView, from: usize) -> Result<(), TestCaseError> {
    let place = forward(view);
    let mut first = BTreeSet::new();
    let walked: Vec<usize> = view
        .events
        .iter()
        .filter(|e| visits(e))
        .filter_map(|e| e.node.clone())
        .filter(|n| first.insert(n.clone()))
        .map(|n| place[&n])
        .collect();
    prop_assert!(
        walked.windows(2).all(|w| w[0] > w[1]),
        "{}: the walk back visited forward places {:?}",
        view.id,
        walked
    );
    let mut visited: BTreeSet<String> = view.events[..from.min(view.events.len())]
        .iter()
        .filter(|e| visits(e))
        .filter_map(|e| e.node.clone())
        .collect();
    let mut again = Vec::new();
    for e in &view.events[from.min(view.events.len())..] {
        let Some(n) = e.node.clone() else { continue };
        if e.action == Some(EventKind::Rollback) && visited.contains(&n) {
            again.push(place[&n]);
        }
        if visits(e) {
            visited.insert(n);
        }
    }
    prop_assert!(
        again.windows(2).all(|w| w[0] > w[1]),
        "{}: one command re-targeted again forward places {:?}",
        view.id,
        again
    );
    Ok(())
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut s = setup();
    let mut now = 1_000;
    for op in ops {
        now += 1;
        let before: BTreeMap<DeploymentId, usize> = s
            .deployments(&DeploymentFilter::default())
            .iter()
            .filter_map(|d| s.deployment(d.id).map(|v| (d.id, v.events.len())))
            .collect();
        let _ = s.apply(command(&s, op), now);
        for d in s.deployments(&DeploymentFilter::default()) {
            let view = s.deployment(d.id).unwrap();
            check(&view, before.get(&d.id).copied().unwrap_or(0))?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_walk_back_and_the_nodes_landing_after_it_keep_the_reverse_order(
        ops in prop::collection::vec(op(), 1..40)
    ) {
        run(&ops)?;
    }
}
