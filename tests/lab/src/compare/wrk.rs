//! (h) The external load generator: wrk (the Debian package) with the Lua scripts kept beside this
//! file, driving convoy's leader and etcd's leader in the same run at each state size (a sweep
//! over objects already stored), so the headline numbers do not depend on convoy's own client.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::json;

use super::against_etcd::etcd_load;
use super::cpu::{CpuMark, CpuSpent};
use super::etcd::{self, EtcdCluster};
use super::Compare;
use convoy_node::tools::bench::load::{fixed_count, post_ok};
use convoy_node::tools::bench::report::{ratio, Results};
use convoy_node::tools::bench::throughput::{convoy_load, record_as};
use convoy_node::tools::bench::{cluster, Ctx};

const SCENARIO: &str = "wrk";
/// Creates a resource with a unique name per request.
pub const CONVOY_SCRIPT: &str = include_str!("wrk/convoy_create.lua");
/// Puts a unique key into etcd per request.
pub const ETCD_SCRIPT: &str = include_str!("wrk/etcd_put.lua");
/// Clients filling the state before a size is measured.
const PREFILL_CLIENTS: usize = 256;

/// What one wrk run reported.
#[derive(Debug, Default, PartialEq)]
pub struct WrkResult {
    /// Requests completed per second (wrk's `Requests/sec`), failed ones included.
    pub requests_per_sec: f64,
    /// Requests completed.
    pub requests: u64,
    /// Answers that were not 2xx or 3xx.
    pub non_2xx: u64,
    /// Connect, read, write and timeout errors.
    pub socket_errors: u64,
    /// Latency percentiles from `--latency`, ms.
    pub p50_ms: Option<f64>,
    /// 99th percentile, ms.
    pub p99_ms: Option<f64>,
}

impl WrkResult {
    /// Successful writes per second: the requests that were neither refused nor lost.
    pub fn writes_per_sec(&self) -> f64 {
        if self.requests == 0 {
            return 0.0;
        }
        let ok = self.requests.saturating_sub(self.non_2xx) as f64;
        self.requests_per_sec * ok / self.requests as f64
    }
}

/// Whether a `wrk` binary is on the PATH.
pub fn available() -> bool {
    Command::new("wrk")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("wrk"))
}

/// A wrk duration (`1.23ms`, `456.00us`, `1.02s`, `2.00m`) in ms.
fn parse_ms(text: &str) -> Option<f64> {
    let (number, factor) = if let Some(n) = text.strip_suffix("us") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60_000.0)
    } else {
        return None;
    };
    number.parse::<f64>().ok().map(|n| n * factor)
}

/// Reads wrk's report (run with `--latency`).
pub fn parse(output: &str) -> anyhow::Result<WrkResult> {
    let mut result = WrkResult::default();
    let mut rate = None;
    for line in output.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["Requests/sec:", n] => rate = n.parse().ok(),
            ["50%", t] => result.p50_ms = parse_ms(t),
            ["99%", t] => result.p99_ms = parse_ms(t),
            ["Non-2xx", "or", "3xx", "responses:", n] => result.non_2xx = n.parse()?,
            [n, "requests", "in", ..] => result.requests = n.parse()?,
            ["Socket", "errors:", rest @ ..] => {
                result.socket_errors = rest
                    .iter()
                    .filter_map(|w| w.trim_end_matches(',').parse::<u64>().ok())
                    .sum();
            }
            _ => {}
        }
    }
    let Some(rate) = rate else {
        bail!("no `Requests/sec` in wrk's output: {}", first_line(output));
    };
    result.requests_per_sec = rate;
    Ok(result)
}

fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("");
    &line[..line.len().min(100)]
}

/// Runs wrk with `script` against `url` for `duration` with `clients` connections.
pub fn run(
    script: &Path,
    url: &str,
    clients: usize,
    duration: Duration,
    prefix: &str,
    token: Option<&str>,
) -> anyhow::Result<WrkResult> {
    let threads = clients.clamp(1, 2);
    let mut command = Command::new("wrk");
    command
        .arg(format!("-t{threads}"))
        .arg(format!("-c{clients}"))
        .arg(format!("-d{}s", duration.as_secs().max(1)))
        .arg("--timeout")
        .arg("10s")
        .arg("--latency")
        .arg("-s")
        .arg(script)
        .arg(url)
        .arg("--")
        .arg(prefix)
        .env("CONVOY_TOKEN", token.unwrap_or(""));
    let output = command.output().context("running wrk")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "wrk exited with {}: {}",
            output.status,
            first_line(&String::from_utf8_lossy(&output.stderr))
        );
    }
    parse(&stdout)
}

