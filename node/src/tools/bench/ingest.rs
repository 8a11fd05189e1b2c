//! (b) Node-report ingest: a consumer of `--ingest-nodes` simulated agents, each report flipping the
//! node's current version (a change the leader must commit); changes accepted per second, and on a
//! sample of other nodes the time from a report to the node view showing it.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::cluster;
use super::context::Ctx;
use super::ingest_check::{
    change_report, check_applied, padded_ids, record_latencies, sample_latencies, SCENARIO,
};
use super::load::{closed_loop, post_ok};

const SAMPLE_NODES: usize = 100;

/// Runs the ingest load for `--duration` with the largest `--clients` level.
pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    let n = ctx.args.ingest_nodes;
    let clients = ctx.args.clients.iter().copied().max().unwrap_or(64).min(n);
    let cluster = cluster::start(&ctx.dir("ingest"), cluster::options(ctx, 10_000)).await?;
    let leader = cluster::leader(&ctx.http, &cluster, Duration::from_secs(30)).await?;
    let addr = cluster::addr(&cluster, leader);
    let base = format!("http://{addr}");
    post_ok(
        &ctx.http,
        &format!("{base}/v1/resources"),
        &json!({"name": "app"}),
    )
    .await
    .map_err(anyhow::Error::msg)?;
    for _ in 0..2 {
        post_ok(
            &ctx.http,
            &format!("{base}/v1/resources/app/versions"),
            &json!({}),
        )
        .await
        .map_err(anyhow::Error::msg)?;
    }
    let nodes = Arc::new(padded_ids("in", n));
    let sample = padded_ids("sample", SAMPLE_NODES);
    let all: Vec<&String> = nodes.iter().chain(sample.iter()).collect();
    post_ok(
        &ctx.http,
        &format!("{base}/v1/consumers"),
        &json!({"name": "ingest", "nodes": all}),
    )
    .await
    .map_err(anyhow::Error::msg)?;

    let last: Arc<Vec<AtomicU8>> = Arc::new((0..n).map(|_| AtomicU8::new(0)).collect());
    let sampler = tokio::spawn(sample_latencies(
        ctx.http.clone(),
        addr.clone(),
        sample,
        Instant::now() + ctx.args.duration,
    ));
    let (http, url_base, l, ns) = (
        ctx.http.clone(),
        Arc::new(base.clone()),
        last.clone(),
        nodes.clone(),
    );
    let r = closed_loop(clients, ctx.args.duration, move |c, seq| {
        let (http, url_base, last, nodes) = (http.clone(), url_base.clone(), l.clone(), ns.clone());
        // Client c owns nodes c, c + clients, c + 2 clients, ...: no two clients report one node.
        let per = (n - c).div_ceil(clients);
        let i = c + (seq as usize % per) * clients;
        let current = 1 + ((seq as usize / per) % 2) as u8;
        async move {
            let url = format!("{url_base}/v1/nodes/{}/report", nodes[i]);
            post_ok(&http, &url, &change_report(current)).await?;
            last[i].store(current, Ordering::Relaxed);
            Ok(())
        }
    })
    .await;
    let latencies = sampler.await.unwrap_or_default();
    let note = format!("{n} nodes in one consumer, {clients} clients to the leader; each report flips the node's current version. {}", r.error_note());
    ctx.results.add(
        SCENARIO,
        "node changes accepted/s",
        Some(r.rate()),
        "changes/s",
        note,
    );
    ctx.results.add(
        SCENARIO,
        "report round trip p50",
        r.percentile_ms(0.5),
        "ms",
        "",
    );
    ctx.results.add(
        SCENARIO,
        "report round trip p99",
        r.percentile_ms(0.99),
        "ms",
        "",
    );
    record_latencies(ctx, "report → applied", latencies);
    check_applied(
        ctx,
        &addr,
        &nodes,
        &last,
        "accepted changes not applied after 2 s",
    )
    .await;
    if ctx.args.ingest_batch > 0 {
        let batch = ctx.args.ingest_batch;
        super::ingest_batched::run(ctx, &base, &addr, n * 10, batch).await?;
    }
    Ok(())
}
