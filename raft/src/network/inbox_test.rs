//! Tests of the snapshot inbox: order, repeats, bounds, checksum, replacement and idle cleanup.

use std::io::Read;
use std::time::{Duration, Instant};

use super::*;

fn inbox(dir: &tempfile::TempDir) -> Inbox {
    Inbox::new(dir.path(), Duration::from_secs(60))
}

fn files_in(dir: &tempfile::TempDir) -> usize {
    fs::read_dir(dir.path()).unwrap().count()
}

#[test]
fn chunks_in_order_make_the_file_and_its_checksum_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let mut inbox = inbox(&dir);
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
    let now = Instant::now();
    let mut offset = 0;
    for chunk in bytes.chunks(3_000) {
        let received = inbox
            .chunk(2, 9, bytes.len() as u64, offset, chunk, now)
            .unwrap();
        offset += chunk.len() as u64;
        assert_eq!(received, offset);
    }
    assert_eq!(files_in(&dir), 1);
    let mut file = inbox
        .finish(2, 9, bytes.len() as u64, crc32fast::hash(&bytes))
        .unwrap();
    let mut back = Vec::new();
    file.read_to_end(&mut back).unwrap();
    assert_eq!(back, bytes);
    assert_eq!(files_in(&dir), 0, "the finished file has no name left");
    assert_eq!(inbox.open_transfers(), 0);
}

#[test]
fn a_repeated_chunk_is_acknowledged_and_not_written_twice() {
    let dir = tempfile::tempdir().unwrap();
    let mut inbox = inbox(&dir);
    let now = Instant::now();
    assert_eq!(inbox.chunk(2, 1, 6, 0, b"abc", now).unwrap(), 3);
    assert_eq!(inbox.chunk(2, 1, 6, 0, b"abc", now).unwrap(), 3);
    assert_eq!(inbox.chunk(2, 1, 6, 3, b"def", now).unwrap(), 6);
    let mut file = inbox.finish(2, 1, 6, crc32fast::hash(b"abcdef")).unwrap();
    let mut back = String::new();
    file.read_to_string(&mut back).unwrap();
    assert_eq!(back, "abcdef");
}

#[test]
fn a_gap_or_overrun_is_refused_and_the_transfer_removed() {
    let dir = tempfile::tempdir().unwrap();
    let mut inbox = inbox(&dir);
    let now = Instant::now();
    inbox.chunk(2, 1, 6, 0, b"ab", now).unwrap();
    let err = inbox.chunk(2, 1, 6, 3, b"d", now).unwrap_err();
    assert!(
        matches!(err, InboxError::OutOfOrder { received: 2, .. }),
        "{err}"
    );
    assert_eq!((inbox.open_transfers(), files_in(&dir)), (0, 0));

    inbox.chunk(2, 2, 4, 0, b"ab", now).unwrap();
    let err = inbox.chunk(2, 2, 4, 2, b"cde", now).unwrap_err();
    assert!(matches!(err, InboxError::OutOfOrder { .. }), "{err}");
    assert_eq!((inbox.open_transfers(), files_in(&dir)), (0, 0));

    // A chunk of a transfer that never started (or was dropped) is refused too.
    let err = inbox.chunk(2, 3, 4, 2, b"cd", now).unwrap_err();
    assert!(
        matches!(
            err,
            InboxError::Unknown {
                peer: 2,
                transfer: 3
            }
        ),
        "{err}"
    );
}

#[test]
fn a_chunk_over_the_cap_or_a_total_over_the_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut inbox = inbox(&dir);
    let now = Instant::now();
    let big = vec![0u8; MAX_SNAPSHOT_CHUNK_BYTES + 1];
    let err = inbox.chunk(2, 1, u64::MAX / 2, 0, &big, now).unwrap_err();
    assert!(
        matches!(err, InboxError::ChunkSize { len } if len == big.len()),
        "{err}"
    );
    let err = inbox.chunk(2, 1, 10, 0, b"", now).unwrap_err();
    assert!(matches!(err, InboxError::ChunkSize { len: 0 }), "{err}");
    let err = inbox
        .chunk(2, 1, MAX_SNAPSHOT_FILE_BYTES + 1, 0, b"x", now)
        .unwrap_err();
    assert!(matches!(err, InboxError::TooLarge { .. }), "{err}");
    assert_eq!(files_in(&dir), 0);
}

#[test]
fn an_incomplete_or_damaged_transfer_is_refused_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut inbox = inbox(&dir);
    let now = Instant::now();
    inbox.chunk(2, 1, 6, 0, b"abc", now).unwrap();
    let err = inbox
        .finish(2, 1, 6, crc32fast::hash(b"abcdef"))
        .unwrap_err();
    assert!(
        matches!(
            err,
            InboxError::Incomplete {
                received: 3,
                total: 6,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(files_in(&dir), 0);

    inbox.chunk(2, 2, 3, 0, b"abc", now).unwrap();
    let err = inbox.finish(2, 2, 3, crc32fast::hash(b"abd")).unwrap_err();
    assert!(matches!(err, InboxError::Checksum { .. }), "{err}");
    assert_eq!(files_in(&dir), 0);

    let err = inbox.finish(2, 2, 3, 0).unwrap_err();
    assert!(matches!(err, InboxError::Unknown { .. }), "{err}");
}

#[test]
fn a_new_transfer_from_the_same_peer_replaces_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut inbox = inbox(&dir);
    let now = Instant::now();
    inbox.chunk(2, 1, 6, 0, b"abc", now).unwrap();
    inbox.chunk(3, 1, 6, 0, b"xyz", now).unwrap();
    inbox.chunk(2, 2, 2, 0, b"hi", now).unwrap();
    assert_eq!((inbox.open_transfers(), files_in(&dir)), (2, 2));
    assert!(
        inbox.finish(2, 1, 6, 0).is_err(),
        "the old transfer is gone"
    );
    assert_eq!(files_in(&dir), 1, "only peer 3's file is left");
}

#[test]
fn an_abandoned_transfer_is_swept_after_the_idle_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut inbox = Inbox::new(dir.path(), Duration::from_secs(10));
    let start = Instant::now();
    inbox.chunk(2, 1, 6, 0, b"abc", start).unwrap();
    inbox.chunk(3, 1, 6, 0, b"abc", start).unwrap();
    inbox
        .chunk(3, 1, 6, 3, b"def", start + Duration::from_secs(8))
        .unwrap();
    assert_eq!(inbox.sweep(start + Duration::from_secs(9)), 0);
    assert_eq!(inbox.sweep(start + Duration::from_secs(10)), 1);
    assert_eq!((inbox.open_transfers(), files_in(&dir)), (1, 1));
    assert!(inbox.transfer_path(2).is_none());
    assert!(inbox.transfer_path(3).is_some());
    assert_eq!(inbox.sweep(start + Duration::from_secs(30)), 1);
    assert_eq!(files_in(&dir), 0);
}

#[test]
fn an_empty_snapshot_is_one_empty_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let mut inbox = inbox(&dir);
    assert_eq!(inbox.chunk(2, 1, 0, 0, b"", Instant::now()).unwrap(), 0);
    let mut file = inbox.finish(2, 1, 0, crc32fast::hash(b"")).unwrap();
    assert_eq!(file.read(&mut [0u8; 4]).unwrap(), 0);
}
