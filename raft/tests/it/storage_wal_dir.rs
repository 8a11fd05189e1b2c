//! The log's write-ahead log in a directory of its own (`log_wal_dir`): entries written there
//! survive a restart, and a data dir opened with another WAL directory than it was created with
//! (or none, or one that is gone, or one another database uses) is refused before RocksDB can
//! start on an empty WAL and drop them.

use std::path::Path;

use convoy_raft::log_store::wal_dir::{self, WAL_DIR_FILE};
use convoy_raft::log_store::{open_db_tuned, StorageTuning, CF_LOGS};
use convoy_raft::RaftError;
use rocksdb::{WriteOptions, DB};
use tempfile::TempDir;

const ENTRIES: u64 = 500;

fn tuning(wal_dir: Option<&Path>) -> StorageTuning {
    StorageTuning {
        wal_dir: wal_dir.map(Path::to_path_buf),
        ..StorageTuning::default()
    }
}

/// Writes `ENTRIES` synced entries (durable in the WAL, not flushed into files).
fn write_entries(db: &DB) {
    let logs = db.cf_handle(CF_LOGS).expect("the logs column family");
    let mut synced = WriteOptions::default();
    synced.set_sync(true);
    for i in 0..ENTRIES {
        db.put_cf_opt(logs, i.to_be_bytes(), format!("entry {i}"), &synced)
            .unwrap();
    }
}

fn entries_there(db: &DB) -> u64 {
    let logs = db.cf_handle(CF_LOGS).expect("the logs column family");
    (0..ENTRIES)
        .filter(|i| db.get_cf(logs, i.to_be_bytes()).unwrap().is_some())
        .count() as u64
}

fn wal_files(dir: &Path) -> usize {
    wal_dir::wal_files(dir).unwrap().len()
}

/// A data dir created with its WAL in `wal`, holding `ENTRIES` unflushed entries.
fn data_dir_with_wal_in(wal: &Path) -> TempDir {
    let data = TempDir::new().unwrap();
    let db = open_db_tuned(data.path(), &tuning(Some(wal))).unwrap();
    write_entries(&db);
    drop(db);
    data
}

#[test]
fn a_separate_wal_dir_keeps_every_entry_across_a_restart() {
    let wal = TempDir::new().unwrap();
    let data = data_dir_with_wal_in(wal.path());
    assert!(wal_files(wal.path()) > 0, "the WAL is in log_wal_dir");
    assert_eq!(wal_files(data.path()), 0, "and not in the data dir");
    let recorded = std::fs::read(data.path().join(WAL_DIR_FILE)).unwrap();
    assert_eq!(
        Path::new(std::str::from_utf8(&recorded).unwrap()),
        std::path::absolute(wal.path()).unwrap()
    );

    let db = open_db_tuned(data.path(), &tuning(Some(wal.path()))).unwrap();
    assert_eq!(entries_there(&db), ENTRIES);
}

#[test]
fn rocksdb_alone_would_drop_the_entries_of_a_wal_it_is_not_told_about() {
    // Why the check exists: RocksDB opened on the data dir without its WAL directory starts
    // empty, with no error.
    let wal = TempDir::new().unwrap();
    let data = data_dir_with_wal_in(wal.path());
    let mut opts = rocksdb::Options::default();
    opts.create_missing_column_families(true);
    let db = DB::open_cf(&opts, data.path(), [CF_LOGS, "meta", "snapshots"]).unwrap();
    assert_eq!(entries_there(&db), 0);
}

#[test]
fn another_or_no_wal_dir_is_refused_and_nothing_is_lost() {
    let wal = TempDir::new().unwrap();
    let other = TempDir::new().unwrap();
    let data = data_dir_with_wal_in(wal.path());

    for configured in [None, Some(other.path())] {
        let err = open_db_tuned(data.path(), &tuning(configured)).unwrap_err();
        assert!(
            matches!(err, RaftError::WalDirMismatch { .. }),
            "{configured:?}: {err}"
        );
        let text = err.to_string();
        let wal_abs = std::path::absolute(wal.path()).unwrap();
        assert!(
            text.contains(&wal_abs.display().to_string()) && text.contains("log_wal_dir"),
            "the refusal names where the WAL is and the setting: {text}"
        );
    }
    assert_eq!(wal_files(other.path()), 0, "nothing was created elsewhere");

    let db = open_db_tuned(data.path(), &tuning(Some(wal.path()))).unwrap();
    assert_eq!(entries_there(&db), ENTRIES);
}

#[test]
fn a_data_dir_made_without_a_wal_dir_refuses_one_later() {
    let data = TempDir::new().unwrap();
    let wal = TempDir::new().unwrap();
    let db = open_db_tuned(data.path(), &tuning(None)).unwrap();
    write_entries(&db);
    drop(db);
    assert!(!data.path().join(WAL_DIR_FILE).exists());

    let err = open_db_tuned(data.path(), &tuning(Some(wal.path()))).unwrap_err();
    assert!(
        err.to_string().contains("the data dir itself"),
        "the refusal says where the WAL is: {err}"
    );
    // Naming the data dir itself is the same as naming none.
    let db = open_db_tuned(data.path(), &tuning(Some(data.path()))).unwrap();
    assert_eq!(entries_there(&db), ENTRIES);
}

#[test]
fn a_missing_wal_dir_is_refused_as_a_damaged_log() {
    let root = TempDir::new().unwrap();
    let wal = root.path().join("wal");
    let data = data_dir_with_wal_in(&wal);
    std::fs::remove_dir_all(&wal).unwrap();

    let err = open_db_tuned(data.path(), &tuning(Some(&wal))).unwrap_err();
    assert!(matches!(err, RaftError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("is missing"), "{err}");
    assert!(!wal.exists(), "the check does not create an empty WAL dir");
}

#[test]
fn a_new_data_dir_refuses_a_wal_dir_another_database_writes() {
    let wal = TempDir::new().unwrap();
    let _first = data_dir_with_wal_in(wal.path());
    let second = TempDir::new().unwrap();

    let err = open_db_tuned(second.path(), &tuning(Some(wal.path()))).unwrap_err();
    assert!(
        err.to_string().contains("of its own"),
        "the refusal says why: {err}"
    );
    assert!(
        !second.path().join("CURRENT").exists(),
        "no database was created"
    );
}
