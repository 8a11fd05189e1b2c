//! The snapshot file format: a checksummed header naming the data dir that wrote it and what the
//! snapshot covers, then the state as a stream of bounded, length-prefixed chunks under a
//! running CRC32, then an end marker. Nothing is read or written whole.
//!
//! ```text
//! header  magic "CONVOYSS" | version u32 | store id [16] | info length u32 | info | crc32 u32
//! chunk   length u32 (1..=MAX_CHUNK_BYTES) | bytes | running crc32 u32 of every state byte so far
//! ...
//! end     0u32 | state length u64 | crc32 u32 of the whole state
//! ```
//!
//! Integers are little-endian; `info` is the [`crate::codec`] encoding of [`SnapshotInfo`] and the
//! header's crc32 covers every header byte before it. A file cut short anywhere, a flipped bit,
//! a chunk out of place or a file from another data dir is refused with a [`FormatError`].

use std::io::{self, Read, Write};

use openraft::type_config::alias::{LogIdOf, SnapshotMetaOf, StoredMembershipOf};
use serde::{Deserialize, Serialize};

use crate::codec::{self, CodecError, MAX_SNAPSHOT_BYTES};
use crate::types::TypeConfig;

/// The first bytes of every snapshot file.
pub const MAGIC: [u8; 8] = *b"CONVOYSS";
/// The format version written, and the only one read.
pub const FORMAT_VERSION: u32 = 1;
/// The size of the chunks written (the last one may be shorter).
pub const CHUNK_BYTES: usize = 1024 * 1024;
/// The largest chunk read: a length beyond it is corruption, not a reason to allocate.
pub const MAX_CHUNK_BYTES: usize = 4 * 1024 * 1024;
/// The largest encoded [`SnapshotInfo`] read (a membership of a few servers is a few hundred bytes).
pub const MAX_INFO_BYTES: usize = 1024 * 1024;

/// The random identity of a data dir, stamped on every snapshot file it writes.
pub type StoreId = [u8; 16];

/// What a snapshot covers: the header's payload, and openraft's snapshot meta.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotInfo {
    /// The last log id the state includes.
    pub last_applied: Option<LogIdOf<TypeConfig>>,
    /// The last membership applied.
    pub last_membership: StoredMembershipOf<TypeConfig>,
    /// The clamped time of the last applied command, in ms since the Unix epoch.
    pub last_at_ms: u64,
}

impl SnapshotInfo {
    /// openraft's meta of the snapshot.
    pub fn meta(&self) -> SnapshotMetaOf<TypeConfig> {
        SnapshotMetaOf::<TypeConfig> {
            last_log_id: self.last_applied,
            last_membership: self.last_membership.clone(),
        }
    }
}

/// Why a snapshot file cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Reading or writing the file failed.
    #[error("cannot {op}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The system's reason.
        source: io::Error,
    },
    /// The file does not start with [`MAGIC`].
    #[error("not a convoy snapshot (it starts with {found:?}, not \"CONVOYSS\")")]
    Magic {
        /// The first bytes found, escaped.
        found: String,
    },
    /// Another format version.
    #[error("snapshot format version {found}; this server reads version {FORMAT_VERSION}")]
    Version {
        /// The version in the file.
        found: u32,
    },
    /// The header's info length is implausible.
    #[error("snapshot header claims {len} bytes of info, more than {MAX_INFO_BYTES}")]
    InfoTooLarge {
        /// The claimed length.
        len: u32,
    },
    /// The header's checksum does not match its bytes.
    #[error(
        "snapshot header checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
    )]
    HeaderChecksum {
        /// The checksum in the file.
        stored: u32,
        /// The checksum of the bytes read.
        computed: u32,
    },
    /// The header's info does not decode.
    #[error("snapshot header info: {0}")]
    Info(CodecError),
    /// The file was written by another data dir: copied from another cluster or server.
    #[error("snapshot was written by data dir {found}, not by this one ({expected}): it comes from another cluster or server")]
    ForeignStore {
        /// The store id in the file, hex.
        found: String,
        /// This data dir's store id, hex.
        expected: String,
    },
    /// The file ends before the end marker.
    #[error(
        "snapshot is truncated: it ends after {state_bytes} bytes of state, before its end marker"
    )]
    Truncated {
        /// How many state bytes were read before the end.
        state_bytes: u64,
    },
    /// A chunk's length is beyond [`MAX_CHUNK_BYTES`].
    #[error("snapshot chunk {chunk} claims {len} bytes, more than {MAX_CHUNK_BYTES}")]
    ChunkTooLarge {
        /// The chunk's position, from 0.
        chunk: u64,
        /// The claimed length.
        len: u32,
    },
    /// A chunk's bytes do not match the running checksum.
    #[error("snapshot checksum mismatch in chunk {chunk} (state bytes {start}..{end})")]
    ChunkChecksum {
        /// The chunk's position, from 0.
        chunk: u64,
        /// Its first state byte.
        start: u64,
        /// One past its last state byte.
        end: u64,
    },
    /// The end marker disagrees with the chunks read.
    #[error("snapshot end marker claims {claimed} bytes of state, {read} were read (or its checksum differs)")]
    EndMismatch {
        /// The length in the end marker.
        claimed: u64,
        /// The length of the chunks read.
        read: u64,
    },
    /// The state is larger than [`MAX_SNAPSHOT_BYTES`].
    #[error("snapshot state exceeds the limit of {MAX_SNAPSHOT_BYTES} bytes")]
    TooLarge,
    /// The state machine did not read the whole state.
    #[error("the state machine left {0} bytes of the snapshot's state unread")]
    Unread(u64),
    /// The state machine refused the state.
    #[error("the state machine cannot restore the snapshot's state: {0}")]
    Restore(String),
    /// The header disagrees with openraft's meta of the same snapshot.
    #[error("snapshot header covers {header:?}, but it was sent as covering {meta:?}")]
    MetaMismatch {
        /// The last log id in the header.
        header: Option<LogIdOf<TypeConfig>>,
        /// The last log id in the meta.
        meta: Option<LogIdOf<TypeConfig>>,
    },
}

