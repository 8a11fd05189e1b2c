//! Replaying a long log: the state machine store applies in chunks (waiters woken with an index at
//! least theirs, even mid-chunk; an error mid-chunk keeps what came before), and the log store's
//! read-ahead serves openraft's consecutive reads exactly as direct reads would, until a write.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::toy::{log_id, open, Kv, Set};
use convoy_raft::codec;
use convoy_raft::log_store::{RocksLogStore, CF_LOGS};
use convoy_raft::{Member, Proposal, TypeConfig};
use futures::StreamExt;
use openraft::entry::RaftEntry;
use openraft::storage::{RaftLogStorage, RaftLogStorageExt, RaftStateMachine};
use openraft::type_config::alias::{EntryOf, LogIdOf};
use openraft::{Membership, RaftLogReader, StorageHelper};
use tempfile::TempDir;

/// The entry at `index` of `term`: sets `k{index}` to `v{index}.{term}`.
fn set(term: u64, index: u64) -> EntryOf<TypeConfig> {
    let command = codec::encode(&Set(format!("k{index}"), format!("v{index}.{term}"))).unwrap();
    EntryOf::<TypeConfig>::new_normal(
        log_id(term, index),
        Proposal {
            at_ms: index,
            command,
        },
    )
}

fn membership(index: u64) -> EntryOf<TypeConfig> {
    let nodes = BTreeMap::from([(1, Member::default())]);
    let m = Membership::new(vec![BTreeSet::from([1])], nodes).unwrap();
    EntryOf::<TypeConfig>::new_membership(log_id(1, index), m)
}

/// A log as openraft starts one: the membership at index 0, then `set(1, i)` for `1..=last`.
fn log_upto(last: u64) -> Vec<EntryOf<TypeConfig>> {
    std::iter::once(membership(0))
        .chain((1..=last).map(|i| set(1, i)))
        .collect()
}

type Item = Result<openraft::storage::EntryResponder<TypeConfig>, std::io::Error>;

