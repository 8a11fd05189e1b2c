//! The durable raft log and vote in RocksDB: openraft's `RaftLogStorage` for [`TypeConfig`].
//!
//! Layout (one RocksDB per server, opened by [`open_db`]):
//!
//! | column family | key | value |
//! | --- | --- | --- |
//! | `logs` | log index, big-endian u64 (so keys sort by index) | the entry, [`crate::codec`] |
//! | `meta` | `vote`, `committed`, `last_purged` | the vote / log id, [`crate::codec`] |
//! | `snapshots` | `current` | the latest snapshot, see [`crate::sm_store`] |
//!
//! # Durability and the async runtime
//!
//! - `append` writes all the entries of one call in one `WriteBatch` (readable as soon as `append`
//!   returns, as openraft requires) without waiting for the disk, then hands openraft's callback to
//!   a per-store *WAL syncer* thread. That thread fsyncs the write-ahead log (`flush_wal(true)`,
//!   the same durability as `WriteOptions::set_sync(true)`) and only then tells openraft the
//!   entries are durable. Callbacks that queue up while an fsync runs share the next one (group
//!   commit), and they fire in the order the appends were made. The raft core never waits for the
//!   disk on the append path, so replication overlaps with the fsync.
//! - `save_vote` and `truncate_after` are synced writes (`set_sync(true)`) run on tokio's blocking
//!   pool and awaited: the vote is on disk before `save_vote` returns.
//! - `purge` and `save_committed` are unsynced writes made in place. They are a few microseconds
//!   (a memtable insert and a `write(2)` to the WAL); losing them in a power cut only means
//!   purging again or re-applying from an older committed index. RocksDB's single WAL keeps every
//!   write in order, so a later fsync covers them.
//! - Reads are made in place: they hit the memtable or block cache and are short. A run of
//!   consecutive range reads (openraft's replay of the log on a restart) is served by a read-ahead
//!   thread until the log is first written, see [`readahead`].
//!
//! # Integrity
//!
//! The WAL is recovered with [`DBRecoveryMode::TolerateCorruptedTailRecords`]: a record whose
//! checksum fails anywhere in the WAL (a flipped bit in an fsynced entry or vote) makes
//! [`open_db`] refuse with [`RaftError::Corrupt`], where RocksDB's default (point-in-time
//! recovery) would silently stop replaying there and drop every later, acknowledged write. Only
//! a record *cut short at the very end* of the WAL is dropped: it is the write a crash or power
//! cut interrupted, which was never fsynced and so never reported durable to openraft (appends
//! are acknowledged after `flush_wal(true)`, the vote after a synced write), so dropping it
//! loses nothing a peer relies on. `AbsoluteConsistency` would refuse that too, turning every
//! power cut during a write into a server that needs wiping. Paranoid checks are on, and every
//! read verifies block checksums; a corrupt block found by a read is [`StoreError::Corrupt`].

use std::fmt::Debug;
use std::io;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::{mpsc, Arc, Weak};

