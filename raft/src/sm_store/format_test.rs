//! The snapshot file format: round trips across chunk boundaries, and every truncation, flipped
//! byte, foreign header or oversized claim refused with an error, never a panic.

use std::io::{Read, Write};

use openraft::StoredMembership;
use proptest::prelude::*;

use super::*;

const STORE: StoreId = [7; 16];

fn info() -> SnapshotInfo {
    SnapshotInfo {
        last_applied: None,
        last_membership: StoredMembership::default(),
        last_at_ms: 42,
    }
}

/// A whole file holding `state`.
fn file(state: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_header(&mut out, &STORE, &info()).unwrap();
    let mut chunks = ChunkWriter::new(&mut out);
    chunks.write_all(state).unwrap();
    let (_, len) = chunks.finish().unwrap();
    assert_eq!(len, state.len() as u64);
    out
}

/// Reads a whole file back: the header and the state.
fn read(bytes: &[u8]) -> Result<(StoreId, SnapshotInfo, Vec<u8>), FormatError> {
    let mut input = bytes;
    let (store, info) = read_header(&mut input)?;
    let mut reader = ChunkReader::new(input);
    let mut state = Vec::new();
    if reader.read_to_end(&mut state).is_err() {
        return Err(reader.take_error().expect("the reader keeps its error"));
    }
    reader.finish()?;
    Ok((store, info, state))
}

fn state(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

#[test]
fn round_trips_across_chunk_boundaries() {
    for len in [
        0,
        1,
        CHUNK_BYTES - 1,
        CHUNK_BYTES,
        CHUNK_BYTES + 1,
        3 * CHUNK_BYTES + 5,
    ] {
        let state = state(len);
        let (store, back_info, back) = read(&file(&state)).unwrap();
        assert_eq!((store, back_info), (STORE, info()));
        assert_eq!(back.len(), len);
        assert!(
            back == state,
            "state of {len} bytes differs after a round trip"
        );
    }
}

#[test]
fn every_truncation_is_refused() {
    let bytes = file(&state(3000));
    for cut in 0..bytes.len() {
        let err = read(&bytes[..cut]).expect_err("a truncated file must be refused");
        assert!(
            matches!(err, FormatError::Truncated { .. }),
            "cut at {cut}: {err}"
        );
    }
}

#[test]
fn every_flipped_byte_is_refused() {
    let bytes = file(&state(300));
    for at in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 0x5a;
        assert!(read(&bad).is_err(), "flipped byte {at} was accepted");
    }
}

#[test]
fn a_chunk_claiming_too_much_is_refused_before_allocating() {
    let mut bytes = Vec::new();
    write_header(&mut bytes, &STORE, &info()).unwrap();
    bytes.extend_from_slice(&u32::MAX.to_le_bytes());
    let err = read(&bytes).unwrap_err();
    assert!(
        matches!(err, FormatError::ChunkTooLarge { len: u32::MAX, .. }),
        "{err}"
    );
}

#[test]
fn state_left_unread_is_refused() {
    let bytes = file(&state(10));
    let mut input = &bytes[..];
    read_header(&mut input).unwrap();
    let mut reader = ChunkReader::new(input);
    let mut first = [0u8; 4];
    reader.read_exact(&mut first).unwrap();
    assert!(matches!(reader.finish(), Err(FormatError::Unread(6))));
}

#[test]
fn another_file_or_version_is_refused() {
    let mut bytes = file(b"state");
    bytes[..8].copy_from_slice(b"SQLite f");
    assert!(matches!(read(&bytes), Err(FormatError::Magic { .. })));
    let mut bytes = file(b"state");
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    assert!(matches!(
        read(&bytes),
        Err(FormatError::Version { found: 2 })
    ));
}

#[test]
fn the_copy_holds_the_verified_state() {
    let state = state(2 * CHUNK_BYTES + 17);
    let bytes = file(&state);
    let mut input = &bytes[..];
    read_header(&mut input).unwrap();
    let mut copy = Vec::new();
    let mut reader = ChunkReader::new(input).copying_into(&mut copy);
    let mut sink = Vec::new();
    reader.read_to_end(&mut sink).unwrap();
    reader.finish().unwrap();
    assert!(copy == state);
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = read(&bytes);
        let mut with_header = file(b"");
        with_header.truncate(with_header.len() - 16);
        with_header.extend_from_slice(&bytes);
        let _ = read(&with_header);
    }
}
