//! Tests for [`StorageHold`]: the database closes on the caller's thread once others let go.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use super::StorageHold;
use crate::log_store::open_db;

#[test]
fn close_waits_for_the_other_holder_and_closes_the_database_here() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(dir.path()).unwrap();
    let weak = Arc::downgrade(&db);
    let other = db.clone();
    let (release, released) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        released.recv().unwrap();
        drop(other);
    });
    let hold = StorageHold { db };
    let closer = std::thread::spawn(move || hold.close(Duration::from_secs(30)));
    std::thread::sleep(Duration::from_millis(50));
    assert!(!closer.is_finished(), "closed while another thread held it");
    release.send(()).unwrap();
    holder.join().unwrap();
    assert!(closer.join().unwrap(), "the hold closed the database");
    assert!(weak.upgrade().is_none(), "no reference is left");
    // RocksDB's LOCK is released only when the database is closed: it opens again at once.
    open_db(dir.path()).expect("the database was closed by the hold");
}

#[test]
fn a_holder_that_never_lets_go_leaves_the_database_open_and_working() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_db(dir.path()).unwrap();
    let other = db.clone();
    let hold = StorageHold { db };
    assert!(!hold.close(Duration::from_millis(30)));
    assert_eq!(
        Arc::strong_count(&other),
        1,
        "the hold let its reference go"
    );
    other.put(b"k", b"v").unwrap();
    assert_eq!(other.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    assert!(
        open_db(dir.path()).is_err(),
        "still open by the other holder"
    );
}
