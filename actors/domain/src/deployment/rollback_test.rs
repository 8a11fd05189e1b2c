use crate::testing::*;
use crate::*;
use std::collections::BTreeMap;

#[test]
fn rollback_restores_from_versions_in_reverse_with_the_window() {
    let mut k = Kit::new(4);
    let id = k.start_with(rolling(2, 1));
    k.installed(0);
    k.installed(1);
    k.installed(2);
    k.op(rollback, id).unwrap();
    assert_eq!(k.d(id).touched, vec![0, 1, 2, 3]);
    // Reverse order 3,2,1,0 in a window of 2; c-3 never left version 1, so it is back at once.
    assert_eq!(k.phases(id)[3], NodePhase::RolledBack);
    assert_eq!(k.flags(4).0, vec![1, 2]);
    let t = k.s.targets("c-2")["r"];
    assert_eq!((t.version, t.install), (1, true));
    k.report(2, Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(k.flags(4).0, vec![0, 1]);
    k.report(1, Some(1), &[(1, vp(true, true, None))]);
    k.report(0, Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(k.d(id).status, Status::RolledBack);
}

#[test]
fn a_node_counted_back_mid_install_is_rolled_back_again_when_it_lands_on_the_new_version() {
    let mut k = Kit::new(4);
    // A download window of 2, so that c-2 and c-3 both fetch while installing.
    let id = k.start_with(rolling(2, 2));
    k.installed(0);
    k.installed(1);
    // c-2 and c-3 are installing version 2 but still report version 1 when the rollback starts.
    k.op(rollback, id).unwrap();
    assert_eq!(k.phases(id)[3], NodePhase::RolledBack);
    // c-3's install finishes after all: it runs version 2 again and must come back, but c-1 and c-0
    // hold both rollback slots: it waits for one.
    k.installed(3);
    assert_eq!(k.phases(id)[3], NodePhase::RolledBack);
    assert!(
        !k.s.targets("c-3")["r"].install,
        "no third install in a window of 2"
    );
    k.report(
        1,
        Some(1),
        &[(1, vp(true, true, None)), (2, vp(true, true, None))],
    );
    assert_eq!(k.phases(id)[3], NodePhase::RollingBack);
    let t = k.s.targets("c-3")["r"];
    assert_eq!((t.version, t.install), (1, true));
    for i in [3, 2, 0] {
        k.report(
            i,
            Some(1),
            &[(1, vp(true, true, None)), (2, vp(true, true, None))],
        );
    }
    assert_eq!(k.d(id).status, Status::RolledBack);
}

#[test]
fn a_late_install_during_rollback_waits_for_a_slot_of_the_window() {
    // Found by the property test: window 1; c-1 done, c-2 installing when the rollback starts; c-2
    // is counted back (it still ran version 1) and c-1 rolls back; then c-2 lands on version 2.
    let mut k = Kit::new(3);
    let id = k.start_with(rolling(1, 1));
    k.installed(0);
    k.installed(1);
    k.op(rollback, id).unwrap();
    assert_eq!(k.phases(id)[1], NodePhase::RollingBack);
    k.installed(2);
    let installing = |k: &Kit| {
        (0..3)
            .filter(|i| k.s.targets(&format!("c-{i}"))["r"].install)
            .count()
    };
    assert_eq!(
        installing(&k),
        1,
        "the install window of 1 holds during the rollback"
    );
    assert_eq!(k.phases(id)[2], NodePhase::RolledBack, "c-2 waits");
    k.report(
        1,
        Some(1),
        &[(1, vp(true, true, None)), (2, vp(true, true, None))],
    );
    assert_eq!(
        k.phases(id)[2],
        NodePhase::RollingBack,
        "c-2 takes the freed slot"
    );
    assert_eq!(installing(&k), 1);
    assert_ne!(
        k.d(id).status,
        Status::RolledBack,
        "not done while c-2 runs version 2"
    );
    k.report(
        2,
        Some(1),
        &[(1, vp(true, true, None)), (2, vp(true, true, None))],
    );
    k.report(
        0,
        Some(1),
        &[(1, vp(true, true, None)), (2, vp(true, true, None))],
    );
    assert_eq!(k.d(id).status, Status::RolledBack);
}

#[test]
fn failure_while_rolling_back_fails_the_deployment() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::Rolling {
            install_window: 1,
            download_window: 1,
        })
    });
    k.installed(0);
    k.op(rollback, id).unwrap();
    assert_eq!(
        k.phases(id),
        vec![NodePhase::RollingBack, NodePhase::RolledBack],
        "c-1 still ran version 1"
    );
    k.report(
        0,
        Some(2),
        &[
            (1, vp(true, true, Some("cannot restore"))),
            (2, vp(true, true, None)),
        ],
    );
    assert_eq!(k.d(id).status, Status::Failed);
    assert!(k
        .d(id)
        .events
        .iter()
        .any(|e| e.message.as_deref() == Some("rollback to version 1 failed: cannot restore")));
}

