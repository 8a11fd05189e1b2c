//! Helpers over a local convoy cluster for the benchmarks: start it and wait for a leader, find the
//! leader's and a follower's address, read a server's RSS and its snapshot log lines.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::context::Ctx;
use super::load::get_json;
use crate::local::{Cluster, ClusterOptions};

/// Server settings for benchmarks, with the servers' log filter from `--server-log` and the config
/// lines of `--server-config`.
pub fn options(ctx: &Ctx, snapshot_every: u64) -> ClusterOptions {
    ClusterOptions {
        snapshot_every,
        node_timeout_ms: Some(600_000),
        log_filter: ctx.args.server_log.clone(),
        extra: ctx.args.server_config.join("\n"),
        wal_root: ctx.args.wal_root.clone(),
        bootstrap_token: Some(ctx.token.clone()),
        ..ClusterOptions::default()
    }
}

/// Starts a cluster under `dir` and waits until it has a leader and every server is ready. With a
/// `wal_root`, the servers' WALs go into a fresh directory under it, removed with the cluster.
pub async fn start(dir: &Path, mut options: ClusterOptions) -> anyhow::Result<Cluster> {
    let wal_temp = match &options.wal_root {
        Some(root) => {
            std::fs::create_dir_all(root)
                .with_context(|| format!("creating --wal-root {}", root.display()))?;
            let temp = tempfile::Builder::new()
                .prefix("convoy-wal-")
                .tempdir_in(root)?;
            options.wal_root = Some(temp.path().to_path_buf());
            Some(temp)
        }
        None => None,
    };
    let mut cluster = Cluster::spawn_in(dir, options).context("starting the cluster")?;
    if let Some(temp) = wal_temp {
        cluster = cluster.keeping(temp);
    }
    cluster.wait_ready(Duration::from_secs(60)).await?;
    cluster.wait_token_known(Duration::from_secs(60)).await?;
    Ok(cluster)
}

/// Waits until `GET /readyz` on `addr` answers 200.
pub async fn wait_ready(
    http: &reqwest::Client,
    addr: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(r) = http.get(format!("http://{addr}/readyz")).send().await {
            if r.status().is_success() {
                return Ok(());
            }
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "{addr} not ready within {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The leader's id, asking the running servers until one knows it.
pub async fn leader(
    http: &reqwest::Client,
    cluster: &Cluster,
    timeout: Duration,
) -> anyhow::Result<u64> {
    let deadline = Instant::now() + timeout;
    loop {
        for s in cluster.servers.values().filter(|s| s.is_running()) {
            if let Ok(c) = get_json(http, &format!("http://{}/v1/cluster", s.http_addr)).await {
                if let Some(id) = c["leader_id"].as_u64() {
                    if cluster.get(id).is_some_and(|l| l.is_running()) {
                        return Ok(id);
                    }
                }
            }
        }
        anyhow::ensure!(Instant::now() < deadline, "no leader within {timeout:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The HTTP address of server `id`.
pub fn addr(cluster: &Cluster, id: u64) -> String {
    cluster
        .get(id)
        .map(|s| s.http_addr.clone())
        .unwrap_or_default()
}

/// The HTTP address of a running server other than `leader`.
pub fn follower(cluster: &Cluster, leader: u64) -> String {
    cluster
        .servers
        .values()
        .find(|s| s.id != leader && s.is_running())
        .map(|s| s.http_addr.clone())
        .unwrap_or_default()
}

/// Resident memory of process `pid`, KiB (`VmRSS` in `/proc/<pid>/status`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    super::report::proc_field(&status, "VmRSS")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Removes ANSI colour escapes (`ESC [ ... m`) from a log line.
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `(bytes, ms)` of every "built snapshot" line in a server log.
pub fn snapshot_lines(log: &str) -> Vec<(u64, u64)> {
    let field = |line: &str, key: &str| -> Option<u64> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
    };
    let json = |line: &str| -> Option<(u64, u64)> {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        Some((v["bytes"].as_u64()?, v["ms"].as_u64()?))
    };
    log.lines()
        .map(strip_ansi)
        .filter(|l| l.contains("built snapshot"))
        .filter_map(|l| match l.starts_with('{') {
            true => json(&l),
            false => Some((field(&l, "bytes")?, field(&l, "ms")?)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_lines_are_parsed_through_colours() {
        let log = "2026-01-01T00:00:00Z  INFO \u{1b}[2mconvoy_raft::sm_store\u{1b}[0m: built snapshot \
                   \u{1b}[3mlast_log_id\u{1b}[0m\u{1b}[2m=\u{1b}[0mSome(1-1-5) \u{1b}[3mbytes\u{1b}[0m\u{1b}[2m=\u{1b}[0m1234 \
                   \u{1b}[3mms\u{1b}[0m\u{1b}[2m=\u{1b}[0m56\nother line bytes=1 ms=2\n\
                   x INFO built snapshot last_log_id=Some(1-1-9) bytes=99 ms=7\n\
                   {\"level\":\"INFO\",\"message\":\"built snapshot\",\"bytes\":42,\"ms\":3}\n";
        assert_eq!(snapshot_lines(log), vec![(1234, 56), (99, 7), (42, 3)]);
    }

    #[test]
    fn ansi_escapes_are_removed() {
        assert_eq!(strip_ansi("\u{1b}[3mbytes\u{1b}[0m=5"), "bytes=5");
        assert_eq!(strip_ansi("plain"), "plain");
    }
}
