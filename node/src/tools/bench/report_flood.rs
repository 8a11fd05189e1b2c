//! (j) What one agent token's report flood costs the other writes: the `throughput` load (16 clients
//! creating resources on the leader) alone, then again while one agent token (bound to its consumer)
//! sends reports at the API's limit (60 published versions, each with a 1,024-byte error that changes
//! every time, so every report is a change for the log: about 62 KB per report, under the 64 KiB budget)
//! for its 200 nodes from 32 clients. The p99 of the other writes under the flood against the quiet one.

use std::sync::Arc;

use anyhow::Context;
use serde_json::{json, Map, Value};

use super::cluster;
use super::context::Ctx;
use super::load::{closed_loop, http_client, post_ok};
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

    let agent = http_client(Some(&secret));
    let flood_base = Arc::new(base.clone());
    let flood = tokio::spawn(closed_loop(
        FLOOD_CLIENTS,
        ctx.args.duration,
        move |c, seq| {
            let (agent, base) = (agent.clone(), flood_base.clone());
            let node = (c + FLOOD_CLIENTS * seq as usize) % FLOOD_NODES;
            let body = report(seq);
            async move {
                post_ok(
                    &agent,
                    &format!("{base}/v1/nodes/flood-{node}/report"),
                    &body,
                )
                .await
                .map(|_| ())
            }
        },
    ));
    let flooded = convoy_load(ctx, &addr, "flooded", WRITE_CLIENTS).await;
    let flood = flood.await?;
    record_as(
        &mut ctx.results,
        SCENARIO,
        "writes, under the flood",
        &flooded,
    );
    ctx.results.add(
        SCENARIO,
        format!("flood, {FLOOD_CLIENTS} clients: reports/s (~62 KB each)"),
        Some(flood.rate()),
        "ops/s",
        flood.error_note(),
    );
    let ratio = match (flooded.percentile_ms(0.99), quiet.percentile_ms(0.99)) {
        (Some(f), Some(q)) if q > 0.0 => Some(f / q),
        _ => None,
    };
    ctx.results
        .add(SCENARIO, "p99 under the flood / quiet p99", ratio, "x", "");
    Ok(())
}
