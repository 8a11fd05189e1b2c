//! The RocksDB stores across restarts, and the state machine store's apply rules: the monotonic
//! clamp of `at_ms`, a garbage command not stopping apply, snapshots installed and persisted.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read, Write};

use crate::toy::{log_id, open};
use convoy_raft::codec;
use convoy_raft::sm_store::SmStore;
use convoy_raft::{Member, Proposal, StateMachine, TypeConfig};
use openraft::entry::RaftEntry;
use openraft::storage::{RaftLogStorage, RaftLogStorageExt, RaftStateMachine};
use openraft::type_config::alias::EntryOf;
use openraft::{LogState, Membership, RaftLogReader, RaftSnapshotBuilder, StorageHelper, Vote};
use serde::{Deserialize, Serialize};
use tempfile::TempDir;

/// A toy key-value state machine that also records the time each command was applied at.
#[derive(Default, Serialize, Deserialize)]
struct Kv {
    map: BTreeMap<String, String>,
    times: Vec<u64>,
}

#[derive(Serialize, Deserialize)]
struct Set(String, String);

impl StateMachine for Kv {
    type Command = Set;
    type Response = Option<String>;

    fn apply(&mut self, Set(k, v): Set, at_ms: u64) -> Option<String> {
        self.times.push(at_ms);
        self.map.insert(k, v)
    }

    fn snapshot_to(&self, out: &mut dyn Write) -> io::Result<()> {
        codec::encode_into(self, out)
            .map(drop)
            .map_err(io::Error::other)
    }

    fn restore_from(input: &mut dyn Read) -> Result<Self, String> {
        codec::decode_from(input).map_err(|e| e.to_string())
    }
}

fn set(index: u64, at_ms: u64) -> EntryOf<TypeConfig> {
    let command = codec::encode(&Set(format!("k{index}"), format!("v{index}"))).unwrap();
    EntryOf::<TypeConfig>::new_normal(log_id(1, index), Proposal { at_ms, command })
}

fn membership(index: u64) -> EntryOf<TypeConfig> {
    let nodes = BTreeMap::from([(1, Member::default())]);
    let m = Membership::new(vec![BTreeSet::from([1])], nodes).unwrap();
    EntryOf::<TypeConfig>::new_membership(log_id(1, index), m)
}

async fn apply(sm: &mut SmStore<Kv>, entries: Vec<EntryOf<TypeConfig>>) {
    let items = entries.into_iter().map(|e| Ok((e, None)));
    sm.apply(futures::stream::iter(items)).await.expect("apply");
}

