use crate::testing::*;
use crate::*;

const H: u64 = 3_600_000;
const MIN: u64 = 60_000;

fn one_at_a_time(k: &Kit) -> DeploymentPlan {
    k.s.plan_deployment(&spec(
        "c",
        "r",
        2,
        Strategy::Rolling {
            install_window: 1,
            download_window: 1,
        },
    ))
    .unwrap()
}

fn window(kind: WindowKind, schedule: &str, duration_ms: u64) -> Command {
    Command::CreateWindow(Window {
        name: "w".into(),
        kind,
        schedule: schedule.into(),
        duration_ms,
        time_zone: "UTC".into(),
        applies_to: AppliesTo::default(),
        overrun: Overrun::FinishInFlight,
        allow_rollback: true,
    })
}

#[test]
fn without_windows_the_waves_follow_each_other_at_the_stated_time_per_node() {
    let mut k = Kit::new(4);
    k.now = 10 * H;
    let plan = one_at_a_time(&k);
    let f = k.s.plan_finish(&plan.planned(), k.now, None);
    assert_eq!(f.waves, 4);
    assert_eq!(f.per_node_ms, 60_000);
    assert_eq!(f.at, Some(10 * H + 4 * MIN));
    assert!(!f.never);
    assert!(
        f.assumption.contains("typical install of 60000 ms"),
        "{}",
        f.assumption
    );
    let given = k.s.plan_finish(&plan.planned(), k.now, Some(10 * MIN));
    assert_eq!(given.at, Some(10 * H + 40 * MIN));
    assert!(given.assumption.contains("(given)"), "{}", given.assumption);
}

#[test]
fn waves_start_only_inside_the_windows_openings() {
    let mut k = Kit::new(4);
    k.now = 10 * H;
    // Open the first half of every hour; 20 minutes a node: 10:00 and 10:20 start in the first opening,
    // 11:00 and 11:20 in the next; the last ends at 11:40.
    k.ok(window(WindowKind::Allow, "0 * * * *", 30 * MIN));
    let plan = one_at_a_time(&k);
    let f = k.s.plan_finish(&plan.planned(), k.now, Some(20 * MIN));
    assert_eq!(f.at, Some(11 * H + 40 * MIN));
    // Planned at 10:45, while closed: the first wave waits for 11:00.
    let f =
        k.s.plan_finish(&plan.planned(), 10 * H + 45 * MIN, Some(20 * MIN));
    assert_eq!(f.at, Some(12 * H + 40 * MIN));
}

#[test]
fn the_fleet_limit_splits_the_waves() {
    let mut k = Kit::new(4);
    k.ok(Command::SetFleetLimits {
        limits: FleetLimits {
            max_concurrent_installs: Some(3),
            max_concurrent_downloads: None,
        },
        source: LimitSource::Api,
    });
    let plan =
        k.s.plan_deployment(&spec("c", "r", 2, Strategy::AllAtOnce { fail_fast: false }))
            .unwrap();
    let f = k.s.plan_finish(&plan.planned(), k.now, Some(MIN));
    assert_eq!(f.waves, 2, "4 nodes at most 3 at once");
    assert_eq!(f.at, Some(k.now + 2 * MIN));
    assert!(
        f.assumption.contains("at most 3 nodes at once"),
        "{}",
        f.assumption
    );
}

#[test]
fn a_deny_window_always_in_force_means_never() {
    let mut k = Kit::new(2);
    k.ok(window(WindowKind::Deny, "* * * * *", 2 * MIN));
    let f = k.s.plan_finish(&one_at_a_time(&k).planned(), k.now, None);
    assert_eq!((f.at, f.never), (None, true));
}
