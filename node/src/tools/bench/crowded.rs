//! (k) Writes in a crowded cluster (issue 37 §2): the `throughput` load (16 clients creating resources on the
//! leader) on the quiet cluster, then again once every object a token can create is there at its maximum
//! count while readers list everything in a loop (every page of every list route, on every server). What
//! it gives: the writes' p50 and p99 quiet and crowded, their ratio (the goal: p99 within 1.5x), and the
//! elections during the run (the leader's term before the crowd and after the crowded writes).
//!
//! The counts (`--crowded-scale` takes a fraction of them, at least one each): 1,000 maintenance windows
//! (their cap, half of them deny, half allow), 1,000 consumers of 10 nodes, each with a disruption budget
//! (one a consumer, their cap) and an active deployment (its nodes never report, so it stays active),
//! 1,000 tokens. Consumers, tokens and deployments have no cap: 1,000 is one whole list page of each.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};

use super::cluster;
use super::context::Ctx;
use super::load::{get_json, post_ok};
use super::throughput::{convoy_load, record_as};

/// The scenario's name in the results.
pub const SCENARIO: &str = "crowded";

/// Windows at full scale: their cap (`MAX_WINDOWS`).
const WINDOWS: usize = convoy_actors::domain::MAX_WINDOWS;
/// Consumers at full scale, each with a budget and an active deployment.
const CONSUMERS: usize = 1_000;
/// Nodes of each consumer.
const NODES: usize = 10;
/// Tokens at full scale.
const TOKENS: usize = 1_000;
/// Concurrent clients of the measured writes.
const WRITE_CLIENTS: usize = 16;
/// Concurrent readers listing everything.
const READERS: usize = 4;
/// Requests in flight while the crowd is created.
const FILLERS: usize = 16;
/// What the readers list, every page of each.
const LISTS: [(&str, &str); 8] = [
    ("/v1/windows", "windows"),
    ("/v1/consumers", "consumers"),
    ("/v1/resources", "resources"),
    ("/v1/deployments", "deployments"),
    ("/v1/tokens", "tokens"),
    ("/v1/groups", "groups"),
    ("/v1/group-deployments", "group_deployments"),
    ("/v1/nodes", "nodes"),
];

/// `full` objects at `scale`, at least one.
pub fn scaled(full: usize, scale: f64) -> usize {
    ((full as f64 * scale).round() as usize).clamp(1, full)
}

