//! A flood of unauthenticated connections to the raft port: 500 connections from ten loopback
//! sources that send garbage or nothing. The server must refuse every one of them, say so in a
//! few summary lines (not a line each), and keep serving a real peer promptly throughout.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::*;
use convoy_raft::network::server::ServerConfig;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpSocket;

/// Log output captured from the test's tracing subscriber.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capture {
    fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// The N of "refused N unauthenticated connections" in a summary line.
fn refused_in(line: &str) -> Option<u64> {
    let rest = line.split("refused ").nth(1)?;
    let n = rest.split(' ').next()?;
    rest.contains("unauthenticated connections")
        .then(|| n.parse().ok())
        .flatten()
}

const CONNECTIONS: usize = 500;
const SOURCES: u8 = 10;

/// The flood runs in a process of its own, where its log capture is the global subscriber. A
/// thread's own subscriber (`set_default`) is not enough beside other tests: when a callsite is
/// first hit on another thread while one dispatcher is registered, tracing caches that thread's
/// "never" for it, and this test's summary lines are lost (seen under `cargo test`).
#[test]
fn a_flood_of_unauthenticated_connections_leaves_a_few_lines_and_peers_served() {
    const INNER: &str = "transport_flood::flood_in_a_process_of_its_own";
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", INNER, "--ignored", "--test-threads=1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the flood test did not run: {stdout}{stderr}"
    );
}

#[tokio::test]
#[ignore = "run in a process of its own by the test above"]
async fn flood_in_a_process_of_its_own() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber)
        .expect("the only subscriber of this process");

    let interval = Duration::from_secs(1);
    let server = Server::start_with(
        SECRET,
        ServerConfig {
            handshake_timeout: Duration::from_millis(500),
            refusal_log_interval: interval,
            ..ServerConfig::default()
        },
    )
    .await;
    let target: SocketAddr = server.addr.parse().unwrap();

    // Half send garbage (an HTTP request, then bytes), half say nothing; all stay open.
    let mut flood = Vec::with_capacity(CONNECTIONS);
    for i in 0..CONNECTIONS {
        let socket = TcpSocket::new_v4().unwrap();
        let source = Ipv4Addr::new(127, 0, 0, 2 + (i as u8 % SOURCES));
        socket.bind((source, 0).into()).unwrap();
        let mut stream = socket.connect(target).await.unwrap();
        if i % 2 == 0 {
            let _ = stream
                .write_all(b"GET / HTTP/1.1\r\nHost: raft\r\n\r\n\x00\x01\x02")
                .await;
        }
        flood.push(stream);
    }

    // A real peer (from 127.0.0.1) is served promptly while the flood holds its sockets open.
    let start = Instant::now();
    assert_serves(&server.addr).await;
    let took = start.elapsed();
    assert!(took < Duration::from_millis(500), "peer waited {took:?}");

    // Every flood connection is refused by now: bad handshake, timed out or displaced.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_serves(&server.addr).await;
    drop(flood);
    server.stop().await;

    let lines = capture.lines();
    let refused: u64 = lines.iter().filter_map(|l| refused_in(l)).sum();
    assert_eq!(
        refused, CONNECTIONS as u64,
        "every flood connection counted once: {lines:#?}"
    );
    assert!(
        lines.len() <= 4,
        "at most one summary per {interval:?} (plus one at shutdown): {lines:#?}"
    );
    assert!(
        lines
            .iter()
            .all(|l| l.contains("WARN") && refused_in(l).is_some()),
        "only summary lines: {lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&format!("from {SOURCES} sources"))),
        "{lines:#?}"
    );
}
