//! (j) What one agent token's report flood costs the other writes: the `throughput` load (16 clients
//! creating resources on the leader) alone, then again while one agent token (bound to its consumer)
//! sends reports at the API's limit (60 published versions, each with a 1,024-byte error that changes
//! every time, so every report is a change for the log: about 62 KB per report, under the 64 KiB budget)
//! for its 200 nodes from 32 clients, twice: clients that retry 10 ms after a refusal whatever the server
//! says (an attacker's), then clients that wait out `Retry-After` as `convoy agent` does. The p99 of the
//! other writes under each flood against the quiet one. The flood's clients run on a runtime (one thread)
//! of their own, apart from the measured writes' clients.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::web::Bytes;
use anyhow::Context;
use serde_json::{json, Map, Value};

use super::cluster;
use super::context::Ctx;
use super::load::{closed_loop, http_client, post_ok, LoadResult};
use super::throughput::{convoy_load, record_as};

/// The scenario's name in the results.
pub const SCENARIO: &str = "report-flood";

/// Nodes of the flooding agent's consumer.
const FLOOD_NODES: usize = 200;
/// Published versions each report names.
const VERSIONS: u64 = 60;
/// Concurrent flooding clients.
const FLOOD_CLIENTS: usize = 32;
/// Concurrent clients of the other writes.
const WRITE_CLIENTS: usize = 16;
/// Distinct report bodies, made before the flood and taken in turn: a node's next report always differs
/// from its last (so each is a change), and the bench's own CPU goes to sending, not to writing JSON.
const BODIES: u64 = 64;

/// One report at the API's limit for node `c`'s round `seq`: every version failed with a 1,024-byte
/// error naming the round, so each report changes the node's state.
fn report(seq: u64) -> Value {
    let versions: Map<String, Value> = (1..=VERSIONS)
        .map(|v| {
            let head = format!("round {seq} version {v}: ");
            let error = format!("{head}{}", "x".repeat(1024 - head.len()));
            (
                v.to_string(),
                json!({"downloaded": true, "done": true, "error": error}),
            )
        })
        .collect();
    json!({"resources": {"app": {"versions": versions}}})
}

