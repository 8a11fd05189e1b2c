//! The state machine store: applies committed entries to the application's [`StateMachine`],
//! builds, persists and installs snapshots, and shares the applied state with readers.
//!
//! The state lives in memory; only snapshots are persisted (the latest one, in the `snapshots`
//! column family). On restart [`SmStore::open`] restores the last snapshot and openraft re-applies
//! the log from there up to the committed index the log store saved.
//!
//! A snapshot's bytes are the [`crate::codec`] encoding of [`SnapshotBody`]: the last applied log
//! id, the last membership, the last applied time and `S::snapshot()`.

use std::fmt::Debug;
use std::io;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use futures::{Stream, StreamExt};
use openraft::storage::{EntryResponder, RaftStateMachine};
use openraft::type_config::alias::{LogIdOf, SnapshotMetaOf, SnapshotOf, StoredMembershipOf};
use openraft::{OptionalSend, RaftSnapshotBuilder, StoredMembership};
use rocksdb::DB;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::codec;
use crate::error::RaftError;
use crate::log_store::{cf, encode_value, synced, StoreError, CF_SNAPSHOTS};
use crate::state_machine::StateMachine;
use crate::types::TypeConfig;

mod apply;

const KEY_SNAPSHOT: &[u8] = b"current";

/// What a snapshot holds; its encoding is the snapshot data openraft ships to followers.
#[derive(Debug, Serialize, Deserialize)]
pub struct SnapshotBody {
    /// The last log id the state includes.
    pub last_applied: Option<LogIdOf<TypeConfig>>,
    /// The last membership applied.
    pub last_membership: StoredMembershipOf<TypeConfig>,
    /// The clamped time of the last applied command, in ms since the Unix epoch.
    pub last_at_ms: u64,
    /// `S::snapshot()`.
    pub state: Vec<u8>,
}

impl SnapshotBody {
    fn meta(&self) -> SnapshotMetaOf<TypeConfig> {
        SnapshotMetaOf::<TypeConfig> {
            last_log_id: self.last_applied,
            last_membership: self.last_membership.clone(),
        }
    }
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

    fn snapshot_body(&self) -> SnapshotBody {
        let inner = self.lock_read();
        SnapshotBody {
            last_applied: inner.last_applied,
            last_membership: inner.membership.clone(),
            last_at_ms: inner.last_at_ms,
            state: inner.sm.snapshot(),
        }
    }
}

/// Reads the persisted snapshot's bytes (stored as they are) and decodes its body.
fn read_snapshot(db: &DB) -> Result<Option<(Vec<u8>, SnapshotBody)>, StoreError> {
    let data = db
        .get_cf(cf(db, CF_SNAPSHOTS)?, KEY_SNAPSHOT)
        .map_err(|source| StoreError::Rocks {
            op: "read snapshot",
            cf: CF_SNAPSHOTS,
            source,
        })?;
    let Some(data) = data else {
        return Ok(None);
    };
    let body = decode_body(&data)?;
    Ok(Some((data, body)))
}

fn decode_body(data: &[u8]) -> Result<SnapshotBody, StoreError> {
    codec::decode(data).map_err(|source| StoreError::Codec {
        what: "snapshot body",
        cf: CF_SNAPSHOTS,
        key: String::from_utf8_lossy(KEY_SNAPSHOT).into_owned(),
        source,
    })
}

/// Writes `data` as the one persisted snapshot (synced), unless `only_if_newer` and a snapshot
/// past `last_log_id` is already persisted.
fn persist_snapshot<S>(
    db: &DB,
    applied: &AppliedState<S>,
    last_log_id: &Option<LogIdOf<TypeConfig>>,
    data: &[u8],
    only_if_newer: bool,
) -> Result<(), StoreError> {
    let mut persisted = applied.persisted.lock().unwrap_or_else(|e| e.into_inner());
    if only_if_newer && *persisted > *last_log_id {
        return Ok(());
    }
    db.put_cf_opt(cf(db, CF_SNAPSHOTS)?, KEY_SNAPSHOT, data, &synced())
        .map_err(|source| StoreError::Rocks {
            op: "save snapshot",
            cf: CF_SNAPSHOTS,
            source,
        })?;
    *persisted = *last_log_id;
    Ok(())
}

