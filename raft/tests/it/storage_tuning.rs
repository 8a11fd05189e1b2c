//! The log's RocksDB tuning (memtable size, compaction style, background write cap) changes nothing that is
//! stored: a data dir written under one tuning reopens under any other with every entry, so an operator can
//! change it between restarts.

use convoy_raft::log_store::{open_db_tuned, LogCompaction, StorageTuning, CF_LOGS};
use rocksdb::DB;

const PER_ROUND: u64 = 4_000;

fn value(i: u64) -> Vec<u8> {
    format!("entry {i} ").repeat(40).into_bytes()
}

/// Writes entries `from..from + PER_ROUND`, then flushes and compacts them into files, so that the next
/// tuning opens a database with files laid out by this one's compaction style.
fn write_round(db: &DB, from: u64) {
    let logs = db.cf_handle(CF_LOGS).expect("the logs column family");
    for i in from..from + PER_ROUND {
        db.put_cf(logs, i.to_be_bytes(), value(i)).unwrap();
    }
    db.flush_cf(logs).unwrap();
    db.compact_range_cf(logs, None::<&[u8]>, None::<&[u8]>);
}

fn assert_all_there(db: &DB, count: u64, tuning: &StorageTuning) {
    let logs = db.cf_handle(CF_LOGS).expect("the logs column family");
    for i in 0..count {
        let got = db.get_cf(logs, i.to_be_bytes()).unwrap();
        assert_eq!(
            got,
            Some(value(i)),
            "entry {i} after reopening with {tuning:?}"
        );
    }
}

#[test]
fn a_data_dir_reopens_under_every_tuning() {
    let dir = tempfile::tempdir().unwrap();
    let tunings = [
        StorageTuning::default(),
        StorageTuning {
            log_compaction: LogCompaction::Universal,
            log_memtable_bytes: 1 << 20,
            background_io_bytes_per_sec: Some(32 << 20),
            ..StorageTuning::default()
        },
        StorageTuning {
            log_memtable_bytes: 64 << 20,
            ..StorageTuning::default()
        },
        StorageTuning {
            log_compaction: LogCompaction::Universal,
            ..StorageTuning::default()
        },
        StorageTuning::default(),
    ];
    let mut written = 0;
    for tuning in &tunings {
        let db = open_db_tuned(dir.path(), tuning)
            .unwrap_or_else(|e| panic!("reopening with {tuning:?}: {e}"));
        assert_all_there(&db, written, tuning);
        write_round(&db, written);
        written += PER_ROUND;
        assert_all_there(&db, written, tuning);
    }
}
