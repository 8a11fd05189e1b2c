//! Maintenance windows in the policies' pass, with time passed in.

use crate::testing::*;
use crate::*;

const H: u64 = 3_600_000;
const MIN: u64 = 60_000;

/// Kit::new(4) at 10:00 UTC with an allow window open the first half of every hour, and a rolling
/// deployment (one node at a time) of version 2.
fn half_hourly() -> (Kit, DeploymentId) {
    let mut k = Kit::new(4);
    k.now = 10 * H;
    k.ok(Command::CreateWindow(window(
        "first-half",
        WindowKind::Allow,
        "0 * * * *",
        30 * MIN,
    )));
    let id = k.start(spec(
        "c",
        "r",
        2,
        Strategy::Rolling {
            install_window: 1,
            download_window: 1,
        },
    ));
    (k, id)
}

#[test]
fn a_window_closing_mid_rollout_pauses_it_and_the_next_opening_resumes_it_by_itself() {
    let (mut k, id) = half_hourly();
    assert_eq!(k.phases(id)[0], NodePhase::Installing);
    assert_eq!(k.s.deployment_deadline(id), Some(10 * H + 30 * MIN));
    k.now += MIN;
    k.installed(0);
    assert_eq!(k.phases(id)[1], NodePhase::Installing);
    // 10:30: the window closes. Node 1 is in flight and finishes its install; nothing more is admitted, and no
    // node outcome is judged while the window holds it (DEPLOYMENTS.md §6).
    k.now = 10 * H + 30 * MIN;
    k.ok(Command::TickDeployment { id });
    let d = k.s.deployment(id).unwrap();
    assert_eq!(d.status, Status::RollForwardPaused);
    assert_eq!(d.paused_by, Some(PausedBy::Window));
    k.now += MIN;
    k.installed(1);
    assert_eq!(
        k.phases(id),
        vec![
            NodePhase::Succeeded,
            NodePhase::Installing,
            NodePhase::Pending,
            NodePhase::Pending
        ]
    );
    assert_eq!(
        k.s.deployment_deadline(id),
        Some(11 * H),
        "ticked at the next opening"
    );
    assert_eq!(k.s.window("first-half", k.now).unwrap().holds, vec![id]);
    let why = k.s.node_history(id, "c-2").unwrap().now;
    assert!(why.contains("maintenance window"), "{why}");
    // 11:00: it opens again and the deployment goes on by itself.
    k.now = 11 * H;
    k.ok(Command::TickDeployment { id });
    let d = k.s.deployment(id).unwrap();
    assert_eq!((d.status, d.paused_by), (Status::RollingForward, None));
    assert_eq!(
        k.phases(id)[1],
        NodePhase::Succeeded,
        "judged once it moves"
    );
    assert_eq!(k.phases(id)[2], NodePhase::Installing);
}

#[test]
fn a_deployment_started_outside_every_allow_window_waits_paused_for_the_next() {
    let mut k = Kit::new(2);
    k.now = 10 * H + 40 * MIN;
    k.ok(Command::CreateWindow(window(
        "first-half",
        WindowKind::Allow,
        "0 * * * *",
        30 * MIN,
    )));
    let id = k.start(spec("c", "r", 2, Strategy::AllAtOnce { fail_fast: false }));
    let d = k.s.deployment(id).unwrap();
    assert_eq!(
        (d.status, d.paused_by),
        (Status::RollForwardPaused, Some(PausedBy::Window))
    );
    assert!(
        k.installing("c", "r").is_empty(),
        "nobody installs outside the window"
    );
    k.now = 11 * H;
    k.ok(Command::TickDeployment { id });
    assert_eq!(k.installing("c", "r").len(), 2);
}

