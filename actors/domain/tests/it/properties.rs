//! Property tests over random command sequences: windows, terminal statuses, rollback order, determinism,
//! and strong-mode targets.

use convoy_domain::Strategy;
use convoy_domain::*;
use proptest::prelude::*;
use proptest::strategy::Strategy as PStrategy;
use std::collections::{BTreeMap, BTreeSet};

const NODES: usize = 7;

#[derive(Clone, Debug)]
enum Op {
    Installed(usize, u64),
    Failed(usize, u64),
    Downloaded(usize, u64),
    Uninterested(usize),
    Inactive(usize),
    Start(Strategy, Option<u64>, bool),
    Pause,
    Resume,
    Abort,
    Rollback,
    Pulse,
    Tick(u64),
    Publish,
}

fn strategy() -> impl PStrategy<Value = convoy_domain::Strategy> {
    prop_oneof![
        Just(convoy_domain::Strategy::AllAtOnce { fail_fast: false }),
        (1u32..4, 1u32..4).prop_map(|(i, d)| convoy_domain::Strategy::Rolling {
            install_window: i,
            download_window: d
        }),
        (prop::collection::vec(1u32..4, 1..3), any::<bool>())
            .prop_map(|(sizes, autopause)| { convoy_domain::Strategy::Batch { sizes, autopause } }),
    ]
}

fn op() -> impl PStrategy<Value = Op> {
    let n = 0..NODES;
    prop_oneof![
        6 => (n.clone(), 1u64..4).prop_map(|(i, v)| Op::Installed(i, v)),
        3 => (n.clone(), 1u64..4).prop_map(|(i, v)| Op::Failed(i, v)),
        2 => (n.clone(), 1u64..4).prop_map(|(i, v)| Op::Downloaded(i, v)),
        1 => n.clone().prop_map(Op::Uninterested),
        1 => n.prop_map(Op::Inactive),
        2 => (strategy(), prop::option::of(Just(5_000u64)), any::<bool>()).prop_map(|(s, p, r)| Op::Start(s, p, r)),
        1 => Just(Op::Pause),
        1 => Just(Op::Resume),
        1 => Just(Op::Abort),
        1 => Just(Op::Rollback),
        2 => Just(Op::Pulse),
        2 => (1u64..8_000).prop_map(Op::Tick),
        1 => Just(Op::Publish),
    ]
}

fn node(i: usize) -> String {
    format!("n-{i}")
}

fn report(
    i: usize,
    current: Option<u64>,
    interested: Option<bool>,
    versions: BTreeMap<u64, VersionProgress>,
) -> Command {
    let rr = ResourceReport {
        interested,
        current,
        versions,
        removed: false,
        log: None,
    };
    Command::ReportNodes(vec![NodeReport {
        node: node(i),
        active: None,
        resources: BTreeMap::from([("r".to_string(), rr)]),
        ..Default::default()
    }])
}

fn ok(done: bool, error: Option<&str>) -> VersionProgress {
    VersionProgress {
        downloaded: true,
        installed: done,
        done,
        error: error.map(String::from),
        healthy: None,
    }
}

/// Turns ops into commands against the state as it is (ids of the latest deployment).
fn command(s: &ClusterState, op: &Op, now: &mut u64) -> Command {
    let latest = s
        .deployments(&DeploymentFilter::default())
        .last()
        .map(|d| d.id)
        .unwrap_or(DeploymentId(1));
    match op.clone() {
        Op::Installed(i, v) => report(
            i,
            Some(v),
            None,
            BTreeMap::from([(1, ok(true, None)), (v, ok(true, None))]),
        ),
        Op::Failed(i, v) => report(
            i,
            Some(1),
            None,
            BTreeMap::from([(1, ok(true, None)), (v, ok(true, Some("boom")))]),
        ),
        Op::Downloaded(i, v) => report(i, None, None, BTreeMap::from([(v, ok(false, None))])),
        Op::Uninterested(i) => report(i, None, Some(false), BTreeMap::new()),
        Op::Inactive(i) => Command::MarkInactive {
            nodes: vec![node(i)],
        },
        Op::Start(strategy, pulse, rollback) => Command::StartDeployment(DeploymentSpec {
            consumer: "c".into(),
            resource: "r".into(),
            strategy: Some(strategy),
            pulse_interval_ms: pulse,
            rollback_on_failure: Some(rollback),
            max_failed_nodes: Some(FailedNodes::Count(1)),
            ..DeploymentSpec::default()
        }),
        Op::Pause => Command::Pause {
            id: latest,
            message: None,
            by: Actor::User,
        },
        Op::Resume => Command::Resume {
            id: latest,
            message: None,
            by: Actor::User,
        },
        Op::Abort => Command::Abort {
            id: latest,
            message: None,
            by: Actor::User,
        },
        Op::Rollback => Command::Rollback {
            id: latest,
            message: None,
            by: Actor::User,
        },
        Op::Pulse => Command::Pulse {
            id: latest,
            by: Actor::Pulse,
        },
        Op::Tick(dt) => {
            *now += dt;
            Command::Tick
        }
        Op::Publish => Command::PublishVersion {
            resource: "r".into(),
            label: None,
            artifact: None,
            metadata: BTreeMap::new(),
            depends_on: vec![],
            health_port: None,
        },
    }
}

