//! A damaged data dir is refused with one clear error (never started with silently lost entries
//! or an empty state): flipped bytes in the middle of the RocksDB WAL, a truncated or bit-flipped
//! snapshot file, a snapshot file from another cluster. A WAL record torn at the very end (the
//! unacknowledged write a crash interrupted) is dropped alone. And snapshots have no size cliff:
//! a state over the 64 MiB frame/decode cap restarts.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::toy::{log_id, open, Kv, Set};
use convoy_raft::codec::{self, MAX_DECODE_BYTES};
use convoy_raft::log_store::open_db;
use convoy_raft::sm_store::files::{CURRENT, SNAPSHOT_DIR};
use convoy_raft::sm_store::{SmStore, SnapshotData};
use convoy_raft::{Member, Proposal, RaftError, TypeConfig};
use openraft::entry::RaftEntry;
use openraft::storage::{RaftLogStorage, RaftLogStorageExt, RaftStateMachine};
use openraft::type_config::alias::EntryOf;
use openraft::{Membership, RaftLogReader, RaftSnapshotBuilder, Vote};
use tempfile::TempDir;

fn set(index: u64, key: &str, value: String) -> EntryOf<TypeConfig> {
    let command = codec::encode(&Set(key.to_string(), value)).unwrap();
    EntryOf::<TypeConfig>::new_normal(
        log_id(1, index),
        Proposal {
            at_ms: 1000 + index,
            command,
        },
    )
}

fn membership(index: u64) -> EntryOf<TypeConfig> {
    let nodes = BTreeMap::from([(1, Member::default())]);
    let m = Membership::new(vec![[1].into()], nodes).unwrap();
    EntryOf::<TypeConfig>::new_membership(log_id(1, index), m)
}

async fn apply(sm: &mut SmStore<Kv>, entries: Vec<EntryOf<TypeConfig>>) {
    let items = entries.into_iter().map(|e| Ok((e, None)));
    sm.apply(futures::stream::iter(items)).await.expect("apply");
}

/// The largest WAL file of a data dir.
fn wal(dir: &Path) -> PathBuf {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .max_by_key(|p| fs::metadata(p).unwrap().len())
        .expect("a WAL file")
}

/// Appends `count` entries one `append` (one WAL record) each, after a vote; returns the data dir.
async fn log_with_entries(count: u64, value_len: usize) -> TempDir {
    let dir = TempDir::new().unwrap();
    let (_db, mut log, _sm) = open::<Kv>(dir.path());
    log.save_vote(&Vote::new(3, 1)).await.unwrap();
    for i in 1..=count {
        let value = format!("{i:0>width$}", width = value_len);
        log.blocking_append([set(i, &format!("k{i}"), value)])
            .await
            .unwrap();
    }
    dir
}

fn corrupt_message(result: Result<impl Sized, RaftError>, dir: &Path) -> String {
    let Err(err) = result else {
        panic!("a damaged data dir was opened")
    };
    assert!(
        matches!(err, RaftError::Corrupt { .. }),
        "expected RaftError::Corrupt, got {err}"
    );
    let message = err.to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(
        message.contains(&format!(
            "wipe {} and rejoin as a new member",
            dir.display()
        )),
        "{message}"
    );
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flipped_bytes_mid_wal_refuse_to_open() {
    let dir = log_with_entries(200, 200).await;
    let wal = wal(dir.path());
    let len = fs::metadata(&wal).unwrap().len();
    assert!(len > 40_000, "the entries are in the WAL ({len} bytes)");
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&wal)
        .unwrap();
    let mut bytes = [0u8; 3];
    file.seek(SeekFrom::Start(len / 2)).unwrap();
    file.read_exact(&mut bytes).unwrap();
    for b in &mut bytes {
        *b ^= 0xff;
    }
    file.seek(SeekFrom::Start(len / 2)).unwrap();
    file.write_all(&bytes).unwrap();
    drop(file);

    let message = corrupt_message(open_db(dir.path()), dir.path());
    assert!(message.contains("raft log"), "{message}");
    eprintln!("{message}");
}