fn item(entry: EntryOf<TypeConfig>) -> Item {
    Ok((entry, None))
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not happen within 10 s"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_in_the_middle_of_a_chunk_are_woken_even_while_more_entries_are_awaited() {
    let dir = TempDir::new().unwrap();
    let (_db, _log, mut sm) = open::<Kv>(dir.path());
    let applied = sm.applied();
    let (tx, rx) = futures::channel::mpsc::unbounded::<Item>();
    let waiter = |index| {
        let applied = applied.clone();
        tokio::spawn(async move { applied.wait_applied(index).await })
    };
    let (w3, w7) = (waiter(3), waiter(7));
    for i in 1..=5 {
        tx.unbounded_send(item(set(1, i))).unwrap();
    }
    let apply = tokio::spawn(async move {
        sm.apply(rx).await.expect("apply");
        sm
    });
    // Entries 1-5 were ready together (one chunk); the stream then has nothing ready and apply
    // waits for more: 3 must be published by then.
    within("waking the waiter on 3", w3).await.unwrap();
    assert_eq!(applied.last_applied(), 5);
    assert!(!w7.is_finished());
    assert!(!apply.is_finished());

    for i in 6..=10 {
        tx.unbounded_send(item(set(1, i))).unwrap();
    }
    within("waking the waiter on 7", w7).await.unwrap();
    drop(tx);
    let sm = within("apply returning", apply).await.unwrap();
    assert_eq!(applied.last_applied(), 10);
    assert_eq!(sm.applied().read(|kv| kv.0.len()), 10);
    let mut rx = applied.subscribe();
    assert_eq!(*rx.borrow_and_update(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_in_the_middle_of_a_chunk_keeps_and_publishes_the_entries_before_it() {
    let dir = TempDir::new().unwrap();
    let (_db, _log, mut sm) = open::<Kv>(dir.path());
    let items = vec![
        item(set(1, 1)),
        item(set(1, 2)),
        Err(std::io::Error::other("log read failed")),
        item(set(1, 4)),
    ];
    let err = sm
        .apply(futures::stream::iter(items))
        .await
        .expect_err("the stream's error");
    assert_eq!(err.to_string(), "log read failed");
    assert_eq!(sm.applied().last_applied(), 2);
    assert_eq!(
        sm.applied()
            .read(|kv| kv.0.keys().cloned().collect::<Vec<_>>()),
        ["k1", "k2"]
    );
    let (last, _) = sm.applied_state().await.unwrap();
    assert_eq!(last, Some(log_id(1, 2)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_replays_a_long_log_through_the_read_ahead() {
    const LAST: u64 = 5000;
    let dir = TempDir::new().unwrap();
    {
        let (_db, mut log, _sm) = open::<Kv>(dir.path());
        log.blocking_append(log_upto(LAST)).await.unwrap();
        log.save_committed(Some(log_id(1, LAST))).await.unwrap();
    }
    let (_db, mut log, mut sm) = open::<Kv>(dir.path());
    let applied = sm.applied();
    assert_eq!(applied.last_applied(), 0);
    // openraft reads the log back 64 entries at a time: all but the first read are consecutive.
    StorageHelper::new(&mut log, &mut sm)
        .with_id(1)
        .get_initial_state()
        .await
        .unwrap();
    assert_eq!(applied.last_applied(), LAST);
    let expected: BTreeMap<String, String> = (1..=LAST)
        .map(|i| (format!("k{i}"), format!("v{i}.1")))
        .collect();
    assert_eq!(applied.read(|kv| kv.0.clone()), expected);
    let (last, mem) = sm.applied_state().await.unwrap();
    assert_eq!(last, Some(log_id(1, LAST)));
    assert_eq!(mem.log_id(), &Some(log_id(1, 0)));
}

/// Reads `[from, to)` in consecutive 64-entry ranges, as openraft's replay does.
async fn read_in_steps(log: &mut RocksLogStore, from: u64, to: u64) -> Vec<EntryOf<TypeConfig>> {
    let mut out = Vec::new();
    let mut start = from;
    while start < to {
        let end = (start + 64).min(to);
        let got = log.try_get_log_entries(start..end).await.unwrap();
        assert_eq!(got.len() as u64, end - start, "read [{start}, {end})");
        out.extend(got);
        start = end;
    }
    out
}

fn ids(entries: &[EntryOf<TypeConfig>]) -> Vec<LogIdOf<TypeConfig>> {
    entries.iter().map(|e| e.log_id()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consecutive_reads_match_direct_reads_and_a_write_switches_the_read_ahead_off() {
    let dir = TempDir::new().unwrap();
    {
        let (_db, mut log, _sm) = open::<Kv>(dir.path());
        log.blocking_append(log_upto(3000)).await.unwrap();
    }
    let (_db, mut log, _sm) = open::<Kv>(dir.path());
    let mut reader = log.get_log_reader().await;

    // The read-ahead starts at the second consecutive read and is ahead of the reader.
    let first = read_in_steps(&mut reader, 0, 1001).await;
    let direct = log.try_get_log_entries(0..1001).await.unwrap();
    assert_eq!(ids(&first), ids(&direct));
    assert_eq!(first, direct);

    // A new leader overwrites the tail from 1501 on: nothing read ahead before may be served.
    let mut again = log.get_log_reader().await;
    let _ = read_in_steps(&mut again, 0, 1001).await;
    log.truncate_after(Some(log_id(1, 1500))).await.unwrap();
    log.blocking_append((1501..=2500).map(|i| set(2, i)))
        .await
        .unwrap();
    let rest = read_in_steps(&mut again, 1001, 2501).await;
    let expected: Vec<_> = (1001..=1500)
        .map(|i| log_id(1, i))
        .chain((1501..=2500).map(|i| log_id(2, i)))
        .collect();
    assert_eq!(ids(&rest), expected);
    assert!(again
        .try_get_log_entries(2501..2600)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hole_ahead_is_still_reported_by_the_read_that_reaches_it() {
    let dir = TempDir::new().unwrap();
    {
        let (db, mut log, _sm) = open::<Kv>(dir.path());
        log.blocking_append(log_upto(600)).await.unwrap();
        db.delete_cf(db.cf_handle(CF_LOGS).unwrap(), 400u64.to_be_bytes())
            .unwrap();
    }
    let (_db, log, _sm) = open::<Kv>(dir.path());
    let mut reader = log.clone();
    let before = read_in_steps(&mut reader, 0, 385).await;
    assert_eq!(before.last().unwrap().log_id(), log_id(1, 384));
    let err = reader
        .try_get_log_entries(385..449)
        .await
        .expect_err("a hole at 400");
    assert!(
        err.to_string().contains("expected entry at index 400"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_entries_than_a_chunk_holds_are_all_applied() {
    // As openraft's worker hands them over: all ready at once, more than one chunk's worth.
    let dir = TempDir::new().unwrap();
    let (_db, _log, mut sm) = open::<Kv>(dir.path());
    let entries: Vec<Item> = (1..=3000).map(|i| item(set(1, i))).collect();
    sm.apply(futures::stream::iter(entries).boxed())
        .await
        .unwrap();
    assert_eq!(sm.applied().last_applied(), 3000);
    assert_eq!(sm.applied().read(|kv| kv.0.len()), 3000);
}
