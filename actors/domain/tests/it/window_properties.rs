//! Property tests of maintenance windows (issue 24 §2): random allow and deny windows in three time zones
//! (over the March 2026 change to summer time in Europe, and New York's two weeks earlier), a deployment
//! rolling through them while time moves in random steps and nodes install what they are told. Checked on
//! every admission: no node is admitted to install inside a deny window or outside every allow window (when
//! any exists), judged from the windows' schedules alone; and a deployment the windows paused is paused only
//! while they hold it.

use convoy_domain::testing::*;
use convoy_domain::Strategy;
use convoy_domain::*;
use proptest::prelude::*;
use proptest::strategy::Strategy as PStrategy;

const MIN: u64 = 60_000;
/// 2026-03-28 20:00 UTC: the European change to summer time is the next night.
const START: u64 = 1_774_728_000_000;

const SCHEDULES: [&str; 5] = [
    "0 * * * *",
    "30 */2 * * *",
    "0 1,2,3 * * *",
    "15,45 * * * *",
    "0 22 * * 6",
];
const ZONES: [&str; 3] = ["UTC", "Europe/Berlin", "America/New_York"];

fn window() -> impl PStrategy<Value = Window> {
    (any::<bool>(), 0..SCHEDULES.len(), 0..ZONES.len(), 5u64..120).prop_map(|(allow, s, z, m)| {
        Window {
            name: String::new(),
            kind: if allow {
                WindowKind::Allow
            } else {
                WindowKind::Deny
            },
            schedule: SCHEDULES[s].into(),
            duration_ms: m * MIN,
            time_zone: ZONES[z].into(),
            applies_to: AppliesTo::default(),
            overrun: Overrun::FinishInFlight,
            allow_rollback: true,
        }
    })
}

#[derive(Clone, Debug)]
struct Case {
    nodes: usize,
    windows: Vec<Window>,
    strategy: Strategy,
    /// Minutes to move the clock before each round, and whether the told nodes report in that round.
    steps: Vec<(u64, bool)>,
}

fn case() -> impl PStrategy<Value = Case> {
    (
        2usize..6,
        prop::collection::vec(window(), 1..4),
        prop_oneof![
            (1u32..3).prop_map(|i| Strategy::Rolling {
                install_window: i,
                download_window: 1
            }),
            Just(Strategy::AllAtOnce { fail_fast: false }),
        ],
        prop::collection::vec((1u64..50, any::<bool>()), 10..60),
    )
        .prop_map(|(nodes, windows, strategy, steps)| Case {
            nodes,
            windows,
            strategy,
            steps,
        })
}

/// Whether the windows forbid admitting at `t`, from their schedules alone.
fn closed(windows: &[Window], t: u64) -> bool {
    let open = |w: &Window| w.schedule().unwrap().in_force(t);
    let deny = windows
        .iter()
        .any(|w| w.kind == WindowKind::Deny && open(w));
    let allows: Vec<&Window> = windows
        .iter()
        .filter(|w| w.kind == WindowKind::Allow)
        .collect();
    deny || (!allows.is_empty() && !allows.iter().any(|w| open(w)))
}

fn check(k: &Kit, case: &Case, id: DeploymentId) -> Result<(), TestCaseError> {
    let d = k.d(id);
    for e in d.events.iter() {
        if e.kind == EventKind::Install {
            prop_assert!(
                !closed(&case.windows, e.at),
                "node {:?} admitted at {} while the windows hold it",
                e.node,
                e.at
            );
        }
    }
    if d.paused_by() == Some(PausedBy::Window) {
        prop_assert!(
            closed(&case.windows, k.now),
            "paused by open windows at {}",
            k.now
        );
    }
    Ok(())
}

fn run(case: Case) -> Result<(), TestCaseError> {
    let mut k = Kit::new(case.nodes);
    k.now = START;
    for (i, w) in case.windows.iter().enumerate() {
        let mut w = w.clone();
        w.name = format!("w{i}");
        k.ok(Command::CreateWindow(w));
    }
    let id = k.start(spec("c", "r", 2, case.strategy.clone()));
    check(&k, &case, id)?;
    for (minutes, report) in &case.steps {
        // The leader ticks the deployment at each deadline on the way, as its timer would.
        let until = k.now + minutes * MIN;
        while let Some(deadline) = k.s.deployment_deadline(id).filter(|d| *d <= until) {
            k.now = deadline.max(k.now);
            k.ok(Command::TickDeployment { id });
            check(&k, &case, id)?;
            if k.s.deployment_deadline(id) == Some(deadline) {
                break;
            }
        }
        k.now = until;
        if *report {
            for i in 0..case.nodes {
                if k.target(&format!("c-{i}"), "r")
                    .is_some_and(|t| t.install && t.version == 2)
                {
                    k.installed(i);
                    check(&k, &case, id)?;
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_node_is_admitted_while_the_windows_hold_its_deployment(case in case()) {
        run(case)?;
    }
}