/// Runs the quiet and the flooded windows on one cluster.
pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    let cluster = cluster::start(&ctx.dir(SCENARIO), cluster::options(ctx, 10_000)).await?;
    let leader = cluster::leader(&ctx.http, &cluster, std::time::Duration::from_secs(30)).await?;
    let addr = cluster::addr(&cluster, leader);
    let base = format!("http://{addr}");
    let http = &ctx.http;
    post_ok(
        http,
        &format!("{base}/v1/resources"),
        &json!({"name": "app"}),
    )
    .await
    .map_err(anyhow::Error::msg)?;
    for v in 1..=VERSIONS {
        post_ok(
            http,
            &format!("{base}/v1/resources/app/versions"),
            &json!({"label": v.to_string()}),
        )
        .await
        .map_err(anyhow::Error::msg)?;
    }
    let nodes: Vec<String> = (0..FLOOD_NODES).map(|i| format!("flood-{i}")).collect();
    post_ok(
        http,
        &format!("{base}/v1/consumers"),
        &json!({"name": "flood", "nodes": nodes}),
    )
    .await
    .map_err(anyhow::Error::msg)?;
    ctx.http
        .put(format!("{base}/v1/consumers/flood/subscriptions/app"))
        .json(&json!({}))
        .send()
        .await?
        .error_for_status()?;
    let created = post_ok(
        http,
        &format!("{base}/v1/tokens"),
        &json!({"name": "flood-agent", "role": "agent", "nodes": "flood-*", "consumers": ["flood"]}),
    )
    .await
    .map_err(anyhow::Error::msg)?;
    let created: Value = serde_json::from_slice(&created)?;
    let secret = created["secret"].as_str().context("no secret")?.to_string();

    let quiet = convoy_load(ctx, &addr, "quiet", WRITE_CLIENTS).await;
    record_as(&mut ctx.results, SCENARIO, "writes, quiet", &quiet);

    let bodies: Arc<Vec<Bytes>> = Arc::new(
        (0..BODIES)
            .map(|seq| Bytes::from(report(seq).to_string()))
            .collect(),
    );
    let flood_base = Arc::new(base.clone());
    for (honours, who) in [
        (false, "ignoring Retry-After"),
        (true, "honouring Retry-After"),
    ] {
        // The flood runs on a runtime of its own (one thread): its tasks never queue the measured
        // writes' tasks behind them in this process, so the p99 is the servers', not the bench's.
        let (secret, base, bodies, duration) = (
            secret.clone(),
            flood_base.clone(),
            bodies.clone(),
            ctx.args.duration,
        );
        let flooding = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map(|rt| {
                    rt.block_on(flood(
                        http_client(Some(&secret)),
                        base,
                        bodies,
                        duration,
                        honours,
                    ))
                })
        });
        let flooded = convoy_load(ctx, &addr, &format!("flooded-{honours}"), WRITE_CLIENTS).await;
        let (taken, refused) = tokio::task::spawn_blocking(move || flooding.join())
            .await?
            .map_err(|_| anyhow::anyhow!("the flood's thread panicked"))??;
        record_as(
            &mut ctx.results,
            SCENARIO,
            &format!("writes, under a flood {who}"),
            &flooded,
        );
        let secs = taken.elapsed.as_secs_f64().max(f64::EPSILON);
        ctx.results.add(
            SCENARIO,
            format!("flood {who}, {FLOOD_CLIENTS} clients: reports/s taken (~62 KB each)"),
            Some(taken.rate()),
            "ops/s",
            format!("{:.0} refused/s with 429", refused as f64 / secs),
        );
        let ratio = match (flooded.percentile_ms(0.99), quiet.percentile_ms(0.99)) {
            (Some(f), Some(q)) if q > 0.0 => Some(f / q),
            _ => None,
        };
        ctx.results.add(
            SCENARIO,
            format!("p99 under the flood {who} / quiet p99"),
            ratio,
            "x",
            "",
        );
    }
    Ok(())
}

/// One flood of [`FLOOD_CLIENTS`] closed-loop clients for `duration`: what was taken, and how many
/// requests were refused with 429. A client that `honours` the answer waits out its `Retry-After` (as
/// `convoy agent` does); one that does not retries 10 ms later, as an attacker would.
async fn flood(
    agent: reqwest::Client,
    base: Arc<String>,
    bodies: Arc<Vec<Bytes>>,
    duration: Duration,
    honours: bool,
) -> (LoadResult, u64) {
    let refused = Arc::new(AtomicU64::new(0));
    let counted = refused.clone();
    let taken = closed_loop(FLOOD_CLIENTS, duration, move |c, seq| {
        let (agent, base, refused) = (agent.clone(), base.clone(), counted.clone());
        let node = (c + FLOOD_CLIENTS * seq as usize) % FLOOD_NODES;
        let body = bodies[(seq % BODIES) as usize].clone();
        async move {
            let url = format!("{base}/v1/nodes/flood-{node}/report");
            let answer = agent
                .post(&url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body)
                .send()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let status = answer.status();
            if status.is_success() {
                answer.bytes().await.map_err(|e| format!("{url}: {e}"))?;
                return Ok(());
            }
            if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
                refused.fetch_add(1, Ordering::Relaxed);
                let wait = retry_after(answer.headers());
                if honours {
                    tokio::time::sleep(wait).await;
                }
            }
            Err(format!("{url}: {status}"))
        }
    })
    .await;
    (taken, refused.load(Ordering::Relaxed))
}

/// The `Retry-After` of an answer in seconds (1 s when absent or unreadable, as `convoy agent` reads it).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Duration {
    let secs = headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    Duration::from_secs(secs.clamp(1, 60))
}
