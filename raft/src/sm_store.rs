//! The state machine store: applies committed entries to the application's [`StateMachine`],
//! builds, persists and installs snapshots, and shares the applied state with readers.
//!
//! The state lives in memory; only snapshots are persisted: the latest one, as the file
//! `snapshot/current.snap` in the data dir (format in [`format`]: a header with the data dir's
//! store id and what the snapshot covers, then the state in checksummed chunks). On restart
//! [`SmStore::open`] streams the state back from it, and openraft re-applies the log from there up
//! to the committed index the log store saved. A truncated or damaged snapshot file, or one that
//! another data dir wrote, makes [`SmStore::open`] refuse with [`RaftError::Corrupt`].
//!
//! No snapshot is held or decoded whole here: [`StateMachine::snapshot_to`] writes into a
//! [`format::ChunkWriter`] over a temporary file that is then fsynced and renamed into place, and
//! [`StateMachine::restore_from`] reads from a [`format::ChunkReader`] that verifies each chunk
//! before handing out its bytes. A snapshot received from the leader is verified, restored and
//! copied into this data dir's own file in the same pass.

use std::fmt::Debug;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt};
use openraft::storage::{EntryResponder, RaftStateMachine};
use openraft::type_config::alias::{LogIdOf, SnapshotMetaOf, SnapshotOf, StoredMembershipOf};
use openraft::{OptionalSend, RaftSnapshotBuilder, StoredMembership};
use rocksdb::DB;
use serde::Deserialize;
use tokio::sync::watch;

use crate::codec;
use crate::error::RaftError;
use crate::log_store::{cf, checked_reads, rocks_error, synced, StoreError, CF_SNAPSHOTS};
use crate::state_machine::{FrozenState, StateMachine};
use crate::types::TypeConfig;

mod apply;
pub mod data;
pub mod files;
pub mod format;

pub use apply::apply_proposal;
pub use data::SnapshotData;
use files::{SnapshotDir, Temp};
use format::{
    read_header, write_header, ChunkReader, ChunkWriter, FormatError, SnapshotInfo, StoreId,
};

/// The key of the snapshot in the `snapshots` column family, where versions before the snapshot
/// files kept it; [`SmStore::open`] moves it into a file.
const KEY_LEGACY_SNAPSHOT: &[u8] = b"current";

/// A snapshot as versions before the snapshot files stored it (one codec value).
#[derive(Deserialize)]
struct LegacySnapshot {
    last_applied: Option<LogIdOf<TypeConfig>>,
    last_membership: StoredMembershipOf<TypeConfig>,
    last_at_ms: u64,
    state: Vec<u8>,
}

/// The shared handle on the applied state, as [`SmStore::applied`] returns it.
pub type Applied<S> = Arc<AppliedState<S>>;

struct Inner<S> {
    sm: S,
    last_applied: Option<LogIdOf<TypeConfig>>,
    membership: StoredMembershipOf<TypeConfig>,
    last_at_ms: u64,
}

/// The applied application state, shared between the raft core (which applies) and readers.
pub struct AppliedState<S> {
    inner: RwLock<Inner<S>>,
    index: watch::Sender<u64>,
    /// The last log id of the persisted snapshot; held while writing one, so that a slow builder
    /// never replaces a newer snapshot.
    persisted: Mutex<Option<LogIdOf<TypeConfig>>>,
}

impl<S: StateMachine> AppliedState<S> {
    fn new(inner: Inner<S>) -> Self {
        let index = inner.last_applied.as_ref().map_or(0, |id| id.index);
        let persisted = inner.last_applied;
        Self {
            inner: RwLock::new(inner),
            index: watch::Sender::new(index),
            persisted: Mutex::new(persisted),
        }
    }

    fn lock_read(&self) -> RwLockReadGuard<'_, Inner<S>> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_write(&self) -> RwLockWriteGuard<'_, Inner<S>> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the applied state under a read lock (keep `f` short: it delays applying).
    pub fn read<R>(&self, f: impl FnOnce(&S) -> R) -> R {
        f(&self.lock_read().sm)
    }