use openraft::storage::{IOFlushed, LogState, RaftLogStorage};
use openraft::type_config::alias::{EntryOf, LogIdOf, VoteOf};
use openraft::{OptionalSend, RaftLogReader};
use rocksdb::{
    ColumnFamily, ColumnFamilyDescriptor, DBRecoveryMode, ErrorKind, IteratorMode, Options,
    ReadOptions, WriteBatch, WriteOptions, DB,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::codec::{self, CodecError};
use crate::error::{RaftError, REJOIN};
use crate::types::TypeConfig;

mod read;
mod readahead;
mod tuning;
pub mod wal_dir;

use read::{capacity, read_entries, ReadMode};
use readahead::ReadAhead;
pub use tuning::{LogCompaction, StorageTuning, MAX_BACKGROUND_IO_MB_PER_SEC, MAX_LOG_MEMTABLE_MB};

/// Column family of the log entries, keyed by big-endian index.
pub const CF_LOGS: &str = "logs";
/// Column family of the vote, the committed log id and the last purged log id.
pub const CF_META: &str = "meta";
/// Column family of the latest snapshot (one key).
pub const CF_SNAPSHOTS: &str = "snapshots";

const KEY_VOTE: &[u8] = b"vote";
const KEY_COMMITTED: &[u8] = b"committed";
const KEY_LAST_PURGED: &[u8] = b"last_purged";

/// How many encoded bytes of entries one `limited_get_log_entries` returns at most (at least one
/// entry is always returned): bounds replication messages to lagging followers.
pub const READ_BUDGET_BYTES: usize = 4 * 1024 * 1024;

/// A key greater than every 8-byte index key: the exclusive end of "everything after".
const END_OF_LOGS: [u8; 9] = [0xff; 9];

/// Why a storage operation failed; converted to `io::Error` at openraft's boundary.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// RocksDB refused a read or write.
    #[error("rocksdb {op} in column family {cf}: {source}")]
    Rocks {
        /// What was being done (`"append"`, `"read vote"`, ...).
        op: &'static str,
        /// The column family involved.
        cf: &'static str,
        /// RocksDB's reason.
        source: rocksdb::Error,
    },
    /// RocksDB found corrupt data (a block or record checksum mismatch) while reading.
    #[error("rocksdb {op} in column family {cf} found corrupt data: {source}; wipe this server's data dir and rejoin as a new member: {REJOIN}")]
    Corrupt {
        /// What was being done.
        op: &'static str,
        /// The column family involved.
        cf: &'static str,
        /// RocksDB's reason.
        source: rocksdb::Error,
    },
    /// The database was not opened with [`open_db`] (a column family is absent).
    #[error(
        "column family {0} is missing; open the database with convoy_raft::log_store::open_db"
    )]
    MissingColumnFamily(&'static str),
    /// A stored value does not decode (or a value does not encode).
    #[error("{what} at key {key:?} in column family {cf}: {source}")]
    Codec {
        /// The value involved (`"log entry"`, `"vote"`, ...).
        what: &'static str,
        /// The column family involved.
        cf: &'static str,
        /// The key, printable.
        key: String,
        /// The codec's reason.
        source: CodecError,
    },
    /// The log has a hole: the entry at `expected` is absent but a later one exists.
    #[error("log hole: expected entry at index {expected}, found index {found}")]
    Hole {
        /// The index that should have come next.
        expected: u64,
        /// The index found instead.
        found: u64,
    },
    /// A file operation outside RocksDB (the snapshot directory) failed.
    #[error("cannot {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file or directory.
        path: String,
        /// The system's reason.
        source: io::Error,
    },
    /// The data dir's store id (`meta` key `store_id`) is not 16 bytes.
    #[error("the store id in column family meta is {0} bytes, not 16")]
    BadStoreId(usize),
    /// A key in the `logs` column family is not an 8-byte big-endian index.
    #[error("log key {0:?} is not an 8-byte big-endian index")]
    BadLogKey(Vec<u8>),
    /// A blocking storage task panicked or was cancelled, or the database is closed.
    #[error("storage task for {op} did not complete: {reason}")]
    Task {
        /// What was being done.
        op: &'static str,
        /// Why it did not complete.
        reason: String,
    },
}

impl From<StoreError> for io::Error {
    fn from(e: StoreError) -> Self {
        io::Error::other(e)
    }
}

/// Opens (creating if needed) the server's RocksDB at `dir` with the `logs`, `meta` and
/// `snapshots` column families. Share the handle between [`RocksLogStore`] and the state
/// machine store.
///
/// A damaged WAL, MANIFEST or SST is refused with [`RaftError::Corrupt`] (see the module's
/// "Integrity").
pub fn open_db(dir: &Path) -> Result<Arc<DB>, RaftError> {
    open_db_tuned(dir, &StorageTuning::default())
}

/// [`open_db`] with the log's RocksDB tuned by `tuning`.
///
/// A data dir opened with another `wal_dir` than it was created with is refused first
/// ([`RaftError::WalDirMismatch`], see [`wal_dir`]).
pub fn open_db_tuned(dir: &Path, tuning: &StorageTuning) -> Result<Arc<DB>, RaftError> {
    wal_dir::check(dir, tuning.wal_dir.as_deref())?;
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts.set_wal_recovery_mode(DBRecoveryMode::TolerateCorruptedTailRecords);
    opts.set_paranoid_checks(true);
    let mut logs = Options::default();
    tuning.apply(&mut opts, &mut logs);
    let cfs = [
        ColumnFamilyDescriptor::new(CF_LOGS, logs),
        ColumnFamilyDescriptor::new(CF_META, Options::default()),
        ColumnFamilyDescriptor::new(CF_SNAPSHOTS, Options::default()),
    ];
    DB::open_cf_descriptors(&opts, dir, cfs)
        .map(Arc::new)
        .map_err(|e| match e.kind() {
            ErrorKind::Corruption => RaftError::Corrupt {
                path: dir.display().to_string(),
                what: "raft log (RocksDB)".to_string(),
                reason: e.to_string(),
            },
            _ => RaftError::Storage {
                path: dir.display().to_string(),
                reason: format!("cannot open RocksDB: {e}"),
            },
        })
}