/// Sends `requests` (method, path, body) to `base`, [`FILLERS`] at a time; the first failure ends it.
async fn send_all(
    http: &reqwest::Client,
    base: &str,
    requests: Vec<(reqwest::Method, String, Value)>,
) -> anyhow::Result<()> {
    let mut answers = stream::iter(requests.into_iter().map(|(method, path, body)| {
        let url = format!("{base}{path}");
        async move {
            let answer = http
                .request(method, &url)
                .json(&body)
                .send()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let status = answer.status();
            if status.is_success() {
                Ok(())
            } else {
                let text = answer.text().await.unwrap_or_default();
                let text: String = text.chars().take(200).collect();
                Err(format!("{url}: {status} {text}"))
            }
        }
    }))
    .buffer_unordered(FILLERS);
    while let Some(answer) = answers.next().await {
        answer.map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

/// Creates the crowd on `base` at `scale`: consumers, then their budgets and deployments, windows, tokens.
async fn crowd(http: &reqwest::Client, base: &str, scale: f64) -> anyhow::Result<()> {
    use reqwest::Method;
    post_ok(
        http,
        &format!("{base}/v1/resources"),
        &json!({"name": "app"}),
    )
    .await
    .map_err(anyhow::Error::msg)?;
    post_ok(
        http,
        &format!("{base}/v1/resources/app/versions"),
        &json!({}),
    )
    .await
    .map_err(anyhow::Error::msg)?;
    let consumers: Vec<String> = (0..scaled(CONSUMERS, scale))
        .map(|i| format!("crowd-{i:04}"))
        .collect();
    let create = consumers.iter().map(|c| {
        let nodes: Vec<String> = (0..NODES).map(|n| format!("{c}-{n}")).collect();
        (
            Method::POST,
            "/v1/consumers".to_string(),
            json!({"name": c, "nodes": nodes}),
        )
    });
    send_all(http, base, create.collect()).await?;
    let budgets = consumers.iter().map(|c| {
        (
            Method::PUT,
            format!("/v1/consumers/{c}/budget"),
            json!({"max_unavailable": 1}),
        )
    });
    send_all(http, base, budgets.collect()).await?;
    let deployments = consumers.iter().map(|c| {
        (
            Method::POST,
            "/v1/deployments".to_string(),
            json!({"consumer": c, "resource": "app"}),
        )
    });
    send_all(http, base, deployments.collect()).await?;
    let windows = (0..scaled(WINDOWS, scale)).map(|i| {
        let (kind, schedule) = if i % 2 == 0 {
            ("deny", "0 3 * * 0")
        } else {
            ("allow", "*/5 * * * *")
        };
        let applies = &consumers[i % consumers.len()];
        (
            Method::POST,
            "/v1/windows".to_string(),
            json!({"name": format!("w-{i:04}"), "kind": kind, "schedule": schedule, "duration": "1m",
                   "applies_to": {"consumers": [applies]}}),
        )
    });
    send_all(http, base, windows.collect()).await?;
    let tokens = (0..scaled(TOKENS, scale)).map(|i| {
        (
            Method::POST,
            "/v1/tokens".to_string(),
            json!({"name": format!("crowd-{i:04}"), "role": "reader"}),
        )
    });
    send_all(http, base, tokens.collect()).await
}

/// Every page of every list of [`LISTS`] on `base` once; the pages read.
async fn list_everything(http: &reqwest::Client, base: &str) -> Result<u64, String> {
    let mut pages = 0;
    for (path, key) in LISTS {
        let mut offset = 0u64;
        loop {
            let page = get_json(http, &format!("{base}{path}?offset={offset}&limit=1000")).await?;
            pages += 1;
            let Some(items) = page[key].as_array() else {
                return Err(format!("{path}: no {key:?} in the page"));
            };
            // `GET /v1/nodes` says only its `total`.
            let end = offset + items.len() as u64;
            let next = page["next_offset"].as_u64().or_else(|| {
                page["total"]
                    .as_u64()
                    .filter(|t| end < *t && !items.is_empty())
                    .map(|_| end)
            });
            match next {
                Some(next) if next > offset => offset = next,
                _ => break,
            }
        }
    }
    Ok(pages)
}

/// The leader's term as `addr` sees it.
async fn term(http: &reqwest::Client, addr: &str) -> anyhow::Result<u64> {
    let c = get_json(http, &format!("http://{addr}/v1/cluster"))
        .await
        .map_err(anyhow::Error::msg)?;
    c["term"].as_u64().context("no term in /v1/cluster")
}

/// Runs the quiet and the crowded windows on one cluster.
pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    let scale = ctx.args.crowded_scale;
    let cluster = cluster::start(&ctx.dir(SCENARIO), cluster::options(ctx, 10_000)).await?;
    let leader = cluster::leader(&ctx.http, &cluster, Duration::from_secs(30)).await?;
    let addr = cluster::addr(&cluster, leader);
    let base = format!("http://{addr}");

    let before = term(&ctx.http, &addr).await?;
    let quiet = convoy_load(ctx, &addr, "quiet", WRITE_CLIENTS).await;
    record_as(&mut ctx.results, SCENARIO, "writes, quiet", &quiet);

    crowd(&ctx.http, &base, scale).await.context("the crowd")?;
    let servers: Vec<String> = cluster
        .servers
        .values()
        .map(|s| format!("http://{}", s.http_addr))
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let pages = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (http, stop, pages) = (ctx.http.clone(), stop.clone(), pages.clone());
            // Half the readers on the leader, the others on each server in turn.
            let base = if r % 2 == 0 {
                base.clone()
            } else {
                servers[r % servers.len()].clone()
            };
            tokio::spawn(async move {
                let mut failures = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    match list_everything(&http, &base).await {
                        Ok(n) => {
                            pages.fetch_add(n, Ordering::Relaxed);
                        }
                        Err(_) => {
                            failures += 1;
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                }
                failures
            })
        })
        .collect();
    let crowded = convoy_load(ctx, &addr, "crowded", WRITE_CLIENTS).await;
    stop.store(true, Ordering::Relaxed);
    let mut failures = 0;
    for r in readers {
        failures += r.await.unwrap_or(1);
    }
    let leader_now = cluster::leader(&ctx.http, &cluster, Duration::from_secs(30)).await?;
    let after = term(&ctx.http, &cluster::addr(&cluster, leader_now)).await?;
    record_as(
        &mut ctx.results,
        SCENARIO,
        "writes, crowded, readers listing everything",
        &crowded,
    );
    let objects = format!(
        "{} windows, {c} consumers of {NODES} nodes with a budget and an active deployment each, {} tokens",
        scaled(WINDOWS, scale),
        scaled(TOKENS, scale),
        c = scaled(CONSUMERS, scale),
    );
    let read = pages.load(Ordering::Relaxed);
    ctx.results.add(
        SCENARIO,
        format!("list pages read by {READERS} readers while writing"),
        Some(read as f64),
        "pages",
        format!("{objects}; {failures} failed walks"),
    );
    ctx.results.add(
        SCENARIO,
        "crowded p99 / quiet p99",
        super::report::ratio(crowded.percentile_ms(0.99), quiet.percentile_ms(0.99)),
        "x",
        "",
    );
    ctx.results.add(
        SCENARIO,
        "elections during the run",
        Some(after.saturating_sub(before) as f64),
        "",
        format!(
            "the leader's term {before} before the quiet writes, {after} after the crowded ones; leader {leader} then {leader_now}"
        ),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::scaled;

    #[test]
    fn a_scale_takes_a_fraction_of_each_count_at_least_one() {
        assert_eq!(scaled(1_000, 1.0), 1_000);
        assert_eq!(scaled(1_000, 0.01), 10);
        assert_eq!(scaled(1_000, 0.0001), 1);
        assert_eq!(scaled(1_000, 7.0), 1_000);
    }
}