/// The events of kind `kind` of deployment `id`, as node positions in the order recorded.
fn nodes_of(k: &Kit, id: DeploymentId, kind: EventKind) -> Vec<u32> {
    k.d(id)
        .events
        .iter()
        .filter(|e| e.kind == kind)
        .filter_map(|e| e.node)
        .collect()
}

#[test]
fn one_batch_with_an_earlier_failure_and_later_successes_rolls_back_in_reverse_order() {
    // Found by the simulation (seed 21): blank nodes (no version to restore), all at once, fail-fast;
    // one `ReportNodes` carries c-0's install failure with c-1's and c-2's reports of the new version.
    // Taken in node order, c-0's failure started the walk back while c-1 and c-2 still looked blank
    // (counted back at once), so c-0 was re-targeted first and c-1, c-2 only "again" after it.
    let mut k = Kit::empty();
    k.ok(Command::CreateResource { name: "r".into() });
    let v = k.publish_to("r");
    k.ok(Command::CreateConsumer {
        name: "c".into(),
        nodes: (0..3).map(|i| format!("c-{i}")).collect(),
    });
    for i in 0..3 {
        k.report_node(&format!("c-{i}"), "r", None, &[]);
    }
    let id = k.start(spec("c", "r", v, Strategy::AllAtOnce { fail_fast: true }));
    assert_eq!(k.d(id).touched, vec![0, 1, 2]);
    let report = |i: usize, current: Option<u64>, error: Option<&str>| NodeReport {
        node: format!("c-{i}"),
        active: Some(true),
        resources: BTreeMap::from([(
            "r".to_string(),
            ResourceReport {
                interested: None,
                current,
                versions: BTreeMap::from([(v, vp(true, true, error))]),
                removed: false,
                log: None,
            },
        )]),
        ..Default::default()
    };
    let removed = |i: usize| NodeReport {
        node: format!("c-{i}"),
        active: Some(true),
        resources: BTreeMap::from([(
            "r".to_string(),
            ResourceReport {
                removed: true,
                ..Default::default()
            },
        )]),
        ..Default::default()
    };
    k.ok(Command::ReportNodes(vec![
        report(0, None, Some("exit 1")),
        report(1, Some(v), None),
        report(2, Some(v), None),
    ]));
    assert_eq!(k.status(id), Status::RollingBack);
    assert_eq!(
        nodes_of(&k, id, EventKind::Install),
        vec![0, 1, 2],
        "the forward order"
    );
    assert_eq!(
        nodes_of(&k, id, EventKind::Rollback),
        vec![2, 1, 0],
        "the reverse of the forward order, whatever the batch's order"
    );
    // Each is targeted at what it ran before (nothing: uninstall), and the walk back then ends.
    k.ok(Command::ReportNodes((0..3).rev().map(removed).collect()));
    assert_eq!(k.status(id), Status::RolledBack);
}

/// Node `c-i`'s report of `r`: running `current` (none: it holds nothing), holding `v` when `current` is it.
fn node_report(i: usize, current: Option<u64>, v: u64) -> NodeReport {
    let versions = match current {
        Some(c) if c == v => BTreeMap::from([(v, vp(true, true, None))]),
        _ => BTreeMap::new(),
    };
    NodeReport {
        node: format!("c-{i}"),
        active: Some(true),
        resources: BTreeMap::from([(
            "r".to_string(),
            ResourceReport {
                interested: None,
                current,
                versions,
                removed: current.is_none(),
                log: None,
            },
        )]),
        ..Default::default()
    }
}