/// Read options that verify every block's checksum (RocksDB's default, made explicit).
pub(crate) fn checked_reads() -> ReadOptions {
    let mut opts = ReadOptions::default();
    opts.set_verify_checksums(true);
    opts
}

/// Maps a RocksDB error of `op` in `cf` to [`StoreError::Corrupt`] if it reports corruption,
/// else to [`StoreError::Rocks`].
pub(crate) fn rocks_error(
    op: &'static str,
    cf: &'static str,
) -> impl FnOnce(rocksdb::Error) -> StoreError {
    move |source| match source.kind() {
        ErrorKind::Corruption => StoreError::Corrupt { op, cf, source },
        _ => StoreError::Rocks { op, cf, source },
    }
}

/// Returns the handle of column family `name`.
pub(crate) fn cf<'a>(db: &'a DB, name: &'static str) -> Result<&'a ColumnFamily, StoreError> {
    db.cf_handle(name)
        .ok_or(StoreError::MissingColumnFamily(name))
}

/// Reads and decodes the value at `key` in column family `cf_name`, if present.
pub(crate) fn get_value<T: DeserializeOwned>(
    db: &DB,
    cf_name: &'static str,
    key: &[u8],
    what: &'static str,
) -> Result<Option<T>, StoreError> {
    let handle = cf(db, cf_name)?;
    let Some(bytes) = db
        .get_pinned_cf_opt(handle, key, &checked_reads())
        .map_err(rocks_error(what, cf_name))?
    else {
        return Ok(None);
    };
    codec::decode(&bytes)
        .map(Some)
        .map_err(|source| StoreError::Codec {
            what,
            cf: cf_name,
            key: String::from_utf8_lossy(key).into_owned(),
            source,
        })
}

/// Encodes `value` for storage under `key` in `cf_name`.
pub(crate) fn encode_value<T: Serialize>(
    value: &T,
    cf_name: &'static str,
    key: &[u8],
    what: &'static str,
) -> Result<Vec<u8>, StoreError> {
    codec::encode(value).map_err(|source| StoreError::Codec {
        what,
        cf: cf_name,
        key: String::from_utf8_lossy(key).into_owned(),
        source,
    })
}

/// Runs `f` (a synced write) on tokio's blocking pool and waits for it.
pub(crate) async fn blocking<F>(db: &Arc<DB>, op: &'static str, f: F) -> Result<(), StoreError>
where
    F: FnOnce(&DB) -> Result<(), StoreError> + Send + 'static,
{
    let db = db.clone();
    tokio::task::spawn_blocking(move || f(&db))
        .await
        .map_err(|e| StoreError::Task {
            op,
            reason: e.to_string(),
        })?
}

/// Synced write options: the write is on disk when the call returns.
pub(crate) fn synced() -> WriteOptions {
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    wo
}

/// openraft's log storage (and log reader) on RocksDB. Cheap to clone: clones share the database
/// and the WAL syncer thread, which exits when the last clone is dropped.
#[derive(Clone)]
pub struct RocksLogStore {
    db: Arc<DB>,
    syncer: mpsc::Sender<IOFlushed<TypeConfig>>,
    readahead: Arc<ReadAhead>,
}

impl Debug for RocksLogStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksLogStore")
            .field("path", &self.db.path())
            .finish()
    }
}

impl RocksLogStore {
    /// Wraps a database opened by [`open_db`] and starts its WAL syncer thread.
    ///
    /// Infallible: a missing column family is reported by the first operation that needs it,
    /// and if the syncer thread cannot be started, `append` fsyncs in place instead.
    pub fn new(db: Arc<DB>) -> Self {
        let (tx, rx) = mpsc::channel();
        let weak = Arc::downgrade(&db);
        if let Err(e) = std::thread::Builder::new()
            .name("convoy-wal-sync".into())
            .spawn(move || sync_loop(weak, rx))
        {
            tracing::error!(error = %e, "cannot start the WAL syncer thread; appends will fsync in place");
        }
        Self {
            db,
            syncer: tx,
            readahead: Arc::default(),
        }
    }

    /// The underlying database.
    pub fn db(&self) -> &Arc<DB> {
        &self.db
    }

