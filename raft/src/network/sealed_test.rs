//! Tests of sealed frames: round trips across record boundaries, caps, and every way of
//! tampering with the stream (flip, replay, reorder, drop, splice from another session).

use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::network::noise::{client_handshake, server_handshake};

/// A client and a server session that completed a handshake.
fn pair() -> (Session, Session) {
    block_on(async {
        let (mut a, mut b) = tokio::io::duplex(4096);
        let t = Duration::from_secs(2);
        let (s, c) = tokio::join!(
            server_handshake(&mut a, b"k", 2, t),
            client_handshake(&mut b, b"k", 1, 2, t)
        );
        (c.unwrap(), s.unwrap())
    })
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// The wire bytes of `body` sealed as one frame by `session`.
fn sealed(session: &mut Session, body: &[u8]) -> Vec<u8> {
    let mut wire = Vec::new();
    block_on(session.write_body(&mut wire, body)).unwrap();
    wire
}

fn read(session: &mut Session, wire: &[u8], max: u32) -> Result<Vec<u8>, FrameError> {
    block_on(session.read_body(&mut &*wire, max))
}

/// The records a body of `len` bytes takes.
fn records(len: usize) -> usize {
    1 + (len + 4).saturating_sub(1) / MAX_RECORD_PLAINTEXT
}

#[test]
fn frames_round_trip_across_record_boundaries() {
    let (mut client, mut server) = pair();
    let edge = MAX_RECORD_PLAINTEXT - 4;
    for len in [
        0,
        1,
        edge - 1,
        edge,
        edge + 1,
        3 * MAX_RECORD_PLAINTEXT + 17,
    ] {
        let body: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let wire = sealed(&mut client, &body);
        assert_eq!(
            wire.len(),
            len + 4 + records(len) * (2 + TAG_LEN),
            "{len} bytes"
        );
        if len >= 16 {
            assert!(
                !wire.windows(16).any(|w| w == &body[..16]),
                "plaintext leaked for {len} bytes"
            );
        }
        assert_eq!(read(&mut server, &wire, MAX_FRAME_BYTES).unwrap(), body);
    }
    // And the other way.
    let wire = sealed(&mut server, b"answer");
    assert_eq!(
        read(&mut client, &wire, MAX_FRAME_BYTES).unwrap(),
        b"answer"
    );
}

#[test]
fn a_twenty_mib_snapshot_frame_round_trips() {
    let (mut client, mut server) = pair();
    let body = vec![0x5a; 20 << 20];
    let wire = sealed(&mut client, &body);
    assert_eq!(read(&mut server, &wire, MAX_FRAME_BYTES).unwrap(), body);
}

#[test]
fn frame_over_the_cap_is_refused_after_its_first_record() {
    let (mut client, mut server) = pair();
    let body = vec![1u8; 200_000];
    let wire = sealed(&mut client, &body);
    let mut reader = wire.as_slice();
    let err = block_on(server.read_body(&mut reader, 100_000)).unwrap_err();
    assert!(
        matches!(
            err,
            FrameError::TooLarge {
                len: 200_000,
                max: 100_000
            }
        ),
        "{err}"
    );
    assert_eq!(
        reader.len(),
        wire.len() - (2 + MAX_RECORD),
        "only the first record is read"
    );
}

#[test]
fn clean_end_of_stream_is_closed_and_a_cut_frame_is_io() {
    let (mut client, mut server) = pair();
    assert!(matches!(
        read(&mut server, &[], MAX_FRAME_BYTES),
        Err(FrameError::Closed)
    ));
    let wire = sealed(&mut client, &[9; 100_000]);
    let err = read(&mut server, &wire[..wire.len() - 1], MAX_FRAME_BYTES).unwrap_err();
    assert!(matches!(err, FrameError::Io(_)), "{err}");
}

#[test]
fn a_replayed_frame_fails() {
    let (mut client, mut server) = pair();
    let wire = sealed(&mut client, b"propose");
    assert_eq!(
        read(&mut server, &wire, MAX_FRAME_BYTES).unwrap(),
        b"propose"
    );
    let err = read(&mut server, &wire, MAX_FRAME_BYTES).unwrap_err();
    assert!(matches!(err, FrameError::Decrypt), "{err}");
}

#[test]
fn reordered_or_dropped_frames_fail() {
    // Dropped: the second frame arrives without the first.
    let (mut client, mut server) = pair();
    let _lost = sealed(&mut client, b"one");
    let second = sealed(&mut client, b"two");
    let err = read(&mut server, &second, MAX_FRAME_BYTES).unwrap_err();
    assert!(matches!(err, FrameError::Decrypt), "dropped: {err}");

    // Reordered: both arrive, the second first.
    let (mut client, mut server) = pair();
    let first = sealed(&mut client, b"one");
    let mut swapped = sealed(&mut client, b"two");
    swapped.extend(&first);
    let err = read(&mut server, &swapped, MAX_FRAME_BYTES).unwrap_err();
    assert!(matches!(err, FrameError::Decrypt), "reordered: {err}");
}

#[test]
fn a_frame_from_another_session_fails() {
    let (mut client, _) = pair();
    let (_, mut other_server) = pair();
    let wire = sealed(&mut client, b"hello");
    assert!(matches!(
        read(&mut other_server, &wire, MAX_FRAME_BYTES),
        Err(FrameError::Decrypt)
    ));
}

#[test]
fn records_that_overfill_the_frame_are_refused() {
    // Decryptable records whose first one announces fewer bytes than follow in a second one.
    let (mut client, mut server) = pair();
    let mut wire = Vec::new();
    let mut emit = |plain: &[u8]| {
        let mut out = vec![0u8; plain.len() + TAG_LEN];
        let n = client.noise.write_message(plain, &mut out).unwrap();
        wire.extend_from_slice(&(n as u16).to_be_bytes());
        wire.extend_from_slice(&out[..n]);
    };
    let mut first = 70_000u32.to_be_bytes().to_vec();
    first.extend(vec![0; MAX_RECORD_PLAINTEXT - 4]);
    emit(&first);
    emit(&vec![0; MAX_RECORD_PLAINTEXT]);
    let err = read(&mut server, &wire, MAX_FRAME_BYTES).unwrap_err();
    assert!(matches!(err, FrameError::BadRecord(_)), "{err}");
}

#[test]
fn a_sealed_four_gib_length_is_refused_at_once() {
    let (mut client, mut server) = pair();
    let mut plain = u32::MAX.to_be_bytes().to_vec();
    plain.extend([0; 8]);
    let mut out = vec![0u8; plain.len() + TAG_LEN];
    let n = client.noise.write_message(&plain, &mut out).unwrap();
    let mut wire = (n as u16).to_be_bytes().to_vec();
    wire.extend_from_slice(&out[..n]);
    let err = read(&mut server, &wire, MAX_FRAME_BYTES).unwrap_err();
    assert!(
        matches!(err, FrameError::TooLarge { len, max } if len == u64::from(u32::MAX) && max == MAX_FRAME_BYTES),
        "{err}"
    );
}

proptest! {
    #[test]
    fn any_flipped_byte_kills_the_frame(
        len in 0usize..150_000,
        at in any::<prop::sample::Index>(),
        x in 1..=255u8,
    ) {
        let (mut client, mut server) = pair();
        let body = vec![7u8; len];
        let mut wire = sealed(&mut client, &body);
        let i = at.index(wire.len());
        wire[i] ^= x;
        let read = read(&mut server, &wire, MAX_FRAME_BYTES);
        // A flipped record length reads the wrong span (a failed tag) or runs off the end.
        prop_assert!(matches!(read, Err(FrameError::Decrypt | FrameError::Io(_))), "{read:?}");
    }

    #[test]
    fn byte_soup_is_refused_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let (_, mut server) = pair();
        let read = read(&mut server, &bytes, MAX_FRAME_BYTES);
        prop_assert!(read.is_err(), "{read:?}");
    }
}
