//! Closing the database on the thread that stops the process, before it exits.
//!
//! RocksDB closes when the last `Arc<DB>` is dropped, on whichever thread drops it: an openraft
//! task, a blocking read, the log read-ahead thread. If that thread is still closing the
//! database while `main` returns, the process's exit tears down what RocksDB is using and it
//! aborts ("pthread lock: Invalid argument"): a clean SIGTERM then ends with SIGABRT. A
//! [`StorageHold`] taken at start keeps the last reference with the caller, which closes the
//! database itself once raft's tasks have let go.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rocksdb::DB;

use super::RaftNode;
use crate::state_machine::StateMachine;

/// How often [`StorageHold::close`] looks whether the other holders let go.
const POLL: Duration = Duration::from_millis(5);

/// A reference to the server's database that outlives raft's own, so that the database is
/// closed where [`StorageHold::close`] is called, not on a thread the process does not wait for.
#[must_use = "a hold closes the database only through StorageHold::close"]
pub struct StorageHold {
    db: Arc<DB>,
}

impl<S: StateMachine> RaftNode<S> {
    /// A hold on this server's database, or `None` once it is closed. Take it right after
    /// [`RaftNode::start`], and [`StorageHold::close`] it after [`RaftNode::shutdown`].
    pub fn hold_storage(&self) -> Option<StorageHold> {
        self.db.upgrade().map(|db| StorageHold { db })
    }
}

impl StorageHold {
    /// Waits up to `patience` until this is the database's only reference (raft's tasks and
    /// reads have ended), then closes it on this thread and returns `true`. Past `patience` it
    /// stops RocksDB's background work (waiting for the running job), leaves the database to
    /// its last holder and returns `false`.
    pub fn close(self, patience: Duration) -> bool {
        let deadline = Instant::now() + patience;
        let mut db = self.db;
        loop {
            // `try_unwrap` takes the database only while no other reference exists, and a
            // read-ahead thread's `Weak` can no longer upgrade once it did.
            match Arc::try_unwrap(db) {
                Ok(only) => {
                    drop(only);
                    return true;
                }
                Err(shared) if Instant::now() < deadline => {
                    db = shared;
                    std::thread::sleep(POLL);
                }
                Err(shared) => {
                    tracing::warn!(
                        holders = Arc::strong_count(&shared) - 1,
                        ?patience,
                        "the database is still in use; stopping its background work and leaving it open"
                    );
                    shared.cancel_all_background_work(true);
                    return false;
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "storage_hold_test.rs"]
mod tests;