    fn meta<T: DeserializeOwned>(
        &self,
        key: &[u8],
        what: &'static str,
    ) -> Result<Option<T>, StoreError> {
        get_value(&self.db, CF_META, key, what)
    }

    fn rocks(op: &'static str, cf: &'static str) -> impl FnOnce(rocksdb::Error) -> StoreError {
        rocks_error(op, cf)
    }

    /// Reads `[start, end)` from the read-ahead if it continues the previous read, else directly.
    async fn read_bounded(
        &self,
        start: u64,
        end: u64,
    ) -> Result<Vec<EntryOf<TypeConfig>>, StoreError> {
        let ahead = (start < end)
            .then(|| self.readahead.take(&self.db, start, end))
            .flatten();
        let Some(mut ahead) = ahead else {
            return read_entries(&self.db, start, Some(end), ReadMode::All);
        };
        let mut out = Vec::with_capacity(capacity(start, Some(end)));
        ahead.serve(end, &mut out).await;
        let next = ahead.next();
        self.readahead.put_back(ahead);
        if next < end {
            // The read-ahead stopped (end of the log, a hole, an error): the rest, directly.
            out.extend(read_entries(&self.db, next, Some(end), ReadMode::All)?);
        }
        if self.readahead.written() {
            // The log was written meanwhile: the queued entries may predate it.
            return read_entries(&self.db, start, Some(end), ReadMode::All);
        }
        Ok(out)
    }

    fn last_entry_log_id(&self) -> Result<Option<LogIdOf<TypeConfig>>, StoreError> {
        let logs = cf(&self.db, CF_LOGS)?;
        let Some(item) = self
            .db
            .iterator_cf_opt(logs, checked_reads(), IteratorMode::End)
            .next()
        else {
            return Ok(None);
        };
        let (key, value) = item.map_err(Self::rocks("read last log entry", CF_LOGS))?;
        let entry: EntryOf<TypeConfig> =
            codec::decode(&value).map_err(|source| StoreError::Codec {
                what: "log entry",
                cf: CF_LOGS,
                key: format!("{:?}", key_index(&key)),
                source,
            })?;
        Ok(Some(entry.log_id))
    }

    fn write_append(&self, entries: Vec<EntryOf<TypeConfig>>) -> Result<(), StoreError> {
        let logs = cf(&self.db, CF_LOGS)?;
        let mut batch = WriteBatch::default();
        for entry in &entries {
            let key = entry.log_id.index.to_be_bytes();
            batch.put_cf(logs, key, encode_value(entry, CF_LOGS, &key, "log entry")?);
        }
        self.db
            .write_opt(batch, &WriteOptions::default())
            .map_err(Self::rocks("append log entries", CF_LOGS))
    }
}

/// Decodes a `logs` key back into its index.
fn key_index(key: &[u8]) -> Result<u64, StoreError> {
    let bytes: [u8; 8] = key
        .try_into()
        .map_err(|_| StoreError::BadLogKey(key.to_vec()))?;
    Ok(u64::from_be_bytes(bytes))
}

/// The WAL syncer: fsyncs the WAL once for every run of queued append callbacks, then completes
/// them in order. Exits when every [`RocksLogStore`] clone is gone.
fn sync_loop(db: Weak<DB>, rx: mpsc::Receiver<IOFlushed<TypeConfig>>) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        batch.extend(rx.try_iter());
        let result = match db.upgrade() {
            Some(db) => {
                let _fsync = crate::stats::stats().fsync.start_timer();
                db.flush_wal(true).map_err(|e| e.to_string())
            }
            None => Err("database is closed".to_string()),
        };
        if let Err(reason) = &result {
            tracing::error!(error = %reason, callbacks = batch.len(), "cannot sync the raft log WAL");
        }
        for callback in batch {
            callback.io_completed(
                result
                    .clone()
                    .map_err(|reason| io::Error::other(format!("sync raft log WAL: {reason}"))),
            );
        }
    }
}

/// A log index range as `[start, end)`: the first index and the one past the last (`None`: no end).
/// Shared by every log store's `try_get_log_entries` (the simulation's in-memory one too).
pub fn index_range(range: &impl RangeBounds<u64>) -> (u64, Option<u64>) {
    let start = match range.start_bound() {
        Bound::Included(&i) => i,
        Bound::Excluded(&i) => i.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&i) => i.checked_add(1),
        Bound::Excluded(&i) => Some(i),
        Bound::Unbounded => None,
    };
    (start, end)
}