impl FormatError {
    fn io(op: &'static str) -> impl FnOnce(io::Error) -> FormatError {
        move |source| FormatError::Io { op, source }
    }
}

/// Hex of a store id, for messages.
pub fn hex(id: &StoreId) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes the header of a snapshot written by `store` covering `info`.
pub fn write_header(out: &mut dyn Write, store: &StoreId, info: &SnapshotInfo) -> io::Result<()> {
    let info = codec::encode(info).map_err(io::Error::other)?;
    let len = u32::try_from(info.len())
        .ok()
        .filter(|len| *len as usize <= MAX_INFO_BYTES)
        .ok_or_else(|| io::Error::other(format!("snapshot info of {} bytes", info.len())))?;
    let mut header = Vec::with_capacity(36 + info.len());
    header.extend_from_slice(&MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(store);
    header.extend_from_slice(&len.to_le_bytes());
    header.extend_from_slice(&info);
    let crc = crc32fast::hash(&header);
    header.extend_from_slice(&crc.to_le_bytes());
    out.write_all(&header)
}

/// Reads and checks a header; returns the store id that wrote it and the info.
pub fn read_header(input: &mut dyn Read) -> Result<(StoreId, SnapshotInfo), FormatError> {
    let truncated = |e: io::Error| match e.kind() {
        io::ErrorKind::UnexpectedEof => FormatError::Truncated { state_bytes: 0 },
        _ => FormatError::Io {
            op: "read the snapshot header",
            source: e,
        },
    };
    let mut fixed = [0u8; 32];
    input.read_exact(&mut fixed).map_err(truncated)?;
    if fixed[..8] != MAGIC {
        return Err(FormatError::Magic {
            found: fixed[..8].escape_ascii().to_string(),
        });
    }
    let version = u32::from_le_bytes(fixed[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(FormatError::Version { found: version });
    }
    let store: StoreId = fixed[12..28].try_into().expect("16 bytes");
    let len = u32::from_le_bytes(fixed[28..32].try_into().expect("4 bytes"));
    if len as usize > MAX_INFO_BYTES {
        return Err(FormatError::InfoTooLarge { len });
    }
    let mut info = vec![0u8; len as usize + 4];
    input.read_exact(&mut info).map_err(truncated)?;
    let stored = u32::from_le_bytes(info[len as usize..].try_into().expect("4 bytes"));
    info.truncate(len as usize);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&fixed);
    hasher.update(&info);
    let computed = hasher.finalize();
    if stored != computed {
        return Err(FormatError::HeaderChecksum { stored, computed });
    }
    let info = codec::decode(&info).map_err(FormatError::Info)?;
    Ok((store, info))
}

/// Cuts what is written into chunks of [`CHUNK_BYTES`] under a running CRC32; [`finish`] writes
/// the end marker. Refuses to grow past [`MAX_SNAPSHOT_BYTES`].
///
/// [`finish`]: ChunkWriter::finish
pub struct ChunkWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    crc: crc32fast::Hasher,
    written: u64,
}

impl<W: Write> ChunkWriter<W> {
    /// A writer of chunks into `out` (positioned after the header).
    pub fn new(out: W) -> Self {
        Self {
            out,
            buf: Vec::with_capacity(CHUNK_BYTES),
            crc: crc32fast::Hasher::new(),
            written: 0,
        }
    }

    fn emit(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.crc.update(&self.buf);
        let len = self.buf.len() as u32;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&self.buf)?;
        self.out
            .write_all(&self.crc.clone().finalize().to_le_bytes())?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Writes the last chunk and the end marker; returns the output and the state's length.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.emit()?;
        self.out.write_all(&0u32.to_le_bytes())?;
        self.out.write_all(&self.written.to_le_bytes())?;
        self.out
            .write_all(&self.crc.clone().finalize().to_le_bytes())?;
        self.out.flush()?;
        Ok((self.out, self.written))
    }
}