    /// Runs `f` on the applied state and returns it with the index it reflects, under one read lock.
    pub fn read_at<R>(&self, f: impl FnOnce(&S) -> R) -> (u64, R) {
        let inner = self.lock_read();
        let index = inner.last_applied.as_ref().map_or(0, |id| id.index);
        (index, f(&inner.sm))
    }

    /// The index of the last applied log entry, 0 if none.
    pub fn last_applied(&self) -> u64 {
        *self.index.borrow()
    }

    /// The id of the last applied log entry, if any.
    pub fn last_applied_log_id(&self) -> Option<LogIdOf<TypeConfig>> {
        self.lock_read().last_applied
    }

    /// The last applied membership.
    pub fn membership(&self) -> StoredMembershipOf<TypeConfig> {
        self.lock_read().membership.clone()
    }

    /// A receiver of the last applied index; it is notified after every chunk of applied entries
    /// (see [`SmStore`]'s `apply`), with the chunk's last index.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.index.subscribe()
    }

    /// Waits until the entry at `index` is applied.
    pub async fn wait_applied(&self, index: u64) {
        let mut rx = self.subscribe();
        // The sender lives in `self`, so the channel cannot close while we borrow it.
        let _ = rx.wait_for(|applied| *applied >= index).await;
    }

    /// The (clamped, monotonic) time of the last applied command, ms since the Unix epoch.
    pub fn last_at_ms(&self) -> u64 {
        self.lock_read().last_at_ms
    }
}

/// Writes the applied state as a snapshot into a new temporary file of `files`; returns the file,
/// what it covers and how long applying was held off (the read lock held). The header's info and
/// the state are taken under one read lock; the state is written after releasing it if the state
/// machine can [`StateMachine::freeze`] it.
fn write_snapshot<S: StateMachine>(
    applied: &AppliedState<S>,
    files: &SnapshotDir,
) -> Result<(Temp, SnapshotInfo, Duration), FormatError> {
    let io = |op| move |source| FormatError::Io { op, source };
    let mut temp = files.create_temp().map_err(io("create a snapshot file"))?;
    let inner = applied.lock_read();
    let locked = Instant::now();
    let info = SnapshotInfo {
        last_applied: inner.last_applied,
        last_membership: inner.membership.clone(),
        last_at_ms: inner.last_at_ms,
    };
    /// Who writes the state: the frozen copy (lock released) or the state under the lock.
    enum Source<'a, S> {
        Frozen(FrozenState),
        Locked(RwLockReadGuard<'a, Inner<S>>),
    }
    let mut held = Duration::ZERO;
    let source = match inner.sm.freeze() {
        Some(frozen) => {
            drop(inner);
            held = locked.elapsed();
            // The rest touches no lock the write path takes: let the write path go first.
            crate::background::lower_this_thread();
            Source::Frozen(frozen)
        }
        None => Source::Locked(inner),
    };
    write_header(temp.file(), files.store(), &info).map_err(io("write a snapshot header"))?;
    let mut out = ChunkWriter::new(temp.file());
    let written = match source {
        Source::Frozen(frozen) => frozen(&mut out),
        Source::Locked(inner) => {
            let written = inner.sm.snapshot_to(&mut out);
            drop(inner);
            held = locked.elapsed();
            written
        }
    };
    written.map_err(io("write the state into a snapshot"))?;
    out.finish().map_err(io("write a snapshot"))?;
    Ok((temp, info, held))
}

/// Reads a whole snapshot from `input`: the header (written by `expect_store`, if given), then the
/// state, restored by `S` and, if `copy` is given, copied into that file under a header stamped
/// with its store id.
fn read_snapshot<S: StateMachine>(
    input: &mut dyn Read,
    expect_store: Option<&StoreId>,
    copy: Option<(&mut File, &StoreId)>,
) -> Result<(SnapshotInfo, S), FormatError> {
    let (store, info) = read_header(input)?;
    if let Some(expected) = expect_store.filter(|expected| **expected != store) {
        return Err(FormatError::ForeignStore {
            found: format::hex(&store),
            expected: format::hex(expected),
        });
    }
    let io = |op| move |source| FormatError::Io { op, source };
    let mut copy = match copy {
        Some((file, id)) => {
            write_header(file, id, &info).map_err(io("write a snapshot header"))?;
            Some(ChunkWriter::new(file))
        }
        None => None,
    };
    let mut reader = ChunkReader::new(input);
    if let Some(copy) = copy.as_mut() {
        reader = reader.copying_into(copy);
    }
    let sm = match S::restore_from(&mut reader) {
        Ok(sm) => sm,
        Err(reason) => return Err(reader.take_error().unwrap_or(FormatError::Restore(reason))),
    };
    reader.finish()?;
    if let Some(copy) = copy {
        copy.finish().map_err(io("write a snapshot"))?;
    }
    Ok((info, sm))
}