/// A record cut short at the very end of the WAL is the write a crash interrupted before its
/// fsync, so openraft was never told it was durable: it is dropped, and only it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_last_wal_record_loses_only_that_record() {
    let dir = log_with_entries(20, 2000).await;
    let wal = wal(dir.path());
    let len = fs::metadata(&wal).unwrap().len();
    OpenOptions::new()
        .write(true)
        .open(&wal)
        .unwrap()
        .set_len(len - 100)
        .unwrap();

    let (_db, mut log, _sm) = open::<Kv>(dir.path());
    assert_eq!(log.read_vote().await.unwrap(), Some(Vote::new(3, 1)));
    let state = log.get_log_state().await.unwrap();
    assert_eq!(state.last_log_id, Some(log_id(1, 19)));
    let entries = log.try_get_log_entries(0..100).await.unwrap();
    let indexes: Vec<u64> = entries.iter().map(|e| e.index()).collect();
    assert_eq!(indexes, (1..=19).collect::<Vec<_>>());
}

/// A data dir holding a snapshot of `keys` values of `value_len` bytes (and its log).
async fn dir_with_snapshot(keys: u64, value_len: usize) -> TempDir {
    let dir = TempDir::new().unwrap();
    let (_db, mut log, mut sm) = open::<Kv>(dir.path());
    let entries: Vec<_> = std::iter::once(membership(1))
        .chain((2..=keys + 1).map(|i| set(i, &format!("k{i}"), "v".repeat(value_len))))
        .collect();
    log.blocking_append(entries.clone()).await.unwrap();
    log.save_committed(Some(log_id(1, keys + 1))).await.unwrap();
    apply(&mut sm, entries).await;
    sm.get_snapshot_builder()
        .await
        .build_snapshot()
        .await
        .unwrap();
    dir
}

fn snapshot_file(dir: &Path) -> PathBuf {
    dir.join(SNAPSHOT_DIR).join(CURRENT)
}