/// openraft's state machine store over an application [`StateMachine`].
pub struct SmStore<S: StateMachine> {
    db: Arc<DB>,
    applied: Applied<S>,
}

impl<S: StateMachine> SmStore<S> {
    /// Opens the store on a database from [`crate::log_store::open_db`], restoring the state from
    /// the persisted snapshot if there is one.
    pub fn open(db: Arc<DB>) -> Result<Self, RaftError> {
        let storage_err = |reason: String| RaftError::Storage {
            path: db.path().display().to_string(),
            reason,
        };
        let inner = match read_snapshot(&db).map_err(|e| storage_err(e.to_string()))? {
            None => Inner {
                sm: S::default(),
                last_applied: None,
                membership: StoredMembership::default(),
                last_at_ms: 0,
            },
            Some((_, body)) => Inner {
                sm: S::restore(&body.state).map_err(|e| {
                    storage_err(format!("cannot restore the state from the snapshot: {e}"))
                })?,
                last_applied: body.last_applied,
                membership: body.last_membership,
                last_at_ms: body.last_at_ms,
            },
        };
        let applied = Arc::new(AppliedState::new(inner));
        Ok(Self { db, applied })
    }

    /// The shared handle on the applied state, for readers.
    pub fn applied(&self) -> Applied<S> {
        self.applied.clone()
    }
}

/// Builds a snapshot of the applied state and persists it as the current one.
pub struct SmSnapshotBuilder<S: StateMachine> {
    db: Arc<DB>,
    applied: Applied<S>,
}

impl<S: StateMachine> RaftSnapshotBuilder<TypeConfig> for SmSnapshotBuilder<S> {
    type SnapshotData = Vec<u8>;

    async fn build_snapshot(&mut self) -> Result<SnapshotOf<TypeConfig, Vec<u8>>, io::Error> {
        let (db, applied) = (self.db.clone(), self.applied.clone());
        let snapshot = tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            let body = applied.snapshot_body();
            let meta = body.meta();
            let data = encode_value(&body, CF_SNAPSHOTS, KEY_SNAPSHOT, "snapshot body")?;
            persist_snapshot(&db, &applied, &meta.last_log_id, &data, true)?;
            let ms = started.elapsed().as_millis() as u64;
            tracing::info!(last_log_id = ?meta.last_log_id, bytes = data.len(), ms, "built snapshot");
            Ok::<_, StoreError>(SnapshotOf::<TypeConfig, Vec<u8>> {
                meta,
                snapshot: data,
            })
        })
        .await
        .map_err(|e| StoreError::Task {
            op: "build snapshot",
            reason: e.to_string(),
        })??;
        Ok(snapshot)
    }
}

impl<S: StateMachine> RaftStateMachine<TypeConfig> for SmStore<S> {
    type SnapshotData = Vec<u8>;
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
            db: self.db.clone(),
            applied: self.applied.clone(),
        }
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMetaOf<TypeConfig>,
        snapshot: Vec<u8>,
    ) -> Result<(), io::Error> {
        let (db, applied, meta_c) = (self.db.clone(), self.applied.clone(), meta.clone());
        let (sm, last_at_ms) = tokio::task::spawn_blocking(move || {
            let body = decode_body(&snapshot)?;
            let sm = S::restore(&body.state).map_err(|reason| StoreError::Task {
                op: "restore the state from a snapshot",
                reason,
            })?;
            persist_snapshot(&db, &applied, &meta_c.last_log_id, &snapshot, false)?;
            Ok::<_, StoreError>((sm, body.last_at_ms))
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

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<SnapshotOf<TypeConfig, Vec<u8>>>, io::Error> {
        // Off the runtime: a snapshot may be large.
        let db = self.db.clone();
        let found = tokio::task::spawn_blocking(move || read_snapshot(&db))
            .await
            .map_err(|e| StoreError::Task {
                op: "read snapshot",
                reason: e.to_string(),
            })??;
        let Some((data, body)) = found else {
            return Ok(None);
        };
        Ok(Some(SnapshotOf::<TypeConfig, Vec<u8>> {
            meta: body.meta(),
            snapshot: data,
        }))
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
