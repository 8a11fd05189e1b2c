//! What both phases of the ingest scenario (per node, `ingest.rs`; batched, `ingest_batched.rs`) share:
//! the report that changes a node, padded node ids, and the checks that reports were applied.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::context::Ctx;
use super::load::{get_json, post_ok};
use crate::measure::percentile;

/// The scenario's name in the results.
pub const SCENARIO: &str = "ingest";

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
