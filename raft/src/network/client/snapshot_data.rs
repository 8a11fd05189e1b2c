//! [`SnapshotBytes`]: the snapshot data the transport can ship, for any state machine's type.

use std::fs::File;
use std::io::{self, Cursor, Read};

/// Snapshot data the transport can ship: read as a stream to send in chunks, rebuilt from the
/// complete file received (or, from older senders, from one frame's bytes).
///
/// The network's `SnapshotData` must equal the state machine's, so the transport is generic over
/// it; implemented for `Vec<u8>` and `Cursor<Vec<u8>>`.
pub trait SnapshotBytes: Send + Sync + 'static {
    /// Its length in bytes and a reader from its first byte, to send it chunk by chunk.
    fn into_snapshot_reader(self) -> (u64, Box<dyn Read + Send>);
    /// Rebuilds the snapshot data from bytes received in one frame.
    fn from_snapshot_bytes(bytes: Vec<u8>) -> Self;
    /// Rebuilds the snapshot data from a complete received file (positioned at its start).
    fn from_snapshot_file(file: File) -> io::Result<Self>
    where
        Self: Sized;
}

fn read_whole(mut file: File) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

impl SnapshotBytes for Vec<u8> {
    fn into_snapshot_reader(self) -> (u64, Box<dyn Read + Send>) {
        (self.len() as u64, Box::new(Cursor::new(self)))
    }
    fn from_snapshot_bytes(bytes: Vec<u8>) -> Self {
        bytes
    }
    fn from_snapshot_file(file: File) -> io::Result<Self> {
        read_whole(file)
    }
}

impl SnapshotBytes for Cursor<Vec<u8>> {
    fn into_snapshot_reader(self) -> (u64, Box<dyn Read + Send>) {
        self.into_inner().into_snapshot_reader()
    }
    fn from_snapshot_bytes(bytes: Vec<u8>) -> Self {
        Cursor::new(bytes)
    }
    fn from_snapshot_file(file: File) -> io::Result<Self> {
        read_whole(file).map(Cursor::new)
    }
}