/// Makes `temp` (covering `last_log_id`) the persisted snapshot, unless `only_if_newer` and a
/// snapshot past `last_log_id` is already persisted; returns the file either way.
fn persist_snapshot<S>(
    files: &SnapshotDir,
    applied: &AppliedState<S>,
    last_log_id: &Option<LogIdOf<TypeConfig>>,
    temp: Temp,
    only_if_newer: bool,
) -> io::Result<File> {
    let mut persisted = applied.persisted.lock().unwrap_or_else(|e| e.into_inner());
    if only_if_newer && *persisted > *last_log_id {
        return Ok(temp.into_unlinked());
    }
    let file = files.commit(temp)?;
    *persisted = *last_log_id;
    Ok(file)
}

/// A snapshot file's error as openraft's I/O error, naming the file.
fn file_error(path: &Path, e: FormatError) -> io::Error {
    io::Error::other(format!("snapshot file {}: {e}", path.display()))
}

/// The error [`SmStore::open`] returns for the snapshot file at `path`: an I/O failure is a
/// storage error, anything else means the file cannot be trusted.
fn open_error(db: &DB, path: &Path, e: FormatError) -> RaftError {
    let dir = db.path().display().to_string();
    match e {
        FormatError::Io { .. } => RaftError::Storage {
            path: dir,
            reason: format!("snapshot file {}: {e}", path.display()),
        },
        e => RaftError::Corrupt {
            path: dir,
            what: format!("snapshot file {}", path.display()),
            reason: e.to_string(),
        },
    }
}

/// Moves a snapshot kept in the `snapshots` column family by an older version into a snapshot
/// file (unless a file already exists), then deletes it from the column family.
fn migrate_legacy_snapshot(db: &DB, files: &SnapshotDir) -> Result<(), RaftError> {
    let dir = db.path().display().to_string();
    let storage = |reason: String| RaftError::Storage {
        path: dir.clone(),
        reason,
    };
    let snapshots = cf(db, CF_SNAPSHOTS).map_err(|e| storage(e.to_string()))?;
    let found = db
        .get_cf_opt(snapshots, KEY_LEGACY_SNAPSHOT, &checked_reads())
        .map_err(|e| storage(rocks_error("read legacy snapshot", CF_SNAPSHOTS)(e).to_string()))?;
    let Some(bytes) = found else {
        return Ok(());
    };
    let current = files.open_current().map_err(|e| storage(e.to_string()))?;
    if current.is_none() {
        let legacy: LegacySnapshot = codec::decode(&bytes).map_err(|e| RaftError::Corrupt {
            path: dir.clone(),
            what: "snapshot in column family snapshots".to_string(),
            reason: e.to_string(),
        })?;
        let info = SnapshotInfo {
            last_applied: legacy.last_applied,
            last_membership: legacy.last_membership,
            last_at_ms: legacy.last_at_ms,
        };
        let write = |temp: &mut Temp| -> io::Result<()> {
            write_header(temp.file(), files.store(), &info)?;
            let mut out = ChunkWriter::new(temp.file());
            out.write_all(&legacy.state)?;
            out.finish().map(drop)
        };
        let mut temp = files.create_temp().map_err(|e| storage(e.to_string()))?;
        write(&mut temp).map_err(|e| storage(format!("cannot move the legacy snapshot: {e}")))?;
        files.commit(temp).map_err(|e| storage(e.to_string()))?;
        tracing::info!(last_log_id = ?info.last_applied, bytes = legacy.state.len(), "moved the snapshot from RocksDB into a snapshot file");
    }
    db.delete_cf_opt(snapshots, KEY_LEGACY_SNAPSHOT, &synced())
        .map_err(|e| storage(rocks_error("delete legacy snapshot", CF_SNAPSHOTS)(e).to_string()))
}