impl RaftLogReader<TypeConfig> for RocksLogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<EntryOf<TypeConfig>>, io::Error> {
        let (start, end) = index_range(&range);
        let entries = match end {
            Some(end) => self.read_bounded(start, end).await?,
            None => read_entries(&self.db, start, None, ReadMode::All)?,
        };
        Ok(entries)
    }

    async fn limited_get_log_entries(
        &mut self,
        start: u64,
        end: u64,
    ) -> Result<Vec<EntryOf<TypeConfig>>, io::Error> {
        Ok(read_entries(
            &self.db,
            start,
            Some(end),
            ReadMode::Budget(READ_BUDGET_BYTES),
        )?)
    }

    async fn read_vote(&mut self) -> Result<Option<VoteOf<TypeConfig>>, io::Error> {
        Ok(self.meta(KEY_VOTE, "vote")?)
    }
}

impl RaftLogStorage<TypeConfig> for RocksLogStore {
    type LogReader = Self;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, io::Error> {
        let last_purged_log_id: Option<LogIdOf<TypeConfig>> =
            self.meta(KEY_LAST_PURGED, "last purged log id")?;
        let last_log_id = self.last_entry_log_id()?.or(last_purged_log_id);
        Ok(LogState {
            last_purged_log_id,
            last_log_id,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &VoteOf<TypeConfig>) -> Result<(), io::Error> {
        let bytes = encode_value(vote, CF_META, KEY_VOTE, "vote")?;
        blocking(&self.db, "save vote", move |db| {
            db.put_cf_opt(cf(db, CF_META)?, KEY_VOTE, bytes, &synced())
                .map_err(Self::rocks("save vote", CF_META))
        })
        .await?;
        Ok(())
    }

    async fn save_committed(
        &mut self,
        committed: Option<LogIdOf<TypeConfig>>,
    ) -> Result<(), io::Error> {
        let bytes = encode_value(&committed, CF_META, KEY_COMMITTED, "committed log id")?;
        self.db
            .put_cf(cf(&self.db, CF_META)?, KEY_COMMITTED, bytes)
            .map_err(Self::rocks("save committed log id", CF_META))?;
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogIdOf<TypeConfig>>, io::Error> {
        let committed: Option<Option<LogIdOf<TypeConfig>>> =
            self.meta(KEY_COMMITTED, "committed log id")?;
        Ok(committed.flatten())
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: IOFlushed<TypeConfig>,
    ) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = EntryOf<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let entries: Vec<_> = entries.into_iter().collect();
        self.readahead.stop();
        let timer = crate::stats::stats().append.start_timer();
        let written = self.write_append(entries);
        timer.observe_duration();
        if let Err(e) = written {
            callback.io_completed(Err(io::Error::other(e.to_string())));
            return Err(e.into());
        }
        if let Err(mpsc::SendError(callback)) = self.syncer.send(callback) {
            // Only if the syncer thread could not be started (it exits when every sender is gone).
            let result = self.db.flush_wal(true).map_err(io::Error::other);
            callback.io_completed(result);
        }
        Ok(())
    }

    async fn truncate_after(
        &mut self,
        last_log_id: Option<LogIdOf<TypeConfig>>,
    ) -> Result<(), io::Error> {
        let from = last_log_id.map_or(0, |id| id.index + 1);
        self.readahead.stop();
        blocking(&self.db, "truncate log", move |db| {
            let mut batch = WriteBatch::default();
            batch.delete_range_cf(cf(db, CF_LOGS)?, &from.to_be_bytes()[..], &END_OF_LOGS[..]);
            db.write_opt(batch, &synced())
                .map_err(Self::rocks("truncate log", CF_LOGS))
        })
        .await?;
        Ok(())
    }

    async fn purge(&mut self, log_id: LogIdOf<TypeConfig>) -> Result<(), io::Error> {
        let bytes = encode_value(&log_id, CF_META, KEY_LAST_PURGED, "last purged log id")?;
        let end = log_id.index.checked_add(1).map(u64::to_be_bytes);
        let mut batch = WriteBatch::default();
        batch.put_cf(cf(&self.db, CF_META)?, KEY_LAST_PURGED, bytes);
        let end: &[u8] = end.as_ref().map_or(&END_OF_LOGS[..], |e| &e[..]);
        batch.delete_range_cf(cf(&self.db, CF_LOGS)?, &0u64.to_be_bytes()[..], end);
        self.readahead.stop();
        self.db
            .write_opt(batch, &WriteOptions::default())
            .map_err(Self::rocks("purge log", CF_LOGS))?;
        Ok(())
    }
}
