//! Offline replay of a stopped server's data dir: the state restored from its snapshot, then every
//! committed entry of its log re-applied through the application's [`StateMachine`] exactly as the
//! state machine store applies it (decode, clamp the leader's time to be monotonic, apply). Nothing
//! is written: the data dir is opened, read and closed.

use std::path::Path;

use openraft::storage::RaftLogStorage;
use openraft::{EntryPayload, RaftLogReader};
use sha2::{Digest, Sha256};

use crate::codec;
use crate::error::RaftError;
use crate::log_store::{open_db_tuned, wal_dir, RocksLogStore, StorageTuning};
use crate::sm_store::SmStore;
use crate::state_machine::StateMachine;

/// One committed normal entry, as replayed.
pub struct Step<'a, S: StateMachine> {
    /// Its log index.
    pub index: u64,
    /// The time it was applied at: the leader's stamp, clamped to be monotonic.
    pub at_ms: u64,
    /// The decoded command (`None`: it does not decode, and the server skipped it too).
    pub command: Option<&'a S::Command>,
    /// What applying it answered (`None` when it did not decode).
    pub response: Option<&'a S::Response>,
    /// The state after it.
    pub state: &'a S,
}

/// What a replay covered and where it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The index the snapshot covered (`None`: no snapshot, the log from its start).
    pub snapshot_index: Option<u64>,
    /// sha256 of the state restored from the snapshot, re-encoded.
    pub snapshot_digest: String,
    /// The last index applied: the committed index the log store saved.
    pub last_index: Option<u64>,
    /// Normal entries re-applied (membership changes and blanks are not commands).
    pub commands: u64,
    /// Entries whose command did not decode (skipped, as the server skips them).
    pub undecodable: u64,
    /// sha256 of the final state's snapshot bytes: what `GET /v1/cluster/digest` answers at
    /// `last_index`.
    pub digest: String,
}

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The data dir could not be opened or read (a running server holds its lock, say).
    #[error(transparent)]
    Store(#[from] RaftError),
    /// Reading the log failed.
    #[error("reading the log of {dir}: {reason}")]
    Log {
        /// The data dir.
        dir: String,
        /// What failed.
        reason: String,
    },
    /// The snapshot's state could not be copied out of the store.
    #[error("the snapshot's state does not re-encode: {0}")]
    Encode(String),
    /// The log does not continue the snapshot: entries are missing.
    #[error("the log of {dir} has no entry {index}, which the replay needs (snapshot at {snapshot:?}, committed {committed})")]
    Gap {
        /// The data dir.
        dir: String,
        /// The missing index.
        index: u64,
        /// The snapshot's index.
        snapshot: Option<u64>,
        /// The committed index.
        committed: u64,
    },
}

/// sha256 of `state`'s snapshot bytes, in hex.
pub fn digest<S: StateMachine>(state: &S) -> Result<String, ReplayError> {
    Ok(hex(&snapshot_bytes(state)?))
}

fn snapshot_bytes<S: StateMachine>(state: &S) -> Result<Vec<u8>, ReplayError> {
    let mut bytes = Vec::new();
    state
        .snapshot_to(&mut bytes)
        .map_err(|e| ReplayError::Encode(e.to_string()))?;
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Replays the stopped server's `data_dir`, calling `each` after every committed normal entry.
pub async fn replay<S: StateMachine>(
    data_dir: &Path,
    mut each: impl FnMut(Step<'_, S>),
) -> Result<Replayed, ReplayError> {
    let dir = data_dir.display().to_string();
    let log_error = |e: std::io::Error| ReplayError::Log {
        dir: dir.clone(),
        reason: e.to_string(),
    };
    // The WAL is wherever the data dir recorded it (`log_wal_dir`); replay has no config to ask.
    let tuning = StorageTuning {
        wal_dir: wal_dir::recorded(data_dir)?,
        ..StorageTuning::default()
    };
    let db = open_db_tuned(data_dir, &tuning)?;
    let sm_store = SmStore::<S>::open(db.clone())?;
    let applied = sm_store.applied();
    let snapshot_index = applied.last_applied_log_id().map(|id| id.index);
    let mut at_ms = applied.last_at_ms();
    // A copy of the snapshot's state, through its own encoding (the store keeps its copy).
    let bytes = applied.read(|s| snapshot_bytes(s))?;
    let snapshot_digest = hex(&bytes);
    let mut state = S::restore_from(&mut bytes.as_slice()).map_err(ReplayError::Encode)?;
    drop(bytes);

    let mut log = RocksLogStore::new(db);
    let committed = log
        .read_committed()
        .await
        .map_err(log_error)?
        .map(|id| id.index);
    let mut replayed = Replayed {
        snapshot_index,
        snapshot_digest,
        last_index: snapshot_index,
        commands: 0,
        undecodable: 0,
        digest: String::new(),
    };
    let first = snapshot_index.map_or(0, |i| i + 1);
    if let Some(committed) = committed.filter(|c| *c >= first) {
        const PAGE: u64 = 4_096;
        let mut next = first;
        while next <= committed {
            let end = committed.min(next + PAGE - 1);
            let entries = log
                .try_get_log_entries(next..=end)
                .await
                .map_err(log_error)?;
            for entry in entries {
                let index = entry.log_id.index;
                if index != next {
                    return Err(ReplayError::Gap {
                        dir: dir.clone(),
                        index: next,
                        snapshot: snapshot_index,
                        committed,
                    });
                }
                next += 1;
                replayed.last_index = Some(index);
                let EntryPayload::Normal(proposal) = entry.payload else {
                    continue;
                };
                at_ms = proposal.at_ms.max(at_ms);
                replayed.commands += 1;
                // Decoded twice: one copy is consumed by apply, the other shown to `each`.
                let decoded = codec::decode::<S::Command>(&proposal.command)
                    .and_then(|c| Ok((c, codec::decode::<S::Command>(&proposal.command)?)));
                match decoded {
                    Ok((command, applied)) => {
                        let response = state.apply(applied, at_ms);
                        each(Step {
                            index,
                            at_ms,
                            command: Some(&command),
                            response: Some(&response),
                            state: &state,
                        });
                    }
                    Err(_) => {
                        replayed.undecodable += 1;
                        each(Step {
                            index,
                            at_ms,
                            command: None,
                            response: None,
                            state: &state,
                        });
                    }
                }
            }
            if next <= end {
                return Err(ReplayError::Gap {
                    dir: dir.clone(),
                    index: next,
                    snapshot: snapshot_index,
                    committed,
                });
            }
        }
    }
    replayed.digest = digest(&state)?;
    Ok(replayed)
}