/// openraft's state machine store over an application [`StateMachine`].
pub struct SmStore<S: StateMachine> {
    db: Arc<DB>,
    applied: Applied<S>,
    files: Arc<SnapshotDir>,
}

impl<S: StateMachine> SmStore<S> {
    /// Opens the store on a database from [`crate::log_store::open_db`], restoring the state from
    /// the persisted snapshot if there is one.
    ///
    /// A snapshot file that is truncated, fails a checksum, does not restore, or was written by
    /// another data dir is refused with [`RaftError::Corrupt`], never skipped: skipping it would
    /// start this server from an empty state over a purged log.
    pub fn open(db: Arc<DB>) -> Result<Self, RaftError> {
        let storage_err = |reason: String| RaftError::Storage {
            path: db.path().display().to_string(),
            reason,
        };
        let files = SnapshotDir::open(&db).map_err(|e| storage_err(e.to_string()))?;
        migrate_legacy_snapshot(&db, &files)?;
        let path = files.current_path();
        let inner = match files
            .open_current()
            .map_err(|e| storage_err(e.to_string()))?
        {
            None => Inner {
                sm: S::default(),
                last_applied: None,
                membership: StoredMembership::default(),
                last_at_ms: 0,
            },
            Some(file) => {
                let started = Instant::now();
                let len = file.metadata().map(|m| m.len()).unwrap_or(0);
                let mut input = &file;
                let (info, sm) = read_snapshot::<S>(&mut input, Some(files.store()), None)
                    .map_err(|e| open_error(&db, &path, e))?;
                let ms = started.elapsed().as_millis() as u64;
                tracing::info!(last_log_id = ?info.last_applied, bytes = len, ms, "restored the state from the snapshot");
                Inner {
                    sm,
                    last_applied: info.last_applied,
                    membership: info.last_membership,
                    last_at_ms: info.last_at_ms,
                }
            }
        };
        let applied = Arc::new(AppliedState::new(inner));
        Ok(Self {
            db,
            applied,
            files: Arc::new(files),
        })
    }

    /// The shared handle on the applied state, for readers.
    pub fn applied(&self) -> Applied<S> {
        self.applied.clone()
    }

    /// The path of the persisted snapshot file (which may not exist yet).
    pub fn snapshot_path(&self) -> std::path::PathBuf {
        self.files.current_path()
    }
}

/// Builds a snapshot of the applied state and persists it as the current one.
pub struct SmSnapshotBuilder<S: StateMachine> {
    files: Arc<SnapshotDir>,
    applied: Applied<S>,
}

impl<S: StateMachine> RaftSnapshotBuilder<TypeConfig> for SmSnapshotBuilder<S> {
    type SnapshotData = SnapshotData;

    async fn build_snapshot(&mut self) -> Result<SnapshotOf<TypeConfig, SnapshotData>, io::Error> {
        let (files, applied) = (self.files.clone(), self.applied.clone());
        // Its own thread, lowered in priority once the state is frozen (module `background`).
        crate::background::run("convoy-snapshot", move || {
            let started = Instant::now();
            let (temp, info, held) = write_snapshot(&applied, &files)
                .map_err(|e| file_error(files.dir(), e))?;
            let file = persist_snapshot(&files, &applied, &info.last_applied, temp, true)?;
            let snapshot = SnapshotData::from_file(file)?;
            let ms = started.elapsed().as_millis() as u64;
            let apply_held_ms = held.as_millis() as u64;
            crate::stats::record_snapshot_freeze(held);
            tracing::info!(last_log_id = ?info.last_applied, bytes = snapshot.len(), ms, apply_held_ms, "built snapshot");
            crate::stats::record_snapshot(false, started.elapsed(), snapshot.len());
            Ok(SnapshotOf::<TypeConfig, SnapshotData> {
                meta: info.meta(),
                snapshot,
            })
        })
        .await
        .map_err(|e| StoreError::Task {
            op: "build snapshot",
            reason: e.to_string(),
        })?
    }
}

