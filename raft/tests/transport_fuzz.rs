//! A real transport server on loopback fed hundreds of garbage connections (byte soup before
//! and after authenticating, random and huge length prefixes, corrupted valid frames) must close
//! each of them, release its connection slot, and still answer a correct peer.
//!
//! 256 connections by default; `PROPTEST_CASES=100000` runs more, `FUZZ_SEED=n` replays one seed.

mod common;

use std::time::Duration;

use common::*;
use convoy_raft::network::frame::write_frame;
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

/// The bytes one garbage connection sends, and whether it authenticates first.
fn garbage(rng: &mut StdRng) -> (bool, Vec<u8>) {
    match rng.gen_range(0..6) {
        0 => (false, soup(rng, 600)),
        1 => (true, soup(rng, 600)),
        2 => {
            // A plausible prefix (anything up to the 64 MiB cap) and fewer bytes than it says.
            let len = rng.gen_range(1..=64 * 1024 * 1024u32);
            let mut bytes = len.to_be_bytes().to_vec();
            bytes.extend(soup(rng, 300));
            (rng.gen(), bytes)
        }
        3 => {
            let mut bytes = u32::MAX.to_be_bytes().to_vec();
            bytes.extend(soup(rng, 16));
            (rng.gen(), bytes)
        }
        _ => {
            // A valid request frame with a few bytes of its body flipped.
            let req = RpcRequest::Client(ClientRequest::Propose(soup(rng, 200)));
            let mut frame = Vec::new();
            futures::executor::block_on(write_frame(&mut frame, &req)).unwrap();
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(4..frame.len());
                frame[i] ^= rng.gen_range(1..=255u8);
            }
            (true, frame)
        }
    }
}

/// Sends `bytes` (after authenticating when asked), hangs up its sending side, and waits for
/// the server to close the connection.
async fn garbage_connection(addr: &str, authenticate: bool, bytes: Vec<u8>) {
    let mut stream = if authenticate {
        authenticated(addr).await
    } else {
        TcpStream::connect(addr).await.unwrap()
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
                .map(|(auth, bytes)| garbage_connection(&server.addr, auth, bytes)),
        )
        .await;
        assert_serves(&server.addr).await;
    }
    // A flipped byte may still decode as a request; nothing else can reach the handler.
    assert!(counts.get().2 >= cases.div_ceil(8), "{:?}", counts.get());
    server.stop().await;
}
