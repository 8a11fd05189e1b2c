//! Starting a server on an API address that is already taken: it stops before anything starts,
//! with one line naming the address, status 1, no banner and no panic from a half-started server.

use std::net::TcpListener;
use std::process::Command;

use convoy_tests::convoy_bin;

#[test]
fn an_http_addr_in_use_stops_the_server_with_one_line_before_it_starts() -> anyhow::Result<()> {
    let taken = TcpListener::bind("127.0.0.1:0")?;
    let addr = taken.local_addr()?.to_string();
    let out = Command::new(convoy_bin())
        .args(["server", "--dev", "--http-addr", &addr])
        .env("RUST_LOG", "info")
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.is_empty(),
        "no banner for a server that never listened: {stdout}"
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line, nothing started: {stderr}");
    assert!(
        lines[0].contains(&format!("cannot listen on http_addr {addr}"))
            && lines[0].contains("in use"),
        "{stderr}"
    );
    Ok(())
}
