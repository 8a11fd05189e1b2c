//! A real transport server on loopback fed hundreds of garbage connections (byte soup before
//! and after authenticating, random and huge length prefixes, corrupted sealed frames and
//! sealed garbage) must close
//! each of them, release its connection slot, and still answer a correct peer.
//!
//! 256 connections by default; `PROPTEST_CASES=100000` runs more, `FUZZ_SEED=n` replays one seed.

use std::time::Duration;

use crate::common::*;
use convoy_raft::codec;
use convoy_raft::network::server::ServerConfig;
use convoy_raft::network::{ClientRequest, RpcRequest};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn soup(rng: &mut StdRng, max: usize) -> Vec<u8> {
    let len = rng.gen_range(0..max);
    (0..len).map(|_| rng.gen()).collect()
}

/// What one garbage connection sends.
enum Garbage {
    /// Raw bytes, after authenticating when asked.
    Raw { authenticate: bool, bytes: Vec<u8> },
    /// After authenticating, `body` sealed as a frame, then the wire bytes at the given offsets
    /// (modulo its length) flipped.
    Sealed {
        body: Vec<u8>,
        flips: Vec<(usize, u8)>,
    },
}

fn garbage(rng: &mut StdRng) -> Garbage {
    let raw = |authenticate, bytes| Garbage::Raw {
        authenticate,
        bytes,
    };
    match rng.gen_range(0..7) {
        0 => raw(false, soup(rng, 600)),
        1 => raw(true, soup(rng, 600)),
        2 => {
            // A plausible prefix (anything up to the 64 MiB cap) and fewer bytes than it says.
            let len = rng.gen_range(1..=64 * 1024 * 1024u32);
            let mut bytes = len.to_be_bytes().to_vec();
            bytes.extend(soup(rng, 300));
            raw(rng.gen(), bytes)
        }
        3 => {
            let mut bytes = u32::MAX.to_be_bytes().to_vec();
            bytes.extend(soup(rng, 16));
            raw(rng.gen(), bytes)
        }
        4 => {
            // A valid request with a few bytes of its body flipped, correctly sealed: it
            // decrypts, then decodes or fails as a codec error.
            let req = RpcRequest::Client(ClientRequest::Propose(soup(rng, 200)));
            let mut body = codec::encode(&req).unwrap();
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..body.len());
                body[i] ^= rng.gen_range(1..=255u8);
            }
            Garbage::Sealed {
                body,
                flips: vec![],
            }
        }
        5 => {
            // A valid sealed request with a few ciphertext bytes flipped: it fails to decrypt.
            let req = RpcRequest::Client(ClientRequest::Propose(soup(rng, 200)));
            let flips = (0..rng.gen_range(1..4))
                .map(|_| (rng.gen(), rng.gen_range(1..=255u8)))
                .collect();
            Garbage::Sealed {
                body: codec::encode(&req).unwrap(),
                flips,
            }
        }
        _ => Garbage::Sealed {
            body: soup(rng, 600),
            flips: vec![],
        },
    }
}

/// Sends the garbage, hangs up its sending side, and waits for the server to close the
/// connection.
async fn garbage_connection(addr: &str, garbage: Garbage) {
    let (mut stream, bytes) = match garbage {
        Garbage::Raw {
            authenticate: true,
            bytes,
        } => (authenticated(addr).await.0, bytes),
        Garbage::Raw { bytes, .. } => (TcpStream::connect(addr).await.unwrap(), bytes),
        Garbage::Sealed { body, flips } => {
            let (stream, mut session) = authenticated(addr).await;
            let mut wire = Vec::new();
            session.write_body(&mut wire, &body).await.unwrap();
            for (at, x) in flips {
                let i = at % wire.len();
                wire[i] ^= x;
            }
            (stream, wire)
        }
    };
    // The server may close before reading everything: a failed write is fine.
    let _ = stream.write_all(&bytes).await;
    let _ = stream.shutdown().await;
    let mut sink = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut sink)).await;
    assert!(closed.is_ok(), "server left a garbage connection open");
}

#[tokio::test]
async fn server_survives_garbage_connections_and_still_serves() {
    // Few slots: a leaked slot would soon lock correct peers out.
    let (server, counts) = counting_server(ServerConfig {
        max_connections: 16,
        ..ServerConfig::default()
    })
    .await;
    let seed = env_or("FUZZ_SEED", rand::random::<u64>());
    let cases = env_or("PROPTEST_CASES", 256usize);
    println!("FUZZ_SEED={seed} PROPTEST_CASES={cases}");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut left = cases;
    while left > 0 {
        let batch = left.min(8);
        left -= batch;
        let conns: Vec<_> = (0..batch).map(|_| garbage(&mut rng)).collect();
        futures::future::join_all(
            conns
                .into_iter()
                .map(|garbage| garbage_connection(&server.addr, garbage)),
        )
        .await;
        assert_serves(&server.addr).await;
    }
    // A flipped byte may still decode as a request; nothing else can reach the handler.
    assert!(counts.get().2 >= cases.div_ceil(8), "{:?}", counts.get());
    server.stop().await;
}
