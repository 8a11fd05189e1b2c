//! Property test of maintenance windows holding weak subscriptions (issue 35 §6): random allow and deny
//! windows in three time zones, a weakly subscribed consumer whose nodes install at once what they are told,
//! versions published at random times, and the leader's `Tick` at every window change (as its supervisor
//! proposes one when the recorded change comes). Checked after every apply, from the windows' schedules
//! alone: while they hold the consumer no node is told to install a version it does not run, and while they
//! do not, every node is told to take the selected version.

use convoy_domain::testing::*;
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

/// What happens in a round, after the clock moves.
#[derive(Clone, Copy, Debug)]
enum Act {
    Publish,
    Report,
    Nothing,
}

#[derive(Clone, Debug)]
struct Case {
    nodes: usize,
    windows: Vec<Window>,
    /// Minutes to move the clock before each round, and what the round does.
    steps: Vec<(u64, Act)>,
}

fn case() -> impl PStrategy<Value = Case> {
    (
        2usize..6,
        prop::collection::vec(window(), 1..4),
        prop::collection::vec(
            (
                1u64..50,
                prop_oneof![Just(Act::Publish), Just(Act::Report), Just(Act::Nothing)],
            ),
            10..60,
        ),
    )
        .prop_map(|(nodes, windows, steps)| Case {
            nodes,
            windows,
            steps,
        })
}

/// Whether the windows hold the consumer at `t`, from their schedules alone.
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

/// The first time after `t` at which one of the windows opens or closes.
fn next_change(windows: &[Window], t: u64) -> Option<u64> {
    windows
        .iter()
        .filter_map(|w| w.schedule().unwrap().next_change(t))
        .min()
}

fn current(k: &Kit, i: usize) -> Option<u64> {
    k.s.node(&format!("c-{i}"))
        .and_then(|n| n.resources.get("r").and_then(|r| r.current))
}

fn check(k: &Kit, case: &Case) -> Result<(), TestCaseError> {
    let held = closed(&case.windows, k.now);
    let selected = k.s.selected_version("c", "r");
    for i in 0..case.nodes {
        let t = k.target(&format!("c-{i}"), "r");
        let runs = current(k, i);
        if held {
            prop_assert!(
                t.is_none_or(|t| !t.install || Some(t.version) == runs),
                "c-{i} (runs {runs:?}) told {t:?} at {} while the windows hold it",
                k.now
            );
        } else {
            prop_assert!(
                t.is_some_and(|t| t.install && Some(t.version) == selected),
                "c-{i} (runs {runs:?}) told {t:?} at {} with no window holding it (selected {selected:?})",
                k.now
            );
        }
    }
    Ok(())
}

fn run(case: Case) -> Result<(), TestCaseError> {
    let mut k = Kit::new(case.nodes);
    k.now = START;
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: None,
        policy: Policy::default(),
    });
    // The nodes take version 2 before the windows exist.
    for i in 0..case.nodes {
        k.installed(i);
    }
    for (i, w) in case.windows.iter().enumerate() {
        let mut w = w.clone();
        w.name = format!("w{i}");
        k.ok(Command::CreateWindow(w));
    }
    check(&k, &case)?;
    for (minutes, act) in &case.steps {
        let until = k.now + minutes * MIN;
        // The leader ticks at every window change on the way.
        while let Some(change) = next_change(&case.windows, k.now).filter(|c| *c <= until) {
            k.now = change;
            k.ok(Command::Tick);
            check(&k, &case)?;
        }
        k.now = until;
        match act {
            Act::Publish => {
                k.publish(vec![]);
            }
            Act::Report => {
                for i in 0..case.nodes {
                    let from = current(&k, i).unwrap_or(1);
                    if let Some(t) = k.target(&format!("c-{i}"), "r").filter(|t| t.install) {
                        if t.version != from {
                            k.s.apply(
                                Command::ReportNodes(vec![NodeReport {
                                    node: format!("c-{i}"),
                                    resources: [(
                                        "r".to_string(),
                                        ResourceReport {
                                            current: Some(t.version),
                                            versions: [
                                                (from, vp(true, true, None)),
                                                (t.version, vp(true, true, None)),
                                            ]
                                            .into_iter()
                                            .collect(),
                                            ..ResourceReport::default()
                                        },
                                    )]
                                    .into_iter()
                                    .collect(),
                                    ..NodeReport::default()
                                }]),
                                k.now,
                            )
                            .unwrap();
                        }
                    }
                }
            }
            Act::Nothing => {}
        }
        check(&k, &case)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn weak_nodes_install_only_when_no_window_holds_them(case in case()) {
        run(case)?;
    }
}
