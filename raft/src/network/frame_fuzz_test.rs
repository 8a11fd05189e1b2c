//! Property tests of the frame reader, the codec and the handshake on hostile bytes: random
//! bytes, random length prefixes (huge ones included), truncated and corrupted valid frames.
//! Nothing may panic; bad input is an error, and a prefix over the cap is refused unread.
//!
//! 256 cases per property by default; `PROPTEST_CASES=100000` runs more.

use std::time::Duration;

use openraft::entry::RaftEntry;
use openraft::type_config::alias::{EntryOf, LeaderIdOf, LogIdOf, VoteOf};
use openraft::vote::RaftLeaderIdExt;
use proptest::prelude::*;
use tokio::io::AsyncWriteExt;

use super::*;
use crate::network::noise::{self, AuthError, MAX_HANDSHAKE_FRAME};
use crate::network::{ClientRequest, RpcRequest, RpcResponse};
use crate::types::{Member, Proposal, TypeConfig};

fn framed(len: u32, body: &[u8]) -> Vec<u8> {
    let mut bytes = len.to_be_bytes().to_vec();
    bytes.extend_from_slice(body);
    bytes
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Reads `wire` as each message type the transport decodes; returns how many succeeded.
fn read_as_every_message(wire: &[u8], cap: u32) -> usize {
    block_on(async {
        let a = read_frame::<RpcRequest, _>(&mut &*wire, cap).await.is_ok();
        let b = read_frame::<RpcResponse, _>(&mut &*wire, cap).await.is_ok();
        let c = read_frame::<ClientRequest, _>(&mut &*wire, cap)
            .await
            .is_ok();
        usize::from(a) + usize::from(b) + usize::from(c)
    })
}

fn client_request() -> impl Strategy<Value = ClientRequest> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256).prop_map(ClientRequest::Propose),
        (any::<u64>(), ".{0,20}", ".{0,20}").prop_map(|(id, raft_addr, http_addr)| {
            ClientRequest::AddMember {
                id,
                member: Member {
                    raft_addr,
                    http_addr,
                },
            }
        }),
        any::<u64>().prop_map(|id| ClientRequest::RemoveMember { id }),
        Just(ClientRequest::ReadIndex),
    ]
}

fn rpc_request() -> impl Strategy<Value = RpcRequest> {
    let log_id = |term: u64, index: u64| {
        LogIdOf::<TypeConfig>::new(LeaderIdOf::<TypeConfig>::new_committed(term, 1), index)
    };
    prop_oneof![
        client_request().prop_map(RpcRequest::Client),
        (any::<u64>(), any::<u64>()).prop_map(|(term, node)| RpcRequest::Vote(
            openraft::raft::VoteRequest::new(VoteOf::<TypeConfig>::new(term, node), None)
        )),
        (
            1..u64::MAX,
            prop::collection::vec(
                (any::<u64>(), prop::collection::vec(any::<u8>(), 0..64)),
                0..8
            )
        )
            .prop_map(move |(term, cmds)| {
                let entries = cmds
                    .into_iter()
                    .enumerate()
                    .map(|(i, (at_ms, command))| {
                        EntryOf::<TypeConfig>::new_normal(
                            log_id(term, i as u64 + 1),
                            Proposal { at_ms, command },
                        )
                    })
                    .collect();
                RpcRequest::AppendEntries(openraft::raft::AppendEntriesRequest {
                    vote: VoteOf::<TypeConfig>::new(term, 1),
                    prev_log_id: Some(log_id(term, 0)),
                    entries,
                    leader_commit: None,
                })
            }),
    ]
}

/// A corruption of an encoded frame: flip a byte, splice in a huge bincode varint (a length or
/// count claiming up to `u64::MAX`), or cut it short.
#[derive(Clone, Debug)]
enum Edit {
    Flip(prop::sample::Index, u8),
    HugeVarint(prop::sample::Index),
    Truncate(prop::sample::Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<prop::sample::Index>(), 1..=255u8).prop_map(|(i, x)| Edit::Flip(i, x)),
        any::<prop::sample::Index>().prop_map(Edit::HugeVarint),
        any::<prop::sample::Index>().prop_map(Edit::Truncate),
    ]
}

