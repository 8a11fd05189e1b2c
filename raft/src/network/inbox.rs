//! The receiving end of a snapshot streamed by the leader: bounded chunks appended in order to a
//! file in the data dir, one transfer per sending peer, handed over only when complete and its
//! checksum verifies.
//!
//! Limits: a chunk is 1..=[`MAX_SNAPSHOT_CHUNK_BYTES`] bytes; a transfer announces its total
//! length up front and it may not exceed [`MAX_SNAPSHOT_FILE_BYTES`]; each peer has at most one
//! transfer open (a new one from the same peer replaces it), and a transfer silent for longer
//! than the inbox's idle limit is dropped by [`Inbox::sweep`]. A dropped, replaced or refused
//! transfer's file is removed at once. Files are named `tmp-recv-…` so that a crash's leftovers in
//! the snapshot directory are removed when the data dir is next opened.
//!
//! Chunks are acknowledged with the count of bytes received so far; a chunk that was already
//! received (the network repeated it) is acknowledged again without being written twice.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::codec::MAX_SNAPSHOT_BYTES;
use crate::types::NodeId;

/// The chunk size a leader sends snapshots in unless configured otherwise: 4 MiB.
pub const DEFAULT_SNAPSHOT_CHUNK_BYTES: usize = 4 * 1024 * 1024;

/// The largest chunk a receiver accepts (and a sender sends): 16 MiB, well under the frame cap.
pub const MAX_SNAPSHOT_CHUNK_BYTES: usize = 16 * 1024 * 1024;

/// The largest snapshot file a receiver accepts: a state of [`MAX_SNAPSHOT_BYTES`] plus 64 MiB
/// for the file's header, chunk framing and end marker.
pub const MAX_SNAPSHOT_FILE_BYTES: u64 = MAX_SNAPSHOT_BYTES as u64 + 64 * 1024 * 1024;

/// How long a transfer may go without a chunk before [`Inbox::sweep`] drops it, by default.
pub const DEFAULT_TRANSFER_IDLE: Duration = Duration::from_secs(60);

/// The prefix of received files; `tmp-` files are removed when the snapshot directory is opened.
const FILE_PREFIX: &str = "tmp-recv-";

/// Why a chunk or the end of a transfer was refused. The sender gives up that transfer (openraft
/// sends the snapshot again later).
#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    /// A chunk longer than [`MAX_SNAPSHOT_CHUNK_BYTES`], or empty.
    #[error(
        "snapshot chunk of {len} bytes refused: chunks are 1..={MAX_SNAPSHOT_CHUNK_BYTES} bytes"
    )]
    ChunkSize {
        /// The chunk's length.
        len: usize,
    },
    /// The announced total is over [`MAX_SNAPSHOT_FILE_BYTES`].
    #[error("snapshot of {total} bytes refused: the limit is {MAX_SNAPSHOT_FILE_BYTES} bytes")]
    TooLarge {
        /// The announced total.
        total: u64,
    },
    /// A chunk that does not continue the transfer (a gap, beyond the total, another total).
    #[error("snapshot transfer {transfer:#x} from node {peer}: chunk at {offset}+{len} of {total} does not follow the {received} bytes received")]
    OutOfOrder {
        /// The sending peer.
        peer: NodeId,
        /// The sender's transfer id.
        transfer: u64,
        /// The chunk's offset.
        offset: u64,
        /// Its length.
        len: usize,
        /// The total announced with it.
        total: u64,
        /// Bytes received so far.
        received: u64,
    },
    /// No such transfer is open (never started, replaced, dropped as idle, or already finished).
    #[error("no snapshot transfer {transfer:#x} from node {peer} is open")]
    Unknown {
        /// The sending peer.
        peer: NodeId,
        /// The sender's transfer id.
        transfer: u64,
    },
    /// The transfer ended before its announced total.
    #[error("snapshot transfer {transfer:#x} ended after {received} of {total} bytes")]
    Incomplete {
        /// The sender's transfer id.
        transfer: u64,
        /// Bytes received.
        received: u64,
        /// Bytes announced.
        total: u64,
    },
    /// The bytes received do not have the checksum the sender computed.
    #[error("snapshot transfer {transfer:#x}: checksum mismatch (sent {sent:#010x}, received {received:#010x})")]
    Checksum {
        /// The sender's transfer id.
        transfer: u64,
        /// The sender's CRC32 of the whole file.
        sent: u32,
        /// The CRC32 of the bytes received.
        received: u32,
    },
    /// Writing the file failed.
    #[error("cannot {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file.
        path: String,
        /// The system's reason.
        source: io::Error,
    },
}

/// One open transfer: its file and how far it got.
struct Transfer {
    id: u64,
    total: u64,
    received: u64,
    crc: crc32fast::Hasher,
    file: File,
    path: PathBuf,
    last_chunk: Instant,
}

impl Drop for Transfer {
    fn drop(&mut self) {
        // Finished transfers were unlinked already; this cleans up the others.
        let _ = fs::remove_file(&self.path);
    }
}

/// The snapshot transfers a server is receiving, by sending peer.
pub struct Inbox {
    dir: PathBuf,
    idle: Duration,
    transfers: HashMap<NodeId, Transfer>,
    next_file: u64,
}

impl Inbox {
    /// An inbox writing into `dir` (created if missing), dropping transfers idle for `idle`.
    pub fn new(dir: impl Into<PathBuf>, idle: Duration) -> Self {
        Self {
            dir: dir.into(),
            idle,
            transfers: HashMap::new(),
            next_file: 0,
        }
    }

