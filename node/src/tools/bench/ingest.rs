//! (b) Node-report ingest: a consumer of `--ingest-nodes` simulated agents, each report flipping the
//! node's current version (a change the leader must commit); changes accepted per second, and on a
//! sample of other nodes the time from a report to the node view showing it.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::load::{closed_loop, get_json, post_ok};
use super::{cluster, Ctx};
use crate::measure::percentile;

const SCENARIO: &str = "ingest";
const SAMPLE_NODES: usize = 100;

/// A report saying the node runs `current` (1 or 2) with both versions installed.
pub fn change_report(current: u8) -> Value {
    let done = json!({"downloaded": true, "installed": true, "done": true, "healthy": true});
    json!({"active": true, "resources": {"app": {"current": current, "versions": {"1": done, "2": done}}}})
}

/// Node ids `<prefix>-00000`, zero-padded so id order is number order.
pub fn padded_ids(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i:06}")).collect()
}

async fn applied_current(http: &reqwest::Client, addr: &str, node: &str) -> Option<u64> {
    let view = get_json(http, &format!("http://{addr}/v1/nodes/{node}"))
        .await
        .ok()?;
    view["resources"]["app"]["current"].as_u64()
}

/// Reports a change for sample nodes one after another and times each until the view shows it.
pub async fn sample_latencies(
    http: reqwest::Client,
    addr: String,
    nodes: Vec<String>,
    until: Instant,
) -> Vec<u64> {
    let mut out = Vec::new();
    let mut k = 0usize;
    while Instant::now() < until {
        let node = &nodes[k % nodes.len()];
        let current = 1 + ((k / nodes.len()) % 2) as u8;
        k += 1;
        let sent = Instant::now();
        let url = format!("http://{addr}/v1/nodes/{node}/report");
        if post_ok(&http, &url, &change_report(current)).await.is_err() {
            continue;
        }
        let deadline = sent + Duration::from_secs(10);
        while Instant::now() < deadline {
            if applied_current(&http, &addr, node).await == Some(u64::from(current)) {
                out.push(sent.elapsed().as_micros() as u64);
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    out
}

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

/// Adds the p50 and p99 rows of report → applied samples (µs) as `name p50` / `name p99`.
pub fn record_latencies(ctx: &mut Ctx, name: &str, latencies: Vec<u64>) {
    let note = format!(
        "{} samples: report, then poll GET /v1/nodes/{{id}} on the leader every 2 ms",
        latencies.len()
    );
    for (p_name, p) in [("p50", 0.5), ("p99", 0.99)] {
        let v = percentile(latencies.clone(), p).map(|us| us as f64 / 1000.0);
        ctx.results
            .add(SCENARIO, format!("{name} {p_name}"), v, "ms", note.clone());
    }
}

/// Every accepted change must become visible: after the queues drain, checks a spread of 200
/// nodes for the last change accepted for each (`last[i]`, 0 = none).
pub async fn check_applied(
    ctx: &mut Ctx,
    addr: &str,
    nodes: &[String],
    last: &[AtomicU8],
    name: &str,
) {
    tokio::time::sleep(Duration::from_secs(2)).await;
    let n = nodes.len();
    let (mut checked, mut missing) = (0, 0);
    for i in (0..n).step_by((n / 200).max(1)) {
        let want = last[i].load(Ordering::Relaxed);
        if want == 0 {
            continue;
        }
        checked += 1;
        if applied_current(&ctx.http, addr, &nodes[i]).await != Some(u64::from(want)) {
            missing += 1;
        }
    }
    ctx.results.add(
        SCENARIO,
        name,
        Some(missing as f64),
        "nodes",
        format!("of {checked} checked"),
    );
}
