//! Maintenance windows holding weak subscriptions, with time passed in (issue 35 §6).

use crate::testing::*;
use crate::*;

const H: u64 = 3_600_000;
const MIN: u64 = 60_000;

/// Consumer `c` of 4 nodes on version 1 of `r`, weakly subscribed, at 10:05 UTC.
fn weak_fleet() -> Kit {
    let mut k = Kit::empty();
    k.now = 10 * H + 5 * MIN;
    k.fleet("c", "r", 4);
    k.subscribe("c", "r", Mode::Weak, None);
    k
}

fn targets(k: &Kit) -> Vec<Option<Target>> {
    (0..4).map(|i| k.target(&format!("c-{i}"), "r")).collect()
}

#[test]
fn a_weak_publish_inside_a_deny_window_waits_and_the_close_lets_every_node_take_it() {
    let mut k = weak_fleet();
    // 10:00 to 10:30 every hour.
    k.ok(Command::CreateWindow(window(
        "freeze",
        WindowKind::Deny,
        "0 * * * *",
        30 * MIN,
    )));
    let v = k.publish_to("r");
    assert_eq!(v, 2);
    assert_eq!(targets(&k), vec![stay(1); 4], "nobody moves inside it");
    let wait = k.s.weak_gate().wait("c", "r").expect("held").clone();
    assert_eq!(wait.windows, vec!["freeze".to_string()]);
    assert_eq!(wait.next_change, Some(10 * H + 30 * MIN));
    assert!(!k.s.weak_tick_due(10 * H + 29 * MIN));
    assert!(
        k.s.weak_tick_due(10 * H + 30 * MIN),
        "the leader ticks at the close"
    );
    // A report in the meantime (a command that is not about windows) changes nothing.
    k.now = 10 * H + 20 * MIN;
    k.report_node("c-0", "r", Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(targets(&k), vec![stay(1); 4]);
    k.tick_to(10 * H + 30 * MIN);
    assert_eq!(targets(&k), vec![go(2); 4], "the close lets them go");
    assert!(k.s.weak_gate().wait("c", "r").is_none());
    assert_eq!(
        k.s.weak_gate().check_at,
        Some(11 * H),
        "the next opening is ticked too"
    );
    // 11:00: it opens again; what runs 2 keeps it, what did not get there yet waits.
    k.node_installed("c-0", "r", 1, 2);
    k.tick_to(11 * H);
    assert_eq!(targets(&k)[0], go(2));
    assert_eq!(targets(&k)[1], stay(1));
}

#[test]
fn allow_windows_with_none_open_hold_weak_nodes_until_one_opens() {
    let mut k = weak_fleet();
    // Open 02:00 to 04:00 only.
    k.ok(Command::CreateWindow(window(
        "night",
        WindowKind::Allow,
        "0 2 * * *",
        2 * H,
    )));
    k.publish_to("r");
    assert_eq!(targets(&k), vec![stay(1); 4]);
    assert_eq!(k.s.weak_gate().check_at, Some(26 * H));
    k.tick_to(26 * H);
    assert_eq!(targets(&k), vec![go(2); 4]);
}

#[test]
fn a_window_for_another_consumer_or_resource_holds_nothing_here() {
    let mut k = weak_fleet();
    let mut w = window("elsewhere", WindowKind::Deny, "0 * * * *", 30 * MIN);
    w.applies_to.consumers = Some(vec!["other".into()]);
    k.ok(Command::CreateWindow(w));
    let mut w = window("other-resource", WindowKind::Deny, "0 * * * *", 30 * MIN);
    w.applies_to.resources = Some(vec!["q".into()]);
    k.ok(Command::CreateWindow(w));
    k.publish_to("r");
    assert_eq!(targets(&k), vec![go(2); 4]);
    assert!(k.s.weak_gate().waits.is_empty());
}

#[test]
fn deleting_the_window_lets_them_go_in_the_same_apply() {
    let mut k = weak_fleet();
    k.ok(Command::CreateWindow(window(
        "freeze",
        WindowKind::Deny,
        "0 * * * *",
        30 * MIN,
    )));
    k.publish_to("r");
    assert_eq!(targets(&k), vec![stay(1); 4]);
    k.ok(Command::DeleteWindow {
        name: "freeze".into(),
    });
    assert_eq!(targets(&k), vec![go(2); 4]);
    assert_eq!(*k.s.weak_gate(), WeakGate::default(), "nothing left behind");
}

#[test]
fn a_node_already_on_its_way_finishes_and_a_new_subscription_waits() {
    let mut k = weak_fleet();
    k.publish_to("r");
    // c-0 has downloaded 2 and is installing it when the window comes.
    k.report_node(
        "c-0",
        "r",
        Some(1),
        &[(1, vp(true, true, None)), (2, vp(true, false, None))],
    );
    k.ok(Command::CreateWindow(window(
        "freeze",
        WindowKind::Deny,
        "0 * * * *",
        30 * MIN,
    )));
    let t = targets(&k);
    assert_eq!(t[0], go(2), "in flight: it finishes");
    assert_eq!(&t[1..], &[stay(1), stay(1), stay(1)]);
    // A new weak subscription inside the window: its nodes run nothing and get nothing.
    k.ok(Command::CreateResource { name: "q".into() });
    k.publish_to("q");
    k.subscribe("c", "q", Mode::Weak, None);
    assert_eq!(k.target("c-1", "q"), None);
    // A pin inside the window waits too.
    k.ok(Command::PatchSubscription {
        consumer: "c".into(),
        resource: "r".into(),
        mode: None,
        pin: Change::Set(2),
        policy: PolicyPatch::default(),
    });
    assert_eq!(k.target("c-1", "r"), stay(1));
}

#[test]
fn a_move_back_passes_unless_a_holding_window_refuses_rollbacks() {
    for allow_rollback in [true, false] {
        let mut k = weak_fleet();
        k.publish_to("r");
        for i in 0..4 {
            k.node_installed(&format!("c-{i}"), "r", 1, 2);
        }
        let mut w = window("freeze", WindowKind::Deny, "0 * * * *", 30 * MIN);
        w.allow_rollback = allow_rollback;
        k.ok(Command::CreateWindow(w));
        k.ok(Command::RetractVersion {
            resource: "r".into(),
            version: 2,
            message: Some("bad".into()),
            by: Actor::User,
        });
        let want = if allow_rollback { go(1) } else { stay(2) };
        assert_eq!(
            targets(&k),
            vec![want; 4],
            "allow_rollback {allow_rollback}"
        );
    }
}

#[test]
fn the_record_is_replicated_state_every_server_reads_alike() {
    let mut k = weak_fleet();
    k.ok(Command::CreateWindow(window(
        "freeze",
        WindowKind::Deny,
        "0 * * * *",
        30 * MIN,
    )));
    k.publish_to("r");
    let follower = ClusterState::from_snapshot_bytes(&k.s.snapshot_bytes()).unwrap();
    assert_eq!(follower.weak_gate(), k.s.weak_gate());
    for i in 0..4 {
        let n = format!("c-{i}");
        assert_eq!(follower.targets(&n), k.s.targets(&n));
    }
    // The same commands at the same leader-stamped times make the same state.
    let mut again = weak_fleet();
    again.ok(Command::CreateWindow(window(
        "freeze",
        WindowKind::Deny,
        "0 * * * *",
        30 * MIN,
    )));
    again.publish_to("r");
    assert_eq!(again.s.snapshot_bytes(), k.s.snapshot_bytes());
}

#[test]
fn held_target_keeps_what_the_node_runs() {
    let wait = WeakWait {
        windows: vec!["w".into()],
        since: 0,
        rollback: true,
        next_change: None,
    };
    let mut ns = NodeState::default();
    assert_eq!(
        crate::views::targets::held_target(&wait, &ns, "r", go(2)),
        None,
        "runs nothing: gets nothing"
    );
    ns.resources.insert(
        "r".into(),
        NodeResource {
            current: Some(1),
            ..NodeResource::default()
        },
    );
    assert_eq!(
        crate::views::targets::held_target(&wait, &ns, "r", go(2)),
        stay(1)
    );
    assert_eq!(
        crate::views::targets::held_target(&wait, &ns, "r", go(1)),
        go(1)
    );
    assert_eq!(
        crate::views::targets::held_target(&wait, &ns, "r", Some(Target::uninstall(1))),
        Some(Target::uninstall(1)),
        "a removal is not an install"
    );
}
