//! `overrun: "pause"` (DEPLOYMENTS.md §16): a window closing takes back the nodes admitted but not started,
//! lets the installs under way finish, and the deployment resumes by itself at the next opening; with time
//! passed in.

use crate::testing::*;
use crate::*;

const H: u64 = 3_600_000;
const MIN: u64 = 60_000;

/// Kit::new(4) at 10:00 UTC with an allow window (`overrun`) open the first half of every hour, and a
/// rolling deployment of version 2 with install and download windows of 3.
fn held_window(overrun: Overrun) -> (Kit, DeploymentId) {
    let mut k = Kit::new(4);
    k.now = 10 * H;
    k.ok(Command::CreateWindow(Window {
        name: "first-half".into(),
        kind: WindowKind::Allow,
        schedule: "0 * * * *".into(),
        duration_ms: 30 * MIN,
        time_zone: "UTC".into(),
        applies_to: AppliesTo::default(),
        overrun,
        allow_rollback: true,
    }));
    let mut s = spec(
        "c",
        "r",
        2,
        Strategy::Rolling {
            install_window: 3,
            download_window: 3,
        },
    );
    // Long enough that no node's healthy deadline runs out while the window is closed.
    s.pacing = Some(Pacing {
        healthy_deadline_ms: Some(4 * H),
        ..Pacing::default()
    });
    let id = k.start(s);
    (k, id)
}

#[test]
fn a_closing_window_with_overrun_pause_takes_back_what_has_not_started_and_resumes_at_the_next_opening(
) {
    let (mut k, id) = held_window(Overrun::Pause);
    assert_eq!(
        k.phases(id)[..3],
        [NodePhase::Installing; 3],
        "three admitted while the window is open"
    );
    // Node 0 has started (it holds the version); nodes 1 and 2 have not.
    k.now += MIN;
    k.holding(0);
    // 10:30: the window closes. Node 0 finishes; nodes 1 and 2 are taken back and wait (node 3, told
    // only to prefetch, goes on downloading).
    k.now = 10 * H + 30 * MIN;
    k.ok(Command::TickDeployment { id });
    let d = k.s.deployment(id).unwrap();
    assert_eq!(d.status, Status::RollForwardPaused);
    assert_eq!(d.paused_by, Some(PausedBy::Window));
    assert_eq!(
        k.phases(id),
        vec![
            NodePhase::Installing,
            NodePhase::Pending,
            NodePhase::Pending,
            NodePhase::Downloading
        ]
    );
    assert!(!k.target("c-1", "r").is_some_and(|t| t.install));
    let recalled = k
        .d(id)
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Recalled)
        .count();
    assert_eq!(recalled, 2);
    k.now += MIN;
    k.installed(0);
    assert_eq!(
        k.phases(id)[0],
        NodePhase::Installing,
        "installed, judged once the window lets it move (DEPLOYMENTS.md §6)"
    );
    assert_eq!(
        k.phases(id)[1],
        NodePhase::Pending,
        "nothing admitted while closed"
    );
    // 11:00: the window opens again; the deployment goes on by itself with the nodes taken back.
    k.now = 11 * H;
    k.ok(Command::TickDeployment { id });
    assert_eq!(k.status(id), Status::RollingForward);
    assert_eq!(k.phases(id)[0], NodePhase::Succeeded);
    assert_eq!(
        k.phases(id)[1..],
        [NodePhase::Installing; 3],
        "the nodes taken back are admitted again"
    );
}

#[test]
fn a_closing_window_that_finishes_in_flight_takes_nothing_back() {
    let (mut k, id) = held_window(Overrun::FinishInFlight);
    k.now = 10 * H + 30 * MIN;
    k.ok(Command::TickDeployment { id });
    assert_eq!(k.status(id), Status::RollForwardPaused);
    assert_eq!(k.phases(id)[..3], [NodePhase::Installing; 3]);
}