/// Writes the scripts where wrk can read them.
fn write_scripts(dir: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir)?;
    let convoy = dir.join("convoy_create.lua");
    let etcd = dir.join("etcd_put.lua");
    std::fs::write(&convoy, CONVOY_SCRIPT)?;
    std::fs::write(&etcd, ETCD_SCRIPT)?;
    Ok((convoy, etcd))
}

fn record(results: &mut Results, who: &str, objects: u64, clients: usize, r: &WrkResult) {
    let label = format!("{who}, {objects} objects, {clients} clients");
    let note = if r.non_2xx + r.socket_errors > 0 {
        format!(
            "{} not 2xx, {} socket errors of {}",
            r.non_2xx, r.socket_errors, r.requests
        )
    } else {
        String::new()
    };
    results.add(
        SCENARIO,
        format!("{label}: writes/s"),
        Some(r.writes_per_sec()),
        "ops/s",
        note,
    );
    results.add(SCENARIO, format!("{label}: p50"), r.p50_ms, "ms", "");
    results.add(SCENARIO, format!("{label}: p99"), r.p99_ms, "ms", "");
}

/// What each write cost the machine in CPU time: the three servers together, and wrk itself.
fn record_cpu(
    results: &mut Results,
    who: &str,
    objects: u64,
    clients: usize,
    r: &WrkResult,
    spent: CpuSpent,
) {
    let label = format!("{who}, {objects} objects, {clients} clients");
    let writes = r.requests.max(1) as f64;
    let per_write = |ms: f64| Some(ms * 1000.0 / writes);
    let note = "CPU time over the level / requests wrk sent";
    results.add(
        SCENARIO,
        format!("{label}: servers' CPU per write"),
        per_write(spent.servers_ms),
        "µs",
        note,
    );
    results.add(
        SCENARIO,
        format!("{label}: wrk's CPU per write"),
        per_write(spent.generator_ms),
        "µs",
        note,
    );
}

/// Fills a store up to `target` objects with `put(i)` for `i` in `from..target`.
async fn prefill<F, Fut>(from: u64, target: u64, put: F) -> anyhow::Result<()>
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    if target <= from {
        return Ok(());
    }
    let r = fixed_count(
        PREFILL_CLIENTS,
        target - from,
        Duration::from_secs(3600),
        move |i| put(from + i),
    )
    .await;
    if r.ok < target - from {
        bail!(
            "prefill stored {} of {} objects: {}",
            r.ok,
            target - from,
            r.error_note()
        );
    }
    Ok(())
}

/// RSS per stored object, bytes: the growth of the leader's (or member's) RSS over the objects.
fn rss_per_object(results: &mut Results, who: &str, objects: u64, base_kib: u64, now_kib: u64) {
    if objects == 0 {
        return;
    }
    let per = now_kib.saturating_sub(base_kib) as f64 * 1024.0 / objects as f64;
    results.add(
        SCENARIO,
        format!("{who}, {objects} objects: RSS per object"),
        Some(per),
        "B",
        format!("RSS {base_kib} → {now_kib} KiB"),
    );
}

