use crate::testing::*;
use crate::*;

fn gated(gates: Vec<Gate>) -> impl FnOnce(&mut DeploymentSpec) {
    move |s| {
        s.strategy = Some(Strategy::Batch {
            sizes: vec![1],
            autopause: false,
        });
        s.pacing = Some(Pacing {
            confirm: gates,
            ..Pacing::default()
        });
    }
}

#[test]
fn a_gate_before_the_start_holds_every_node_until_confirmed() {
    let mut k = Kit::new(2);
    let id = k.start_with(gated(vec![Gate::BeforeStart]));
    assert_eq!(k.status(id), Status::RollForwardPaused);
    assert_eq!(k.d(id).paused_by(), Some(PausedBy::Confirm));
    assert_eq!(k.phases(id), [NodePhase::Pending, NodePhase::Pending]);
    let summary = k.s.deployment_summary(id, 100).unwrap();
    assert_eq!(summary.pace.unwrap().awaiting_confirm_before, Some(1));
    let e = k.op(resume, id).unwrap_err();
    assert!(e.to_string().contains("confirm"), "{e}");
    assert_eq!(k.op_status(confirm, id), Status::RollingForward);
    assert_eq!(k.phases(id)[0], NodePhase::Installing);
}

#[test]
fn a_gate_before_each_batch_waits_after_every_batch() {
    let mut k = Kit::new(3);
    let id = k.start_with(gated(vec![Gate::BeforeEachBatch]));
    assert_eq!(
        k.phases(id)[0],
        NodePhase::Installing,
        "no gate before the first"
    );
    k.installed(0);
    assert_eq!(k.d(id).paused_by(), Some(PausedBy::Confirm));
    let status = k.d(id).events.iter().next_back().unwrap().clone();
    assert_eq!(
        status.message.as_deref(),
        Some("waiting for a confirmation before batch 2")
    );
    k.op_status(confirm, id);
    k.installed(1);
    assert_eq!(k.d(id).paused_by(), Some(PausedBy::Confirm), "and again");
    k.op_status(confirm, id);
    k.installed(2);
    assert_eq!(k.status(id), Status::RolledForward);
}

#[test]
fn a_gate_before_promotion_waits_once_after_the_first_batch() {
    let mut k = Kit::new(3);
    let id = k.start_with(gated(vec![Gate::BeforePromotion]));
    k.installed(0);
    assert_eq!(k.d(id).paused_by(), Some(PausedBy::Confirm));
    k.op_status(confirm, id);
    k.installed(1);
    assert_eq!(
        k.status(id),
        Status::RollingForward,
        "promoted once is enough"
    );
    assert_eq!(k.phases(id)[2], NodePhase::Installing);
}

#[test]
fn confirming_a_deployment_not_at_a_gate_is_refused() {
    let mut k = Kit::new(2);
    let id = k.start_with(|_| {});
    let e = k.err(confirm(id, None, Actor::User));
    assert_eq!(e.kind(), ErrorKind::Conflict);
    k.op_status(pause, id);
    let e = k.err(confirm(id, None, Actor::User));
    assert!(
        e.to_string().contains("not waiting for a confirmation"),
        "{e}"
    );
}

#[test]
fn a_hard_pause_takes_back_install_permission_not_yet_used() {
    let mut k = Kit::new(3);
    let id = k.start_with(rolling(2, 2));
    k.holding(0);
    assert_eq!(k.flags(3).0, vec![0, 1]);
    k.op_status(hard_pause, id);
    assert_eq!(k.status(id), Status::RollForwardPaused);
    assert_eq!(
        k.phases(id)[..2],
        [NodePhase::Installing, NodePhase::Pending],
        "node 0 started (it holds the version); node 1 had not"
    );
    assert_eq!(k.flags(3).0, vec![0], "node 1 may no longer install");
    assert_eq!(k.d(id).forward.install_used, 1);
    assert_eq!(k.d(id).touched, vec![0]);
    let recalled = k.d(id).events.iter().next_back().unwrap().clone();
    assert_eq!(
        (recalled.kind, recalled.node),
        (EventKind::Recalled, Some(1))
    );
    k.op_status(resume, id);
    assert_eq!(k.phases(id)[1], NodePhase::Installing, "admitted again");
    assert_eq!(k.d(id).touched, vec![0, 1]);
}

#[test]
fn a_plain_pause_lets_admitted_nodes_install() {
    let mut k = Kit::new(3);
    let id = k.start_with(rolling(2, 2));
    k.op_status(pause, id);
    assert_eq!(k.flags(3).0, vec![0, 1]);
}
