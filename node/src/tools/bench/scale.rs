//! (f) Scale: RSS per server, state and snapshot size with 100,000 nodes (after a rollout of them),
//! and (`restart`) restart time with `--log-entries` entries kept in the log (no snapshot to start from).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::context::{Agents, Ctx};
use super::load::{fixed_count, post_ok};
use super::{cluster, rollout};

const SCENARIO: &str = "restart";
const NODES: usize = 100_000;

fn dir_bytes(path: &std::path::Path) -> u64 {
    std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Writes `--log-entries` entries with snapshots out of reach, then restarts a follower and the whole
/// cluster, timing each until `/readyz`.
pub async fn restart(ctx: &mut Ctx) -> anyhow::Result<()> {
    let entries = ctx.args.log_entries;
    let dir = ctx.dir("restart");
    let mut cluster = cluster::start(&dir, cluster::options(ctx, entries * 2 + 100_000)).await?;
    let leader = cluster::leader(&ctx.http, &cluster, Duration::from_secs(30)).await?;
    let url = Arc::new(format!(
        "http://{}/v1/resources",
        cluster::addr(&cluster, leader)
    ));
    let h = ctx.http.clone();
    let written = fixed_count(256, entries, Duration::from_secs(1800), move |i| {
        let (http, url) = (h.clone(), url.clone());
        async move {
            post_ok(&http, &url, &json!({"name": format!("e{i}")}))
                .await
                .map(|_| ())
        }
    })
    .await;
    ctx.results.add(
        SCENARIO,
        format!("write {entries} entries"),
        Some(written.elapsed.as_secs_f64()),
        "s",
        format!(
            "{:.0} writes/s, 256 clients; one resource per entry; {}",
            written.rate(),
            written.error_note()
        ),
    );
    let follower = cluster
        .servers
        .values()
        .find(|s| s.id != leader)
        .map(|s| s.id)
        .unwrap_or(1);
    let disk = dir_bytes(&dir.join(format!("data/{follower}")));
    ctx.results.add(
        SCENARIO,
        "data dir of one server",
        Some(disk as f64 / 1e6),
        "MB",
        format!("{} entries in the log", written.ok + 3),
    );

    cluster.get_mut(follower).expect("follower").kill();
    let t = Instant::now();
    cluster.restart(follower)?;
    cluster::wait_ready(
        &ctx.http,
        &cluster::addr(&cluster, follower),
        Duration::from_secs(600),
    )
    .await?;
    ctx.results.add(
        SCENARIO,
        format!("restart one follower, {entries} entries in the log"),
        Some(t.elapsed().as_secs_f64()),
        "s",
        "SIGKILL, spawn, until GET /readyz = 200",
    );
    let ids: Vec<u64> = cluster.servers.values().map(|s| s.id).collect();
    for id in &ids {
        cluster.get_mut(*id).expect("server").kill();
    }
    let t = Instant::now();
    for id in &ids {
        cluster.restart(*id)?;
    }
    for id in &ids {
        cluster::wait_ready(
            &ctx.http,
            &cluster::addr(&cluster, *id),
            Duration::from_secs(600),
        )
        .await?;
    }
    ctx.results.add(
        SCENARIO,
        format!("restart the whole cluster, {entries} entries in the log"),
        Some(t.elapsed().as_secs_f64()),
        "s",
        "SIGKILL all three, spawn all, until every GET /readyz = 200",
    );
    Ok(())
}

/// The 100k measurements, unless `rollout` took them already.
pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    if !ctx.scale_measured {
        let (cluster, rss) = rollout::one(ctx, NODES, Agents::Relay).await?;
        rollout::measure_scale(ctx, &cluster, &rss, NODES).await?;
        ctx.scale_measured = true;
    }
    Ok(())
}
