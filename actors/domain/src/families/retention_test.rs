//! Retention: which deployments `Prune` strips, what it keeps, and that replicas agree.

use super::*;
use crate::testing::Kit;
use crate::{ClusterState, Command, Response, Status};

/// A kit whose fleet of 3 nodes went through `n` finished deployments (aborted at once), each
/// ending one ms after the previous one.
fn finished(n: usize) -> (Kit, Vec<DeploymentId>) {
    let mut k = Kit::new(3);
    let mut ids = Vec::new();
    for _ in 0..n {
        let id = k.start_with(|_| {});
        k.now += 1;
        k.ok(Command::Abort {
            id,
            message: None,
            by: Actor::User,
        });
        k.now += 1;
        assert!(k.d(id).status.is_terminal(), "{:?}", k.d(id).status);
        ids.push(id);
    }
    (k, ids)
}

fn prune(k: &mut Kit, keep: u32) -> u32 {
    match k.ok(Command::Prune { keep }) {
        Response::Pruned { pruned } => pruned,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_oldest_terminal_deployments_beyond_the_limit_lose_their_node_detail() {
    let (mut k, ids) = finished(5);
    let before = k.d(ids[4]).clone();
    assert!(k.d(ids[0]).events.iter().any(|e| e.node.is_some()));
    assert_eq!(k.s.unpruned_terminal(), 5);
    assert_eq!(prune(&mut k, 2), 3);
    for id in &ids[..3] {
        let d = k.d(*id);
        assert!(d.nodes.is_empty() && d.touched.is_empty() && d.batches.is_empty());
        assert!(d.events.iter().all(|e| e.node.is_none()), "{:?}", d.events);
        assert!(is_pruned(d));
        // The summary stays: status, counters, times and status events.
        assert_eq!(d.status, Status::Aborted);
        assert!(d.ended_at.is_some());
        assert!(d.events.iter().any(|e| e.status == Some(Status::Aborted)));
        let view = k.s.deployment(*id).unwrap();
        assert!(view.pruned && view.nodes.is_empty());
        let json = serde_json::to_value(&view).unwrap();
        assert_eq!(json["pruned"], true, "{json}");
    }
    assert_eq!(*k.d(ids[4]), before, "the newest keep all their detail");
    let json = serde_json::to_value(k.s.deployment(ids[4]).unwrap()).unwrap();
    assert!(json.get("pruned").is_none(), "{json}");
    assert_eq!(k.s.unpruned_terminal(), 2);
}

#[test]
fn pruning_again_changes_nothing_and_active_deployments_are_never_touched() {
    let (mut k, _) = finished(3);
    let running = k.start_with(|_| {});
    assert_eq!(prune(&mut k, 1), 2);
    let after = k.s.snapshot_bytes();
    assert_eq!(prune(&mut k, 1), 0);
    assert_eq!(k.s.snapshot_bytes(), after, "a second prune is a no-op");
    assert!(!k.d(running).nodes.is_empty());
    assert!(!is_pruned(k.d(running)));
    assert_eq!(prune(&mut k, 0), 1, "keep 0 strips every terminal one");
    assert!(!is_pruned(k.d(running)));
}

/// A snapshot shares the state's deployments (copy on write): pruning again must not copy the
/// deployments it has already pruned, which every `Prune` did (one copy of each, each time).
#[test]
fn pruning_again_copies_no_deployment_a_snapshot_shares() {
    let (mut k, ids) = finished(4);
    assert_eq!(prune(&mut k, 1), 3);
    let frozen = k.s.clone();
    assert_eq!(prune(&mut k, 1), 0);
    for id in &ids {
        assert!(
            std::ptr::eq(k.d(*id), &frozen.deployment_map()[id]),
            "deployment {id:?} was copied"
        );
    }
}

#[test]
fn replicas_applying_the_same_prune_stay_identical_and_snapshots_round_trip() {
    let (mut a, _) = finished(4);
    let mut b = Kit {
        s: ClusterState::from_snapshot_bytes(&a.s.snapshot_bytes()).unwrap(),
        now: a.now,
    };
    prune(&mut a, 1);
    prune(&mut b, 1);
    assert_eq!(a.s.snapshot_bytes(), b.s.snapshot_bytes());
    let back = ClusterState::from_snapshot_bytes(&a.s.snapshot_bytes()).unwrap();
    assert_eq!(back, a.s);
    // The fleet still deploys after pruning.
    let id = a.start_with(|_| {});
    assert_eq!(a.d(id).nodes.len(), 3);
}