#[test]
fn a_users_pause_never_resumes_by_itself() {
    let (mut k, id) = half_hourly();
    // Paused by hand while the window is open: the next opening leaves it paused.
    k.ok(pause(id, None, Actor::User));
    k.now = 11 * H;
    k.ok(Command::TickDeployment { id });
    let d = k.s.deployment(id).unwrap();
    assert_eq!(
        (d.status, d.paused_by),
        (Status::RollForwardPaused, Some(PausedBy::User))
    );
    // Resumed by hand, held by the window at 11:30, then paused by hand while held: the opening at 12:00
    // leaves it paused too.
    k.ok(resume(id, None, Actor::User));
    k.now = 11 * H + 30 * MIN;
    k.ok(Command::TickDeployment { id });
    assert_eq!(
        k.s.deployment(id).unwrap().paused_by,
        Some(PausedBy::Window)
    );
    k.ok(pause(id, Some("incident".into()), Actor::User));
    assert_eq!(k.s.deployment(id).unwrap().paused_by, Some(PausedBy::User));
    k.now = 12 * H;
    k.ok(Command::TickDeployment { id });
    let d = k.s.deployment(id).unwrap();
    assert_eq!(
        (d.status, d.paused_by),
        (Status::RollForwardPaused, Some(PausedBy::User))
    );
}

#[test]
fn a_deny_window_in_force_beats_an_allow_window() {
    let (mut k, id) = half_hourly();
    k.ok(Command::CreateWindow(window(
        "freeze",
        WindowKind::Deny,
        "10 10 * * *",
        10 * MIN,
    )));
    assert_eq!(k.s.deployment_deadline(id), Some(10 * H + 10 * MIN));
    k.now = 10 * H + 10 * MIN;
    k.ok(Command::TickDeployment { id });
    assert_eq!(k.status(id), Status::RollForwardPaused);
    k.now = 10 * H + 20 * MIN;
    k.ok(Command::TickDeployment { id });
    assert_eq!(k.status(id), Status::RollingForward);
    // Deleting every window lets it go on without one.
    k.now = 10 * H + 30 * MIN;
    k.ok(Command::TickDeployment { id });
    assert_eq!(k.status(id), Status::RollForwardPaused);
    k.ok(Command::DeleteWindow {
        name: "first-half".into(),
    });
    k.ok(Command::DeleteWindow {
        name: "freeze".into(),
    });
    assert_eq!(k.status(id), Status::RollingForward);
}

#[test]
fn a_new_leader_finds_the_window_in_the_replicated_deadline() {
    let (mut k, id) = half_hourly();
    k.now = 10 * H + 30 * MIN;
    k.ok(Command::TickDeployment { id });
    assert_eq!(k.status(id), Status::RollForwardPaused);
    // The leader dies while the window is closed: a restored state has the same deadline, and the tick a
    // new leader proposes then resumes the deployment.
    let mut restored = ClusterState::from_snapshot_bytes(&k.s.snapshot_bytes()).unwrap();
    assert_eq!(restored.deployment_deadline(id), Some(11 * H));
    restored
        .apply(Command::TickDeployment { id }, 11 * H)
        .unwrap();
    assert_eq!(
        restored.deployment(id).unwrap().status,
        Status::RollingForward
    );
}

#[test]
fn windows_are_refused_twice_or_malformed_and_list_their_next_openings() {
    let (mut k, _) = half_hourly();
    let err = k.err(Command::CreateWindow(window(
        "first-half",
        WindowKind::Allow,
        "0 * * * *",
        H,
    )));
    assert_eq!(err.kind(), ErrorKind::Conflict);
    let err = k.err(Command::CreateWindow(window(
        "bad",
        WindowKind::Deny,
        "every day",
        H,
    )));
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let err = k.err(Command::DeleteWindow {
        name: "nope".into(),
    });
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let view = k.s.window("first-half", 10 * H + 40 * MIN).unwrap();
    assert!(!view.open);
    assert_eq!(view.next[0].opens_at, 11 * H);
    assert_eq!(view.next[0].closes_at, 11 * H + 30 * MIN);
    assert_eq!(view.next.len(), 5);
    assert_eq!(k.s.windows(0).len(), 1);
}