fn open_sm(dir: &Path) -> Result<SmStore<Kv>, RaftError> {
    SmStore::<Kv>::open(open_db(dir).expect("the log is intact"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_snapshot_refuses_to_open() {
    let dir = dir_with_snapshot(50, 100).await;
    let path = snapshot_file(dir.path());
    let len = fs::metadata(&path).unwrap().len();
    OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let message = corrupt_message(open_sm(dir.path()), dir.path());
    assert!(message.contains("truncated"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_byte_in_a_snapshot_refuses_to_open() {
    let dir = dir_with_snapshot(50, 100).await;
    let path = snapshot_file(dir.path());
    let mut bytes = fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    fs::write(&path, bytes).unwrap();
    let message = corrupt_message(open_sm(dir.path()), dir.path());
    assert!(message.contains("checksum mismatch"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_from_another_cluster_refuses_to_open() {
    let ours = dir_with_snapshot(5, 10).await;
    let theirs = dir_with_snapshot(5, 10).await;
    fs::copy(snapshot_file(theirs.path()), snapshot_file(ours.path())).unwrap();
    let message = corrupt_message(open_sm(ours.path()), ours.path());
    assert!(message.contains("another cluster"), "{message}");

    // Dropped into a wiped data dir, it is refused too.
    let wiped = TempDir::new().unwrap();
    fs::create_dir_all(wiped.path().join(SNAPSHOT_DIR)).unwrap();
    fs::copy(snapshot_file(theirs.path()), snapshot_file(wiped.path())).unwrap();
    corrupt_message(open_sm(wiped.path()), wiped.path());
}

/// A snapshot the leader sends is verified as it is installed: a damaged one is refused and the
/// state stays; a good one (stamped by the leader's data dir) is restored, re-stamped as this data
/// dir's own file, and comes back after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_installed_snapshot_is_verified_and_persisted_as_our_own() {
    let leader = dir_with_snapshot(30, 50).await;
    let sent = {
        let mut sm = open_sm(leader.path()).unwrap();
        sm.get_current_snapshot()
            .await
            .unwrap()
            .expect("a snapshot")
    };
    let bytes = sent.snapshot.to_bytes().unwrap();

    let follower = TempDir::new().unwrap();
    {
        let (_db, _log, mut sm) = open::<Kv>(follower.path());
        let mut bad = bytes.clone();
        let at = bad.len() - 40;
        bad[at] ^= 0x10;
        let err = sm
            .install_snapshot(&sent.meta, SnapshotData::from_bytes(bad))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("refused"), "{err}");
        assert_eq!(sm.applied().read(|kv| kv.0.len()), 0);
        let cut = SnapshotData::from_bytes(bytes[..bytes.len() / 2].to_vec());
        assert!(sm.install_snapshot(&sent.meta, cut).await.is_err());

        sm.install_snapshot(&sent.meta, SnapshotData::from_bytes(bytes))
            .await
            .unwrap();
        assert_eq!(sm.applied().read(|kv| kv.0.len()), 30);
    }
    let sm = open_sm(follower.path()).expect("the installed snapshot is this data dir's own");
    assert_eq!(sm.applied().last_applied(), 31);
    assert_eq!(sm.applied().read(|kv| kv.0.len()), 30);
}

/// The state of a fleet past the 64 MiB frame/decode cap (80 MiB here) is snapshotted, and a
/// restart restores it: the snapshot is streamed in chunks, never decoded through that cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_over_the_decode_cap_restarts() {
    const VALUE: usize = 4 * 1024 * 1024;
    const KEYS: u64 = 20;
    let started = std::time::Instant::now();
    let dir = dir_with_snapshot(KEYS, VALUE).await;
    let len = fs::metadata(snapshot_file(dir.path())).unwrap().len();
    assert!(
        len > MAX_DECODE_BYTES as u64,
        "the snapshot ({len} bytes) is past the cap"
    );

    let (_db, mut log, mut sm) = open::<Kv>(dir.path());
    let applied = sm.applied();
    assert_eq!(applied.last_applied(), KEYS + 1);
    let (count, total) = applied.read(|kv| (kv.0.len(), kv.0.values().map(String::len).sum()));
    assert_eq!((count, total), (KEYS as usize, KEYS as usize * VALUE));
    let snap = sm.get_current_snapshot().await.unwrap().unwrap();
    assert_eq!(snap.meta.last_log_id, Some(log_id(1, KEYS + 1)));
    assert_eq!(snap.snapshot.len(), len);
    // The log can be purged up to the snapshot: the state no longer needs it.
    log.purge(log_id(1, KEYS + 1)).await.unwrap();
    eprintln!(
        "{len}-byte snapshot built and restored in {:?}",
        started.elapsed()
    );
}

/// A snapshot as versions before the snapshot files kept it: one codec value in the `snapshots`
/// column family.
#[derive(serde::Serialize)]
struct LegacySnapshot {
    last_applied: Option<openraft::type_config::alias::LogIdOf<TypeConfig>>,
    last_membership: openraft::type_config::alias::StoredMembershipOf<TypeConfig>,
    last_at_ms: u64,
    state: Vec<u8>,
}

/// A data dir of the previous version, whose snapshot is inside RocksDB, starts from it; the
/// snapshot is moved into a file (and out of RocksDB) on that first start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_kept_in_rocksdb_by_an_older_version_is_moved_into_a_file() {
    let dir = TempDir::new().unwrap();
    let state = BTreeMap::from([("old".to_string(), "state".to_string())]);
    let legacy = LegacySnapshot {
        last_applied: Some(log_id(1, 7)),
        last_membership: openraft::StoredMembership::new(
            Some(log_id(1, 1)),
            Membership::new(vec![[1].into()], BTreeMap::from([(1, Member::default())])).unwrap(),
        ),
        last_at_ms: 99,
        state: codec::encode(&state).unwrap(),
    };
    {
        let db = open_db(dir.path()).unwrap();
        let snapshots = db.cf_handle("snapshots").unwrap();
        db.put_cf(snapshots, b"current", codec::encode(&legacy).unwrap())
            .unwrap();
    }

    {
        let sm = open_sm(dir.path()).expect("the old data dir opens");
        assert_eq!(sm.applied().last_applied(), 7);
        assert_eq!(sm.applied().last_at_ms(), 99);
        assert_eq!(sm.applied().read(|kv| kv.0.clone()), state);
    }
    assert!(snapshot_file(dir.path()).exists());
    let db = open_db(dir.path()).unwrap();
    let snapshots = db.cf_handle("snapshots").unwrap();
    assert!(db.get_cf(snapshots, b"current").unwrap().is_none());
    drop(db);
    let sm = open_sm(dir.path()).expect("reopens from the file");
    assert_eq!(sm.applied().read(|kv| kv.0.clone()), state);
}
