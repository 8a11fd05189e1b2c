//! Starting a server on an address that is already taken (its API's or its transport's): it stops
//! with one line naming the address, status 1, no banner and no panic from a half-started server.

use std::net::TcpListener;
use std::process::Command;

use convoy_tests::{convoy_bin, free_port};

/// Runs `convoy server --dev` with `flag` set to an address another socket holds; returns that
/// address and the one line the server printed.
fn start_on_a_taken(flag: &str) -> anyhow::Result<(String, String)> {
    let taken = TcpListener::bind("127.0.0.1:0")?;
    let addr = taken.local_addr()?.to_string();
    let free = format!("127.0.0.1:{}", free_port()?);
    let (http, raft) = match flag {
        "--http-addr" => (addr.as_str(), free.as_str()),
        _ => (free.as_str(), addr.as_str()),
    };
    let out = Command::new(convoy_bin())
        .args(["server", "--dev", "--http-addr", http, "--raft-addr", raft])
        .env("RUST_LOG", "info")
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{flag}: {stdout}\n{stderr}");
    assert!(
        stdout.is_empty(),
        "{flag}: no banner for a server that never listened: {stdout}"
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{flag}: one line, nothing else: {stderr}");
    Ok((addr, lines[0].to_string()))
}

#[test]
fn an_http_addr_in_use_stops_the_server_with_one_line_before_it_starts() -> anyhow::Result<()> {
    let (addr, line) = start_on_a_taken("--http-addr")?;
    assert!(
        line.contains(&format!("cannot listen on http_addr {addr}")) && line.contains("in use"),
        "{line}"
    );
    Ok(())
}

#[test]
fn a_raft_addr_in_use_stops_the_server_with_one_line() -> anyhow::Result<()> {
    let (addr, line) = start_on_a_taken("--raft-addr")?;
    assert!(
        line.contains(&format!("cannot listen on raft address {addr}")) && line.contains("in use"),
        "{line}"
    );
    Ok(())
}