/// Runs every `--state-objects` size × `--clients` level with wrk against convoy's leader (snapshots
/// as shipped), then the same against etcd's leader with `--etcd`.
pub async fn run_scenario(ctx: &mut Ctx, cmp: &Compare) -> anyhow::Result<()> {
    if !available() {
        bail!("no wrk binary on PATH (apt-get install -y wrk)");
    }
    let (convoy_script, etcd_script) = write_scripts(&ctx.dir("wrk-scripts"))?;
    let mut sizes = cmp.state_objects.clone();
    sizes.sort_unstable();
    let levels = ctx.args.clients.clone();
    let duration = ctx.args.duration;
    {
        let cluster = cluster::start(
            &ctx.dir("wrk"),
            cluster::options(ctx, convoy_raft::node::DEFAULT_SNAPSHOT_EVERY),
        )
        .await?;
        let leader = cluster::leader(&ctx.http, &cluster, Duration::from_secs(30)).await?;
        let addr = cluster::addr(&cluster, leader);
        let pid = cluster.server(leader).pid();
        let base = pid.and_then(cluster::rss_kib).unwrap_or(0);
        let mut stored = 0;
        for &size in &sizes {
            let (http, url) = (
                ctx.http.clone(),
                Arc::new(format!("http://{addr}/v1/resources")),
            );
            prefill(stored, size, move |i| {
                let (http, url) = (http.clone(), url.clone());
                async move {
                    post_ok(&http, &url, &json!({"name": format!("p-{i}")}))
                        .await
                        .map(|_| ())
                }
            })
            .await?;
            stored = stored.max(size);
            let now = pid.and_then(cluster::rss_kib).unwrap_or(0);
            rss_per_object(&mut ctx.results, "convoy leader", size, base, now);
            let pids: Vec<u32> = cluster.servers.values().filter_map(|s| s.pid()).collect();
            for &n in &levels {
                let mark = CpuMark::now(&pids);
                let r = run(
                    &convoy_script,
                    &format!("http://{addr}"),
                    n,
                    duration,
                    &format!("w{size}-{n}"),
                    Some(&ctx.token),
                )?;
                let spent = mark.since(&pids);
                eprintln!("  convoy, {size} objects, {n} clients: {r:?}, {spent:?}");
                record(&mut ctx.results, "convoy → leader", size, n, &r);
                record_cpu(&mut ctx.results, "convoy → leader", size, n, &r, spent);
                if cmp.own_client {
                    let own = convoy_load(ctx, &addr, &format!("o{size}-{n}"), n).await;
                    let who = format!("convoy (own client) → leader, {size} objects");
                    record_as(&mut ctx.results, SCENARIO, &who, &own);
                }
            }
        }
    }
    if !cmp.etcd {
        return Ok(());
    }
    let etcd = EtcdCluster::start(&ctx.dir("etcd-wrk"))?;
    etcd.wait_ready(&cmp.etcd_http, Duration::from_secs(30))
        .await?;
    let leader = etcd.leader(&cmp.etcd_http).await.unwrap_or(0);
    let url = etcd.client_urls()[leader].clone();
    let pid = etcd.pid(leader);
    let base = pid.and_then(cluster::rss_kib).unwrap_or(0);
    let mut stored = 0;
    for &size in &sizes {
        let (http, put) = (
            cmp.etcd_http.clone(),
            Arc::new(format!("{url}{}", etcd::PUT_PATH)),
        );
        prefill(stored, size, move |i| {
            let (http, put) = (http.clone(), put.clone());
            async move {
                post_ok(&http, &put, &etcd::put_body(&format!("p-{i}"), "v"))
                    .await
                    .map(|_| ())
            }
        })
        .await?;
        stored = stored.max(size);
        let now = pid.and_then(cluster::rss_kib).unwrap_or(0);
        rss_per_object(&mut ctx.results, "etcd leader", size, base, now);
        let pids: Vec<u32> = (0..etcd.client_urls().len())
            .filter_map(|i| etcd.pid(i))
            .collect();
        for &n in &levels {
            let mark = CpuMark::now(&pids);
            let r = run(
                &etcd_script,
                &url,
                n,
                duration,
                &format!("w{size}-{n}"),
                None,
            )?;
            let spent = mark.since(&pids);
            eprintln!("  etcd, {size} objects, {n} clients: {r:?}, {spent:?}");
            record(&mut ctx.results, "etcd → leader", size, n, &r);
            record_cpu(&mut ctx.results, "etcd → leader", size, n, &r, spent);
            let convoy = ctx.results.value(&format!(
                "convoy → leader, {size} objects, {n} clients: writes/s"
            ));
            ctx.results.add(
                SCENARIO,
                format!("convoy/etcd writes/s, {size} objects, {n} clients"),
                ratio(convoy, Some(r.writes_per_sec())),
                "x",
                "wrk, both to the leader",
            );
            if cmp.own_client {
                let own = etcd_load(ctx, cmp, &url, &format!("o{size}-{n}"), n).await;
                let who = format!("etcd (own client) → leader, {size} objects");
                record_as(&mut ctx.results, SCENARIO, &who, &own);
                let convoy = ctx.results.value(&format!(
                    "convoy (own client) → leader, {size} objects, {n} clients: writes/s"
                ));
                ctx.results.add(
                    SCENARIO,
                    format!("convoy/etcd writes/s, own client, {size} objects, {n} clients"),
                    ratio(convoy, Some(own.rate())),
                    "x",
                    "convoy's own load generator, both to the leader",
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "wrk_test.rs"]
mod tests;
