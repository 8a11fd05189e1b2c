//! (g) Large state: a fleet of `--state-nodes` nodes (default 1,000,000; each has reported one
//! resource, ≥ 120 MB of snapshot) on a 3-server cluster: the snapshot's size and build time, the
//! restart of a follower from its snapshot file, and a wiped follower (removed, then a new member
//! with an empty data dir) catching up from the leader's snapshot streamed in 4 MiB chunks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::json;

use super::context::Ctx;
use super::ingest_check::change_report;
use super::load::{fixed_count, get_json, post_ok, post_text};
use super::{cluster, relay};

const SCENARIO: &str = "large-state";
/// Nodes per consumer (one `POST /v1/consumers` each).
const PER_CONSUMER: usize = 10_000;
/// Reports per `POST /v1/nodes/reports`.
const BATCH: usize = 1_000;
/// Entries between snapshots: the fill is a few thousand entries, so one or two snapshots.
const SNAPSHOT_EVERY: u64 = 1_000;

fn node_id(consumer: usize, i: usize) -> String {
    // Hostname-like ids (42 bytes), as fleets name their machines.
    format!("host-{consumer:04}-{i:05}.eu-west-1.fleet.example.com")
}

/// The `ms` and `bytes` of the last line containing `what` in server `id`'s log.
fn last_line(cluster: &crate::local::Cluster, id: u64, what: &str) -> Option<(u64, u64)> {
    let log = std::fs::read_to_string(cluster.get(id)?.log_path()).ok()?;
    let field = |line: &str, key: &str| -> Option<u64> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
    };
    log.lines()
        .map(cluster::strip_ansi)
        .filter(|l| l.contains(what))
        .filter_map(|l| Some((field(&l, "ms")?, field(&l, "bytes")?)))
        .next_back()
}