/// Applies `edits` to the body of `frame`, keeping the length prefix in step with the body.
fn corrupt(frame: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut body = frame[4..].to_vec();
    for e in edits {
        if body.is_empty() {
            break;
        }
        match e {
            Edit::Flip(i, x) => {
                let i = i.index(body.len());
                body[i] ^= x;
            }
            Edit::HugeVarint(i) => {
                let i = i.index(body.len());
                // 253 = "a u64 follows" in bincode's varint encoding.
                body.splice(i..i, [253, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
            }
            Edit::Truncate(i) => body.truncate(i.index(body.len())),
        }
    }
    framed(body.len() as u32, &body)
}

proptest! {
    #[test]
    fn byte_soup_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        read_as_every_message(&bytes, MAX_FRAME_BYTES);
        read_as_every_message(&bytes, MAX_HANDSHAKE_FRAME);
        let _ = codec::decode::<RpcRequest>(&bytes);
        let _ = codec::decode::<RpcResponse>(&bytes);
        let _ = codec::decode::<ClientRequest>(&bytes);
    }

    #[test]
    fn random_body_behind_a_correct_prefix_is_a_value_or_a_codec_error(
        body in prop::collection::vec(any::<u8>(), 0..2048),
    ) {
        let wire = framed(body.len() as u32, &body);
        let read = block_on(read_frame::<RpcRequest, _>(&mut wire.as_slice(), MAX_FRAME_BYTES));
        prop_assert!(matches!(read, Ok(_) | Err(FrameError::Codec(_))), "{read:?}");
    }

    #[test]
    fn prefix_over_the_cap_is_refused_without_reading_the_body(
        cap in 0..=MAX_FRAME_BYTES,
        excess in 1..=u32::MAX,
        tail in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let len = cap.saturating_add(excess);
        prop_assume!(len > cap);
        let wire = framed(len, &tail);
        let mut reader = wire.as_slice();
        let read = block_on(read_frame::<RpcRequest, _>(&mut reader, cap));
        prop_assert!(
            matches!(read, Err(FrameError::TooLarge { len: l, max }) if l == u64::from(len) && max == cap),
            "{read:?}"
        );
        prop_assert_eq!(reader.len(), tail.len(), "only the prefix is consumed");
    }

    #[test]
    fn prefix_under_the_cap_with_a_short_body_is_an_io_error(
        len in 1..=MAX_FRAME_BYTES,
        sent in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        prop_assume!((sent.len() as u32) < len);
        let wire = framed(len, &sent);
        let read = block_on(read_frame::<RpcRequest, _>(&mut wire.as_slice(), MAX_FRAME_BYTES));
        prop_assert!(matches!(read, Err(FrameError::Io(_))), "{read:?}");
    }

    #[test]
    fn valid_frames_round_trip_and_truncated_ones_fail(
        req in client_request(),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut wire = Vec::new();
        block_on(write_frame(&mut wire, &req)).unwrap();
        let back = block_on(read_frame::<ClientRequest, _>(&mut wire.as_slice(), MAX_FRAME_BYTES));
        prop_assert_eq!(back.unwrap(), req);
        let cut = cut.index(wire.len());
        let read = block_on(read_frame::<ClientRequest, _>(&mut &wire[..cut], MAX_FRAME_BYTES));
        prop_assert!(
            matches!(read, Err(FrameError::Closed)) == (cut == 0)
                && matches!(read, Err(FrameError::Closed | FrameError::Io(_))),
            "cut at {cut}: {read:?}"
        );
    }

    #[test]
    fn corrupted_raft_frames_never_panic(
        req in rpc_request(),
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        let mut wire = Vec::new();
        block_on(write_frame(&mut wire, &req)).unwrap();
        let bad = corrupt(&wire, &edits);
        read_as_every_message(&bad, MAX_FRAME_BYTES);
    }

    #[test]
    fn server_handshake_refuses_byte_soup(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let result = block_on(async {
            let (mut server, mut client) = tokio::io::duplex(4096);
            client.write_all(&bytes).await.unwrap();
            client.shutdown().await.unwrap();
            noise::server_handshake(&mut server, b"secret", 2, Duration::from_secs(2)).await
        });
        prop_assert!(
            matches!(result, Err(AuthError::Frame(_) | AuthError::BadSecret)),
            "{result:?}"
        );
    }

    #[test]
    fn client_handshake_refuses_byte_soup(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let result = block_on(async {
            let (mut client, mut server) = tokio::io::duplex(4096);
            server.write_all(&bytes).await.unwrap();
            server.shutdown().await.unwrap();
            noise::client_handshake(&mut client, b"secret", 1, 2, Duration::from_secs(2)).await
        });
        prop_assert!(result.is_err(), "{result:?}");
        prop_assert!(!matches!(result, Err(AuthError::Timeout { .. })), "{result:?}");
    }
}

#[test]
fn handshake_refuses_a_four_gib_prefix_at_once() {
    let result = block_on(async {
        let (mut server, mut client) = tokio::io::duplex(256);
        client.write_all(&u32::MAX.to_be_bytes()).await.unwrap();
        noise::server_handshake(&mut server, b"secret", 2, Duration::from_secs(2)).await
    });
    assert!(
        matches!(
            result,
            Err(AuthError::Frame(FrameError::TooLarge { len, max }))
                if len == u64::from(u32::MAX) && max == MAX_HANDSHAKE_FRAME
        ),
        "{result:?}"
    );
}