/// Consumer `c` of `n` blank nodes (they report `r` and hold nothing of it) and a version `v` of `r`;
/// deployment `strategy` of `v` to them started.
fn blank_fleet(n: usize, strategy: Strategy) -> (Kit, DeploymentId, u64) {
    let mut k = Kit::empty();
    k.ok(Command::CreateResource { name: "r".into() });
    let v = k.publish_to("r");
    k.ok(Command::CreateConsumer {
        name: "c".into(),
        nodes: (0..n).map(|i| format!("c-{i}")).collect(),
    });
    for i in 0..n {
        k.report_node(&format!("c-{i}"), "r", None, &[]);
    }
    let id = k.start(spec("c", "r", v, strategy));
    (k, id, v)
}

#[test]
fn nodes_counted_back_that_land_in_one_batch_are_rolled_back_again_in_reverse_order() {
    // Found by the simulation (seed 1068): batches of 3, 2, 2 over blank nodes (nothing to restore);
    // the first batch is c-0, c-1, c-2 and only c-2 reports the new version when a person rolls back.
    // c-2 is re-targeted (uninstall); c-1 and c-0, silent, hold nothing as far as the server knows and
    // are counted back. Then one `ReportNodes` says c-0 and c-1 run the version after all and c-2
    // removed it: c-1 and c-0 must be re-targeted in the walk back's order, not the batch's.
    let strategy = Strategy::Batch {
        sizes: vec![3, 2, 2],
        autopause: false,
    };
    let (mut k, id, v) = blank_fleet(6, strategy);
    assert_eq!(k.d(id).touched, vec![0, 1, 2]);
    k.ok(Command::ReportNodes(vec![node_report(2, Some(v), v)]));
    k.op(rollback, id).unwrap();
    assert_eq!(nodes_of(&k, id, EventKind::Rollback), vec![2]);
    assert_eq!(
        nodes_of(&k, id, EventKind::RolledBack),
        vec![1, 0],
        "the walk back counts c-1 and c-0 back at once, in reverse order"
    );
    k.ok(Command::ReportNodes(vec![
        node_report(0, Some(v), v),
        node_report(1, Some(v), v),
        node_report(2, None, v),
    ]));
    assert_eq!(
        nodes_of(&k, id, EventKind::Rollback),
        vec![2, 1, 0],
        "the reverse of the forward order, whatever the batch's order"
    );
    k.ok(Command::ReportNodes(vec![
        node_report(0, None, v),
        node_report(1, None, v),
    ]));
    assert_eq!(k.status(id), Status::RolledBack);
}

#[test]
fn nodes_landing_in_one_batch_with_free_rollback_slots_are_rolled_back_again_in_reverse_order() {
    // As above under a rolling window of 3, so rollback slots are free when the batch comes: its first
    // report must not take a slot before the later ones of the same batch are known.
    let strategy = Strategy::Rolling {
        install_window: 3,
        download_window: 3,
    };
    let (mut k, id, v) = blank_fleet(3, strategy);
    assert_eq!(k.d(id).touched, vec![0, 1, 2]);
    k.ok(Command::ReportNodes(vec![node_report(2, Some(v), v)]));
    k.op(rollback, id).unwrap();
    assert_eq!(nodes_of(&k, id, EventKind::Rollback), vec![2]);
    assert_eq!(nodes_of(&k, id, EventKind::RolledBack), vec![1, 0]);
    k.ok(Command::ReportNodes(vec![
        node_report(0, Some(v), v),
        node_report(1, Some(v), v),
    ]));
    assert_eq!(
        nodes_of(&k, id, EventKind::Rollback),
        vec![2, 1, 0],
        "the reverse of the forward order, whatever the batch's order"
    );
    k.ok(Command::ReportNodes(
        (0..3).map(|i| node_report(i, None, v)).collect(),
    ));
    assert_eq!(k.status(id), Status::RolledBack);
}