    /// The directory received files are written in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many transfers are open.
    pub fn open_transfers(&self) -> usize {
        self.transfers.len()
    }

    /// The path of `peer`'s open transfer file, if any (for tests).
    pub fn transfer_path(&self, peer: NodeId) -> Option<&Path> {
        self.transfers.get(&peer).map(|t| t.path.as_path())
    }

    /// Takes the chunk `data` at `offset` of `peer`'s transfer `transfer` of `total` bytes;
    /// returns the bytes received so far. A chunk at offset 0 with a new transfer id starts a
    /// transfer (replacing the peer's previous one). Any refusal drops the peer's transfer.
    pub fn chunk(
        &mut self,
        peer: NodeId,
        transfer: u64,
        total: u64,
        offset: u64,
        data: &[u8],
        now: Instant,
    ) -> Result<u64, InboxError> {
        let result = self.take_chunk(peer, transfer, total, offset, data, now);
        if result.is_err() {
            self.transfers.remove(&peer);
        }
        result
    }

    fn take_chunk(
        &mut self,
        peer: NodeId,
        transfer: u64,
        total: u64,
        offset: u64,
        data: &[u8],
        now: Instant,
    ) -> Result<u64, InboxError> {
        // An empty chunk is only the whole of an empty snapshot.
        let empty_whole = data.is_empty() && total == 0 && offset == 0;
        if data.len() > MAX_SNAPSHOT_CHUNK_BYTES || (data.is_empty() && !empty_whole) {
            return Err(InboxError::ChunkSize { len: data.len() });
        }
        if total > MAX_SNAPSHOT_FILE_BYTES {
            return Err(InboxError::TooLarge { total });
        }
        let current = self.transfers.get(&peer).map(|t| t.id);
        if current != Some(transfer) {
            if offset != 0 {
                return Err(InboxError::Unknown { peer, transfer });
            }
            let opened = self.open(peer, transfer, total, now)?;
            self.transfers.insert(peer, opened);
        }
        let t = self.transfers.get_mut(&peer).expect("opened above");
        let end = offset.checked_add(data.len() as u64);
        let out_of_order = InboxError::OutOfOrder {
            peer,
            transfer,
            offset,
            len: data.len(),
            total,
            received: t.received,
        };
        let end = match end {
            Some(end) if end <= total && total == t.total && offset <= t.received => end,
            _ => return Err(out_of_order),
        };
        t.last_chunk = now;
        if end <= t.received {
            // A repeat of a chunk already written.
            return Ok(t.received);
        }
        if offset != t.received {
            return Err(out_of_order);
        }
        let io = |op| {
            let path = t.path.display().to_string();
            move |source| InboxError::Io { op, path, source }
        };
        t.file
            .write_all(data)
            .map_err(io("write a snapshot chunk to"))?;
        t.crc.update(data);
        t.received = end;
        Ok(t.received)
    }

    fn open(
        &mut self,
        peer: NodeId,
        transfer: u64,
        total: u64,
        now: Instant,
    ) -> Result<Transfer, InboxError> {
        // Replace the peer's previous transfer first, so at most one file per peer exists.
        self.transfers.remove(&peer);
        let n = self.next_file;
        self.next_file += 1;
        let path = self.dir.join(format!(
            "{FILE_PREFIX}{}-{peer}-{n}.snap",
            std::process::id()
        ));
        let io = |op| {
            let path = path.display().to_string();
            move |source| InboxError::Io { op, path, source }
        };
        fs::create_dir_all(&self.dir).map_err(io("create the directory of"))?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(io("create"))?;
        Ok(Transfer {
            id: transfer,
            total,
            received: 0,
            crc: crc32fast::Hasher::new(),
            file,
            path,
            last_chunk: now,
        })
    }

    /// Ends `peer`'s transfer `transfer`: when all `total` bytes arrived and their CRC32 is
    /// `crc32`, returns the file (rewound, its name already removed: it lives while open);
    /// otherwise refuses and removes it. Either way the transfer is closed.
    pub fn finish(
        &mut self,
        peer: NodeId,
        transfer: u64,
        total: u64,
        crc32: u32,
    ) -> Result<File, InboxError> {
        let Some(t) = self
            .transfers
            .remove_entry(&peer)
            .filter(|(_, t)| t.id == transfer)
            .map(|(_, t)| t)
        else {
            return Err(InboxError::Unknown { peer, transfer });
        };
        if t.received != total || t.total != total {
            return Err(InboxError::Incomplete {
                transfer,
                received: t.received,
                total: t.total.max(total),
            });
        }
        let received = t.crc.clone().finalize();
        if received != crc32 {
            return Err(InboxError::Checksum {
                transfer,
                sent: crc32,
                received,
            });
        }
        let path = t.path.display().to_string();
        let mut file = t.file.try_clone().map_err(|source| InboxError::Io {
            op: "reopen",
            path: path.clone(),
            source,
        })?;
        file.seek(SeekFrom::Start(0))
            .map_err(|source| InboxError::Io {
                op: "rewind",
                path,
                source,
            })?;
        drop(t); // removes the name
        Ok(file)
    }

    /// Drops every transfer that received no chunk for the idle limit before `now`; returns how
    /// many were dropped.
    pub fn sweep(&mut self, now: Instant) -> usize {
        let before = self.transfers.len();
        let idle = self.idle;
        self.transfers
            .retain(|_, t| now.saturating_duration_since(t.last_chunk) < idle);
        before - self.transfers.len()
    }
}

#[cfg(test)]
#[path = "inbox_test.rs"]
mod tests;
