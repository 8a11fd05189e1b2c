//! [`SnapshotData`]: a snapshot as openraft hands it around — an open snapshot file (built or
//! persisted here, or received from the leader chunk by chunk) or bytes received in one frame
//! from an older leader — read as a stream, never copied whole.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use crate::network::client::SnapshotBytes;

/// A whole snapshot file's bytes (header, chunks, end marker; see [`super::format`]).
///
/// Cheap to clone. A file source is read with positional reads, so clones and readers do not
/// disturb each other, and an open file stays readable after a newer snapshot replaces it.
#[derive(Clone)]
pub struct SnapshotData {
    source: Source,
}

#[derive(Clone)]
enum Source {
    File { file: Arc<File>, len: u64 },
    Bytes(Arc<Vec<u8>>),
}

impl SnapshotData {
    /// The snapshot in `file` (from its start to its current end).
    pub fn from_file(file: File) -> io::Result<Self> {
        let len = file.metadata()?.len();
        Ok(Self {
            source: Source::File {
                file: Arc::new(file),
                len,
            },
        })
    }

    /// The snapshot in `bytes`.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self {
            source: Source::Bytes(Arc::new(bytes)),
        }
    }

    /// Its length in bytes.
    pub fn len(&self) -> u64 {
        match &self.source {
            Source::File { len, .. } => *len,
            Source::Bytes(bytes) => bytes.len() as u64,
        }
    }

    /// Whether it holds no byte (never a valid snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A reader from its first byte; readers are independent.
    pub fn reader(&self) -> SnapshotReader {
        SnapshotReader {
            data: self.clone(),
            pos: 0,
        }
    }

    /// All its bytes in one buffer (for tests and tools; the transport streams it).
    pub fn to_bytes(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(usize::try_from(self.len()).unwrap_or(0));
        self.reader().read_to_end(&mut out)?;
        Ok(out)
    }
}

impl fmt::Debug for SnapshotData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.source {
            Source::File { .. } => "file",
            Source::Bytes(_) => "bytes",
        };
        f.debug_struct("SnapshotData")
            .field("source", &kind)
            .field("len", &self.len())
            .finish()
    }
}

/// A reader of a [`SnapshotData`] from its first byte.
pub struct SnapshotReader {
    data: SnapshotData,
    pos: u64,
}

impl Read for SnapshotReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let left = self.data.len().saturating_sub(self.pos);
        let want = out.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        let n = match &self.data.source {
            Source::File { file, .. } => file.read_at(&mut out[..want], self.pos)?,
            Source::Bytes(bytes) => {
                let start = self.pos as usize;
                out[..want].copy_from_slice(&bytes[start..start + want]);
                want
            }
        };
        self.pos += n as u64;
        Ok(n)
    }
}

/// The transport streams a snapshot from its reader in chunks and installs a received one from
/// the file its chunks were written to.
impl SnapshotBytes for SnapshotData {
    fn into_snapshot_reader(self) -> (u64, Box<dyn Read + Send>) {
        (self.len(), Box::new(self.reader()))
    }

    fn from_snapshot_bytes(bytes: Vec<u8>) -> Self {
        Self::from_bytes(bytes)
    }

    fn from_snapshot_file(file: File) -> io::Result<Self> {
        Self::from_file(file)
    }
}
