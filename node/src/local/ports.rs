//! Free loopback ports for local servers, below the kernel's ephemeral range.

use std::net::TcpListener;

/// Reserves a free loopback port (released just before the server binds it).
pub fn free_port() -> anyhow::Result<u16> {
    Ok(free_ports(1)?[0])
}

/// `n` distinct free loopback ports, chosen at random below the kernel's ephemeral range, and every
/// listener held until all are chosen, so that the kernel cannot hand one port out twice (it did:
/// two founders once got the same address). Below that range no process's outgoing connection can
/// take a server's port while the server is down for a restart (one did, under load: the restarted
/// server could not listen).
pub fn free_ports(n: usize) -> anyhow::Result<Vec<u16>> {
    use rand::Rng;
    let below = ephemeral_ports_start();
    let mut rng = rand::thread_rng();
    let mut listeners = Vec::with_capacity(n);
    // Random ports in a range of thousands are nearly always free; the cap ends a loop over a
    // machine whose every such port is taken.
    for _ in 0..10_000 {
        if listeners.len() == n {
            break;
        }
        let port = rng.gen_range(FIRST_TEST_PORT..below);
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", port)) {
            listeners.push(listener);
        }
    }
    anyhow::ensure!(
        listeners.len() == n,
        "no {n} free loopback ports between {FIRST_TEST_PORT} and {below}"
    );
    listeners
        .iter()
        .map(|l| Ok(l.local_addr()?.port()))
        .collect()
}

/// The lowest port local servers listen on.
const FIRST_TEST_PORT: u16 = 10_000;

/// The first port of the kernel's ephemeral range (`ip_local_port_range`), 32768 unless set, and
/// never below [`FIRST_TEST_PORT`] + 1000.
fn ephemeral_ports_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
        .max(FIRST_TEST_PORT + 1_000)
}