impl<S: StateMachine> RaftStateMachine<TypeConfig> for SmStore<S> {
    type SnapshotData = SnapshotData;
    type SnapshotBuilder = SmSnapshotBuilder<S>;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogIdOf<TypeConfig>>, StoredMembershipOf<TypeConfig>), io::Error> {
        let inner = self.applied.lock_read();
        Ok((inner.last_applied, inner.membership.clone()))
    }

    /// Applies the entries in chunks (module `apply`): the entries the stream has ready under one
    /// write lock; then the chunk's last index is published (waking every waiter up to it) and
    /// only then are its replies sent, in log order.
    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin + OptionalSend,
    {
        let mut replies = Vec::new();
        while let Some(first) = entries.next().await {
            let (last, end) = apply::apply_chunk(&self.applied, first, &mut entries, &mut replies);
            // Publish the index before answering, so whoever gets a reply sees its entry applied.
            if let Some(index) = last {
                self.applied.index.send_replace(index);
            }
            for (responder, reply) in replies.drain(..) {
                responder.send(reply);
            }
            match end {
                apply::ChunkEnd::More => {}
                apply::ChunkEnd::Finished => break,
                apply::ChunkEnd::Failed(e) => return Err(e),
            }
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SmSnapshotBuilder {
            files: self.files.clone(),
            applied: self.applied.clone(),
        }
    }

    /// Verifies and restores the snapshot in one streaming pass, copying it into this data dir's
    /// snapshot file (stamped with its store id), then swaps the state in.
    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMetaOf<TypeConfig>,
        snapshot: SnapshotData,
    ) -> Result<(), io::Error> {
        let (files, applied, last_log_id) =
            (self.files.clone(), self.applied.clone(), meta.last_log_id);
        let (sm, last_at_ms) = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let mut temp = files.create_temp()?;
            let refused = |e| io::Error::other(format!("snapshot of {} bytes refused: {e}", snapshot.len()));
            let mut input = snapshot.reader();
            let (info, sm) = read_snapshot::<S>(&mut input, None, Some((temp.file(), files.store())))
                .map_err(refused)?;
            if info.last_applied != last_log_id {
                return Err(refused(FormatError::MetaMismatch {
                    header: info.last_applied,
                    meta: last_log_id,
                }));
            }
            persist_snapshot(&files, &applied, &last_log_id, temp, false)?;
            let ms = started.elapsed().as_millis() as u64;
            tracing::info!(last_log_id = ?last_log_id, bytes = snapshot.len(), ms, "verified and restored a snapshot");
            crate::stats::record_snapshot(true, started.elapsed(), snapshot.len());
            Ok::<_, io::Error>((sm, info.last_at_ms))
        })
        .await
        .map_err(|e| StoreError::Task {
            op: "install snapshot",
            reason: e.to_string(),
        })??;
        {
            let mut inner = self.applied.lock_write();
            inner.sm = sm;
            inner.last_applied = meta.last_log_id;
            inner.membership = meta.last_membership.clone();
            inner.last_at_ms = last_at_ms;
        }
        self.applied
            .index
            .send_replace(meta.last_log_id.as_ref().map_or(0, |id| id.index));
        tracing::info!(last_log_id = ?meta.last_log_id, "installed snapshot");
        Ok(())
    }

    /// Opens the persisted snapshot file and reads its header; the state is read only by whoever
    /// reads the returned data.
    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<SnapshotOf<TypeConfig, SnapshotData>>, io::Error> {
        let files = self.files.clone();
        tokio::task::spawn_blocking(move || {
            let Some(file) = files.open_current()? else {
                return Ok(None);
            };
            let path = files.current_path();
            let (store, info) = read_header(&mut &file).map_err(|e| file_error(&path, e))?;
            if store != *files.store() {
                let e = FormatError::ForeignStore {
                    found: format::hex(&store),
                    expected: format::hex(files.store()),
                };
                return Err(file_error(&path, e));
            }
            Ok(Some(SnapshotOf::<TypeConfig, SnapshotData> {
                meta: info.meta(),
                snapshot: SnapshotData::from_file(file)?,
            }))
        })
        .await
        .map_err(|e| StoreError::Task {
            op: "read snapshot",
            reason: e.to_string(),
        })?
    }
}

impl<S: StateMachine> Debug for SmStore<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmStore")
            .field("path", &self.db.path())
            .field("last_applied", &self.applied.last_applied())
            .finish()
    }
}