/// The worst restart the shipped snapshot policy allows: the follower `id` keeps its large-state
/// snapshot plus `--state-log-entries` entries after it (the default `snapshot_max_every`), then
/// restarts. It is first restarted with an interval past those entries, so that it builds no
/// snapshot meanwhile; each write is a new resource.
async fn restart_with_long_log(
    ctx: &mut Ctx,
    cluster: &mut crate::local::Cluster,
    id: u64,
    base: &str,
) -> anyhow::Result<()> {
    let (n, entries) = (ctx.args.state_nodes, ctx.args.state_log_entries);
    let http = ctx.http.clone();
    let config = cluster.dir().join(format!("server-{id}.toml"));
    let text = std::fs::read_to_string(&config)?;
    let never = entries * 2 + 100_000;
    let text: String = text
        .lines()
        .map(|l| match l.split('=').next().map(str::trim) {
            Some("snapshot_every") => format!("snapshot_every = {never}\n"),
            Some("snapshot_max_every") => format!("snapshot_max_every = {never}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&config, text)?;
    cluster.get_mut(id).context("follower")?.kill();
    cluster.restart(id)?;
    let follower = cluster::addr(cluster, id);
    cluster::wait_ready(&http, &follower, Duration::from_secs(600)).await?;
    let from = last_applied(&http, &follower).await.unwrap_or(0);
    let t = Instant::now();
    let (h, url) = (http.clone(), Arc::new(format!("{base}/v1/resources")));
    // Proposals are batched into entries, so write until the follower's index has moved enough.
    let mut written = 0u64;
    while last_applied(&http, &follower).await.unwrap_or(0) < from + entries {
        anyhow::ensure!(
            t.elapsed() < Duration::from_secs(3600),
            "{entries} entries not written in an hour"
        );
        let (h, url, start) = (h.clone(), url.clone(), written);
        let chunk = 100_000;
        let done = fixed_count(256, chunk, Duration::from_secs(600), move |i| {
            let (http, url) = (h.clone(), url.clone());
            async move {
                post_ok(&http, &url, &json!({"name": format!("log{}", start + i)}))
                    .await
                    .map(drop)
            }
        })
        .await;
        anyhow::ensure!(done.ok > 0, "{}", done.error_note());
        written += chunk;
    }
    let now = last_applied(&http, &follower).await.unwrap_or(0);
    eprintln!(
        "  {} entries ({written} writes) after the snapshot, in {:.0} s",
        now - from,
        t.elapsed().as_secs_f64()
    );
    cluster.get_mut(id).context("follower")?.kill();
    let t = Instant::now();
    cluster.restart(id)?;
    cluster::wait_ready(&http, &follower, Duration::from_secs(600)).await?;
    ctx.results.add(
        SCENARIO,
        format!("restart one follower, {n} nodes + {} log entries", now - from),
        Some(t.elapsed().as_secs_f64()),
        "s",
        format!("{written} resources written after its snapshot; SIGKILL, spawn, until GET /readyz = 200"),
    );
    Ok(())
}

/// The last applied index server `addr` reports.
async fn last_applied(http: &reqwest::Client, addr: &str) -> Option<u64> {
    get_json(http, &format!("http://{addr}/v1/cluster"))
        .await
        .ok()?["last_applied"]
        .as_u64()
}

/// Fills the state, then times a follower's restart and a wiped follower's catch-up.
pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    let n = ctx.args.state_nodes;
    let consumers = n.div_ceil(PER_CONSUMER);
    let mut options = cluster::options(ctx, SNAPSHOT_EVERY);
    // A fixed interval: the snapshot measured must come SNAPSHOT_EVERY entries after the fill,
    // not after the many more a large state's snapshot would otherwise wait for.
    options.snapshot_max_every = Some(SNAPSHOT_EVERY);
    options.log_filter = format!("{},convoy_raft::network::client=info", options.log_filter);
    // Adding a member waits for it to catch up within 2/3 of this (under the 30 s HTTP deadline).
    options.request_timeout_ms = Some(29_000);
    let dir = ctx.dir("large-state");
    let mut cluster = cluster::start(&dir, options).await?;
    let leader = cluster::leader(&ctx.http, &cluster, Duration::from_secs(30)).await?;
    let addr = cluster::addr(&cluster, leader);
    let base = format!("http://{addr}");
    let http = ctx.http.clone();
    post_ok(
        &http,
        &format!("{base}/v1/resources"),
        &json!({"name": "app"}),
    )
    .await
    .map_err(anyhow::Error::msg)?;
    post_ok(
        &http,
        &format!("{base}/v1/resources/app/versions"),
        &json!({}),
    )
    .await
    .map_err(anyhow::Error::msg)?;

    let t = Instant::now();
    let (h, url) = (http.clone(), Arc::new(format!("{base}/v1/consumers")));
    let made = fixed_count(4, consumers as u64, Duration::from_secs(1800), move |c| {
        let (http, url) = (h.clone(), url.clone());
        async move {
            let c = c as usize;
            let size = PER_CONSUMER.min(n - c * PER_CONSUMER);
            let nodes: Vec<String> = (0..size).map(|i| node_id(c, i)).collect();
            let body = json!({"name": format!("fleet{c:04}"), "nodes": nodes});
            post_ok(&http, &url, &body).await.map(drop)
        }
    })
    .await;
    anyhow::ensure!(
        made.ok == consumers as u64,
        "consumers: {}",
        made.error_note()
    );
    let report = change_report(1).to_string();
    let (h, url, r) = (
        http.clone(),
        Arc::new(format!("{base}/v1/nodes/reports")),
        Arc::new(report),
    );
    let batches = n.div_ceil(BATCH) as u64;
    let reported = fixed_count(16, batches, Duration::from_secs(3600), move |b| {
        let (http, url, report) = (h.clone(), url.clone(), r.clone());
        async move {
            let ids: Vec<String> = (b as usize * BATCH..((b as usize + 1) * BATCH).min(n))
                .map(|k| node_id(k / PER_CONSUMER, k % PER_CONSUMER))
                .collect();
            let body = relay::batch_body(ids.iter().map(|id| (id.as_str(), report.as_str())));
            post_text(&http, &url, body).await.map(drop)
        }
    })
    .await;
    anyhow::ensure!(reported.ok == batches, "reports: {}", reported.error_note());
    ctx.results.add(
        SCENARIO,
        format!("fill {n} nodes"),
        Some(t.elapsed().as_secs_f64()),
        "s",
        format!(
            "{consumers} consumers of {PER_CONSUMER} nodes, then one report per node ({BATCH} per request)"
        ),
    );

    // Enough small writes that a snapshot is built after the whole fleet is in the state (the
    // fill's own entries may have triggered one mid-way).
    let filled = last_applied(&http, &addr).await.unwrap_or(0);
    let (h, url) = (http.clone(), Arc::new(format!("{base}/v1/resources")));
    let pad = fixed_count(
        64,
        SNAPSHOT_EVERY + 100,
        Duration::from_secs(600),
        move |i| {
            let (http, url) = (h.clone(), url.clone());
            async move {
                post_ok(&http, &url, &json!({"name": format!("pad{i}")}))
                    .await
                    .map(drop)
            }
        },
    )
    .await;
    anyhow::ensure!(pad.errors == 0 || pad.ok > 0, "{}", pad.error_note());
    let wanted = (filled / SNAPSHOT_EVERY + 1) as usize;
    let wait_snapshot = Instant::now() + Duration::from_secs(600);
    let (bytes, build_ms) = loop {
        let log = cluster
            .get(leader)
            .and_then(|s| std::fs::read_to_string(s.log_path()).ok())
            .unwrap_or_default();
        let built = cluster::snapshot_lines(&log);
        if built.len() >= wanted {
            break built[built.len() - 1];
        }
        anyhow::ensure!(Instant::now() < wait_snapshot, "no snapshot built");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    ctx.results.add(
        SCENARIO,
        format!("snapshot of {n} nodes"),
        Some(bytes as f64 / 1e6),
        "MB",
        format!(
            "{:.0} B/node; built in {build_ms} ms (leader's log)",
            bytes as f64 / n as f64
        ),
    );
    if let Some(rss) = cluster
        .get(leader)
        .and_then(|s| s.pid())
        .and_then(cluster::rss_kib)
    {
        ctx.results.add(
            SCENARIO,
            format!("leader RSS with {n} nodes"),
            Some(rss as f64 / 1024.0),
            "MiB",
            format!("{:.0} B/node", rss as f64 * 1024.0 / n as f64),
        );
    }

    // A follower restarts from its snapshot file (plus the log after it).
    let followers: Vec<u64> = cluster
        .servers
        .keys()
        .copied()
        .filter(|id| *id != leader)
        .collect();
    let (restarted, wiped) = (followers[0], followers[1]);
    cluster.get_mut(restarted).context("follower")?.kill();
    let t = Instant::now();
    cluster.restart(restarted)?;
    cluster::wait_ready(
        &http,
        &cluster::addr(&cluster, restarted),
        Duration::from_secs(600),
    )
    .await?;
    let restore = last_line(&cluster, restarted, "restored the state from the snapshot")
        .map(|(ms, _)| format!("; restoring the snapshot file took {ms} ms (its log)"))
        .unwrap_or_default();
    ctx.results.add(
        SCENARIO,
        format!("restart one follower, {n} nodes"),
        Some(t.elapsed().as_secs_f64()),
        "s",
        format!("SIGKILL, spawn, until GET /readyz = 200{restore}"),
    );

    if ctx.args.state_log_entries > 0 {
        restart_with_long_log(ctx, &mut cluster, restarted, &base).await?;
    }

    // A wiped follower: removed, and a new member with an empty data dir added in its place.
    cluster.get_mut(wiped).context("follower")?.kill();
    let removed = http
        .delete(format!("{base}/v1/cluster/members/{wiped}"))
        .send()
        .await?;
    anyhow::ensure!(
        removed.status().is_success(),
        "removing {wiped}: {}",
        removed.status()
    );
    cluster.forget(wiped);
    let joiner = 4;
    let (raft_addr, http_addr) = cluster.spawn_joiner(joiner)?;
    let target = last_applied(&http, &addr).await.unwrap_or(0);
    let t = Instant::now();
    // Adding waits for the new member to catch up: longer than the load client's timeout.
    let patient = reqwest::Client::builder()
        .default_headers(super::load::auth_headers(Some(&ctx.token)))
        .timeout(Duration::from_secs(120))
        .build()?;
    post_ok(
        &patient,
        &format!("{base}/v1/cluster/members"),
        &json!({"id": joiner, "raft_addr": raft_addr, "http_addr": http_addr}),
    )
    .await
    .map_err(anyhow::Error::msg)?;
    let deadline = Instant::now() + Duration::from_secs(600);
    while last_applied(&http, &http_addr).await.unwrap_or(0) < target {
        anyhow::ensure!(Instant::now() < deadline, "server {joiner} never caught up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let caught_up = t.elapsed();
    let digest = |addr: String| {
        let http = http.clone();
        async move {
            get_json(&http, &format!("http://{addr}/v1/cluster/digest"))
                .await
                .ok()
                .map(|d| (d["last_applied"].clone(), d["sha256"].clone()))
        }
    };
    let same = digest(addr.clone()).await == digest(http_addr.clone()).await;
    let sent = last_line(&cluster, leader, "sent a snapshot")
        .map(|(ms, bytes)| format!("; streaming {bytes} bytes took {ms} ms (leader's log)"))
        .unwrap_or_default();
    ctx.results.add(
        SCENARIO,
        format!("wiped follower catches up, {n} nodes"),
        Some(caught_up.as_secs_f64()),
        "s",
        format!(
            "POST /v1/cluster/members → its last_applied reaches the leader's; digest equal: {same}{sent}"
        ),
    );
    Ok(())
}