fn setup() -> ClusterState {
    let mut s = ClusterState::default();
    s.apply(Command::CreateResource { name: "r".into() }, 0)
        .unwrap();
    for _ in 0..3 {
        s.apply(command(&s, &Op::Publish, &mut 0), 0).unwrap();
    }
    s.apply(
        Command::CreateConsumer {
            name: "c".into(),
            nodes: (0..NODES).map(node).collect(),
        },
        0,
    )
    .unwrap();
    for i in 0..NODES {
        s.apply(
            report(
                i,
                Some(1),
                Some(true),
                BTreeMap::from([(1, ok(true, None))]),
            ),
            0,
        )
        .unwrap();
    }
    s
}

/// Runs the ops, checking the invariants after each step; returns the final snapshot.
fn run(ops: &[Op]) -> Result<Vec<u8>, TestCaseError> {
    let mut s = setup();
    let mut now = 1_000;
    let mut terminal: BTreeMap<DeploymentId, Status> = BTreeMap::new();
    for op in ops {
        now += 1;
        let cmd = command(&s, op, &mut now);
        let before = s.snapshot_bytes();
        if s.apply(cmd, now).is_err() {
            prop_assert_eq!(
                before,
                s.snapshot_bytes(),
                "a refused command changed the state"
            );
        }
        for d in s.deployments(&DeploymentFilter::default()) {
            let view = s.deployment(d.id).unwrap();
            if let Some(old) = terminal.get(&d.id) {
                prop_assert_eq!(*old, d.status, "terminal status of {} changed", d.id);
            } else if d.status.is_terminal() {
                terminal.insert(d.id, d.status);
            }
            check_rollback_order(&view)?;
            if d.status.is_terminal() {
                continue;
            }
            let (mut installing, mut downloading) = (0u32, 0u32);
            for n in &view.nodes {
                let t = s.targets(&n.id).get("r").copied();
                if let Some(t) = t {
                    prop_assert!(
                        t.version == view.version || Some(t.version) == n.from_version,
                        "node {} targeted at {} during deployment of {} (from {:?})",
                        n.id,
                        t.version,
                        view.version,
                        n.from_version
                    );
                    installing += u32::from(t.install);
                    downloading += u32::from(t.download);
                }
            }
            if let Strategy::Rolling {
                install_window,
                download_window,
            } = view.settings.strategy
            {
                prop_assert!(
                    installing <= install_window,
                    "{} installing > window {}",
                    installing,
                    install_window
                );
                prop_assert!(
                    downloading <= download_window,
                    "{} downloading > window {}",
                    downloading,
                    download_window
                );
            }
            if let Strategy::Batch { sizes, .. } = &view.settings.strategy {
                prop_assert!(installing <= *sizes.iter().max().unwrap());
            }
        }
    }
    let bytes = s.snapshot_bytes();
    let back = ClusterState::from_snapshot_bytes(&bytes).unwrap();
    prop_assert_eq!(&back, &s);
    prop_assert_eq!(&back.snapshot_bytes(), &bytes);
    Ok(bytes)
}

/// Rollback visits touched nodes in exactly the reverse of the order they were admitted to install.
fn check_rollback_order(view: &DeploymentView) -> Result<(), TestCaseError> {
    let of = |kind: EventKind| -> Vec<String> {
        view.events
            .iter()
            .filter(|e| e.action == Some(kind))
            .filter_map(|e| e.node.clone())
            .collect()
    };
    let installs = of(EventKind::Install);
    // A node that lands on the new version after being counted back is rolled back again; its place
    // in the order is its first admission.
    let mut first = BTreeSet::new();
    let rolled: Vec<String> = of(EventKind::Rollback)
        .into_iter()
        .filter(|n| first.insert(n.clone()))
        .collect();
    let rolled_set: BTreeSet<&String> = rolled.iter().collect();
    let expected: Vec<String> = installs
        .iter()
        .rev()
        .filter(|n| rolled_set.contains(n))
        .cloned()
        .collect();
    prop_assert_eq!(
        &rolled,
        &expected,
        "rollback order is not the reverse of the install order"
    );
    if view.status == Status::RolledBack {
        let skipped: BTreeSet<String> = of(EventKind::Skipped).into_iter().collect();
        for n in installs.iter().filter(|n| !skipped.contains(*n)) {
            prop_assert!(
                rolled_set.contains(n),
                "touched node {} was never rolled back",
                n
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_and_apply_is_deterministic(ops in prop::collection::vec(op(), 1..60)) {
        let first = run(&ops)?;
        let second = run(&ops)?;
        prop_assert_eq!(first, second, "the same commands gave different snapshot bytes");
    }
}