impl<W: Write> Write for ChunkWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.written + (self.buf.len() + bytes.len()) as u64 > MAX_SNAPSHOT_BYTES as u64 {
            return Err(io::Error::other(FormatError::TooLarge));
        }
        let n = bytes.len().min(CHUNK_BYTES - self.buf.len());
        self.buf.extend_from_slice(&bytes[..n]);
        if self.buf.len() == CHUNK_BYTES {
            self.emit()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        // Chunks are cut by size only, so that equal states give equal files.
        Ok(())
    }
}

/// Reads the state back from the chunks, verifying each one before handing out its bytes, and
/// optionally copying the verified state into a [`ChunkWriter`]. The first error is kept: when
/// the state machine's reader fails, [`ChunkReader::take_error`] says why.
pub struct ChunkReader<'a, R: Read> {
    input: R,
    buf: Vec<u8>,
    pos: usize,
    chunk: u64,
    read: u64,
    crc: crc32fast::Hasher,
    done: bool,
    failed: Option<FormatError>,
    copy: Option<&'a mut dyn Write>,
}

impl<'a, R: Read> ChunkReader<'a, R> {
    /// A reader of the chunks of `input` (positioned after the header).
    pub fn new(input: R) -> Self {
        Self {
            input,
            buf: Vec::new(),
            pos: 0,
            chunk: 0,
            read: 0,
            crc: crc32fast::Hasher::new(),
            done: false,
            failed: None,
            copy: None,
        }
    }

    /// Also writes every verified state byte into `copy`.
    pub fn copying_into(mut self, copy: &'a mut dyn Write) -> Self {
        self.copy = Some(copy);
        self
    }

    /// The error that stopped reading, if any.
    pub fn take_error(&mut self) -> Option<FormatError> {
        self.failed.take()
    }

    /// Reads the rest up to the end marker and checks it; the state machine must have read all
    /// the state.
    pub fn finish(mut self) -> Result<(), FormatError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut unread = (self.buf.len() - self.pos) as u64;
        while !self.done {
            self.next_chunk()?;
            unread += self.buf.len() as u64;
        }
        match unread {
            0 => Ok(()),
            n => Err(FormatError::Unread(n)),
        }
    }

    fn exact(&mut self, bytes: &mut [u8]) -> Result<(), FormatError> {
        self.input.read_exact(bytes).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => FormatError::Truncated {
                state_bytes: self.read,
            },
            _ => FormatError::Io {
                op: "read a snapshot chunk",
                source: e,
            },
        })
    }

    /// Reads the next chunk into `buf` (or the end marker, leaving `buf` empty).
    fn next_chunk(&mut self) -> Result<(), FormatError> {
        let mut word = [0u8; 4];
        self.exact(&mut word)?;
        let len = u32::from_le_bytes(word);
        self.buf.clear();
        self.pos = 0;
        if len == 0 {
            let mut end = [0u8; 12];
            self.exact(&mut end)?;
            let claimed = u64::from_le_bytes(end[..8].try_into().expect("8 bytes"));
            let crc = u32::from_le_bytes(end[8..].try_into().expect("4 bytes"));
            if claimed != self.read || crc != self.crc.clone().finalize() {
                return Err(FormatError::EndMismatch {
                    claimed,
                    read: self.read,
                });
            }
            self.done = true;
            return Ok(());
        }
        if len as usize > MAX_CHUNK_BYTES {
            return Err(FormatError::ChunkTooLarge {
                chunk: self.chunk,
                len,
            });
        }
        if self.read + u64::from(len) > MAX_SNAPSHOT_BYTES as u64 {
            return Err(FormatError::TooLarge);
        }
        self.buf.resize(len as usize, 0);
        let mut buf = std::mem::take(&mut self.buf);
        let read = self.exact(&mut buf);
        self.buf = buf;
        read?;
        self.exact(&mut word)?;
        self.crc.update(&self.buf);
        let start = self.read;
        self.read += u64::from(len);
        if u32::from_le_bytes(word) != self.crc.clone().finalize() {
            return Err(FormatError::ChunkChecksum {
                chunk: self.chunk,
                start,
                end: self.read,
            });
        }
        self.chunk += 1;
        if let Some(copy) = self.copy.as_mut() {
            copy.write_all(&self.buf)
                .map_err(FormatError::io("copy the snapshot"))?;
        }
        Ok(())
    }
}

impl<R: Read> Read for ChunkReader<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.buf.len() {
            if self.done {
                return Ok(0);
            }
            if let Some(e) = &self.failed {
                return Err(io::Error::other(e.to_string()));
            }
            if let Err(e) = self.next_chunk() {
                let message = e.to_string();
                self.failed = Some(e);
                return Err(io::Error::other(message));
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
#[path = "format_test.rs"]
mod tests;