fn keys(sm: &SmStore<Kv>) -> Vec<String> {
    sm.applied().read(|kv| kv.map.keys().cloned().collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_brings_back_vote_logs_committed_snapshot_and_state() {
    let dir = TempDir::new().unwrap();
    {
        let (_db, mut log, mut sm) = open::<Kv>(dir.path());
        log.save_vote(&Vote::new(3, 1)).await.unwrap();
        let first: Vec<_> = std::iter::once(membership(1))
            .chain((2..=5).map(|i| set(i, 1000 + i)))
            .collect();
        log.blocking_append(first.clone()).await.unwrap();
        log.save_committed(Some(log_id(1, 5))).await.unwrap();
        apply(&mut sm, first).await;

        let snap = sm
            .get_snapshot_builder()
            .await
            .build_snapshot()
            .await
            .unwrap();
        assert_eq!(snap.meta.last_log_id, Some(log_id(1, 5)));

        let more: Vec<_> = (6..=8).map(|i| set(i, 1000 + i)).collect();
        log.blocking_append(more.clone()).await.unwrap();
        log.save_committed(Some(log_id(1, 8))).await.unwrap();
        apply(&mut sm, more).await;
        log.purge(log_id(1, 2)).await.unwrap();
        assert_eq!(sm.applied().last_applied(), 8);
    }

    let (_db, mut log, mut sm) = open::<Kv>(dir.path());
    assert_eq!(log.read_vote().await.unwrap(), Some(Vote::new(3, 1)));
    let LogState {
        last_purged_log_id,
        last_log_id,
    } = log.get_log_state().await.unwrap();
    assert_eq!(last_purged_log_id, Some(log_id(1, 2)));
    assert_eq!(last_log_id, Some(log_id(1, 8)));
    let entries = log.try_get_log_entries(0..100).await.unwrap();
    assert_eq!(
        entries.iter().map(|e| e.index()).collect::<Vec<_>>(),
        vec![3, 4, 5, 6, 7, 8]
    );
    assert_eq!(log.read_committed().await.unwrap(), Some(log_id(1, 8)));

    let snap = sm
        .get_current_snapshot()
        .await
        .unwrap()
        .expect("a persisted snapshot");
    assert_eq!(snap.meta.last_log_id, Some(log_id(1, 5)));
    assert_eq!(snap.meta.last_membership.log_id(), &Some(log_id(1, 1)));

    // Opening restores the snapshot: state up to index 5.
    let applied = sm.applied();
    assert_eq!(applied.last_applied(), 5);
    assert_eq!(keys(&sm), ["k2", "k3", "k4", "k5"]);
    assert_eq!(applied.last_at_ms(), 1005);

    // openraft's startup re-applies the log from the snapshot up to the saved committed index.
    let mut rx = applied.subscribe();
    StorageHelper::new(&mut log, &mut sm)
        .with_id(1)
        .get_initial_state()
        .await
        .unwrap();
    assert_eq!(applied.last_applied(), 8);
    assert_eq!(*rx.borrow_and_update(), 8);
    assert_eq!(keys(&sm), ["k2", "k3", "k4", "k5", "k6", "k7", "k8"]);
    assert_eq!(applied.last_at_ms(), 1008);
    let (last, mem) = sm.applied_state().await.unwrap();
    assert_eq!(last, Some(log_id(1, 8)));
    assert_eq!(mem.log_id(), &Some(log_id(1, 1)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applied_time_never_goes_backwards_even_across_restarts() {
    let dir = TempDir::new().unwrap();
    {
        let (_db, _log, mut sm) = open::<Kv>(dir.path());
        // A new leader whose clock is behind the old one's stamps 50 after 100.
        apply(
            &mut sm,
            vec![set(1, 100), set(2, 50), set(3, 200), set(4, 150)],
        )
        .await;
        assert_eq!(
            sm.applied().read(|kv| kv.times.clone()),
            [100, 100, 200, 200]
        );
        assert_eq!(sm.applied().last_at_ms(), 200);
        sm.get_snapshot_builder()
            .await
            .build_snapshot()
            .await
            .unwrap();
    }
    let (_db, _log, mut sm) = open::<Kv>(dir.path());
    assert_eq!(sm.applied().last_at_ms(), 200);
    apply(&mut sm, vec![set(5, 120)]).await;
    assert_eq!(
        sm.applied().read(|kv| kv.times.clone()),
        [100, 100, 200, 200, 200]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbage_command_does_not_stop_apply() {
    let dir = TempDir::new().unwrap();
    let (_db, _log, mut sm) = open::<Kv>(dir.path());
    let garbage = EntryOf::<TypeConfig>::new_normal(
        log_id(1, 2),
        Proposal {
            at_ms: 7,
            command: vec![0xff, 0xff, 0xff, 0xff, 0xff],
        },
    );
    let mut rx = sm.applied().subscribe();
    apply(&mut sm, vec![set(1, 5), garbage, set(3, 9)]).await;
    assert_eq!(keys(&sm), ["k1", "k3"]);
    assert_eq!(sm.applied().last_applied(), 3);
    assert!(rx.has_changed().unwrap());
    assert_eq!(*rx.borrow_and_update(), 3);
    let (last, _) = sm.applied_state().await.unwrap();
    assert_eq!(last, Some(log_id(1, 3)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_installed_snapshot_replaces_the_state_and_survives_restart() {
    let (leader_dir, follower_dir) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let (_ldb, _llog, mut leader) = open::<Kv>(leader_dir.path());
    apply(&mut leader, vec![membership(1), set(2, 10), set(3, 20)]).await;
    let snap = leader
        .get_snapshot_builder()
        .await
        .build_snapshot()
        .await
        .unwrap();

    {
        let (_fdb, _flog, mut follower) = open::<Kv>(follower_dir.path());
        apply(&mut follower, vec![set(1, 99)]).await;
        follower
            .install_snapshot(&snap.meta, snap.snapshot.clone())
            .await
            .unwrap();
        assert_eq!(keys(&follower), ["k2", "k3"]);
        assert_eq!(follower.applied().last_applied(), 3);
        assert_eq!(follower.applied().last_at_ms(), 20);
        let current = follower.get_current_snapshot().await.unwrap().unwrap();
        assert_eq!(current.meta, snap.meta);
        // The follower's own file: the same snapshot, its header stamped with its store id.
        let (ours, theirs) = (
            current.snapshot.to_bytes().unwrap(),
            snap.snapshot.to_bytes().unwrap(),
        );
        assert_eq!(ours.len(), theirs.len());
        assert_ne!(ours[12..28], theirs[12..28], "store ids");
        let info_len = u32::from_le_bytes(ours[28..32].try_into().unwrap()) as usize;
        assert_eq!(
            ours[36 + info_len..],
            theirs[36 + info_len..],
            "state chunks"
        );
    }

    let (_fdb, _flog, follower) = open::<Kv>(follower_dir.path());
    assert_eq!(keys(&follower), ["k2", "k3"]);
    assert_eq!(follower.applied().last_applied(), 3);
    assert_eq!(
        follower.applied().membership().log_id(),
        &Some(log_id(1, 1))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_applied_returns_once_the_index_is_applied() {
    let dir = TempDir::new().unwrap();
    let (_db, _log, mut sm) = open::<Kv>(dir.path());
    let applied = sm.applied();
    let waiter = tokio::spawn({
        let applied = applied.clone();
        async move { applied.wait_applied(2).await }
    });
    apply(&mut sm, vec![set(1, 1)]).await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert!(!waiter.is_finished());
    apply(&mut sm, vec![set(2, 2)]).await;
    tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
        .await
        .expect("waiter woke")
        .unwrap();
}
