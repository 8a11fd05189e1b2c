//! (d) Leader failover: SIGKILL the leader while writes and a deployment run, then time the first write
//! committed after the kill and the deployment's next progress event (the lab kills etcd's the same way).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::cluster;
use super::context::Ctx;
use super::load::{get_json, post_ok};
use super::report::Results;
use crate::measure::percentile;
use crate::sim::node::Behaviour;
use crate::sim::{node_ids, Fleet};

/// The scenario's name in the results.
pub const SCENARIO: &str = "failover";
const FLEET: usize = 30;

fn now_ms() -> u64 {
    convoy_time::Clock::wall_ms(&convoy_time::SystemClock)
}

/// Fires `probe(k)` every 20 ms from `start` until one succeeds; the ms from `start` to the earliest
/// success (whenever it was sent), or `None` after `timeout`.
pub async fn first_success<F, Fut>(start: Instant, timeout: Duration, probe: F) -> Option<u64>
where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = bool> + Send + 'static,
{
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    let mut ticker = tokio::time::interval(Duration::from_millis(20));
    let mut k = 0;
    loop {
        tokio::select! {
            Some(at) = rx.recv() => return Some(at.duration_since(start).as_millis() as u64),
            _ = ticker.tick() => {
                if start.elapsed() > timeout {
                    return None;
                }
                let fut = probe(k);
                k += 1;
                let tx = tx.clone();
                tokio::spawn(async move {
                    if fut.await {
                        let _ = tx.send(Instant::now());
                    }
                });
            }
        }
    }
}

/// A client of short probes (5 s), sending `token` if any.
pub fn probe_client(token: Option<&str>) -> reqwest::Client {
    reqwest::Client::builder()
        .default_headers(super::load::auth_headers(token))
        .timeout(Duration::from_secs(5))
        .connect_timeout(Duration::from_millis(500))
        .build()
        .expect("reqwest client")
}

/// The p50, p99 and max rows of `samples` (ms) for `who`: "SIGKILL leader → WHAT".
pub fn summarize(results: &mut Results, who: &str, what: &str, samples: &[u64], kills: usize) {
    let note = format!("{} of {kills} kills measured", samples.len());
    for (name, p) in [("p50", 0.5), ("p99", 0.99), ("max", 1.0)] {
        results.add(
            SCENARIO,
            format!("{who}: SIGKILL leader → {what}, {name}"),
            percentile(samples.to_vec(), p).map(|v| v as f64),
            "ms",
            note.clone(),
        );
    }
}

/// The ms from `kill_ms` to the first event of deployment `id` stamped after it, polling survivors.
async fn next_progress(
    http: &reqwest::Client,
    survivors: &[String],
    id: &str,
    kill_ms: u64,
) -> Option<u64> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut k = 0;
    while Instant::now() < deadline {
        let url = format!(
            "http://{}/v1/deployments/{id}",
            survivors[k % survivors.len()]
        );
        k += 1;
        if let Ok(d) = get_json(http, &url).await {
            let first = d["events"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["at"].as_u64())
                .filter(|&at| at > kill_ms)
                .min();
            if let Some(at) = first {
                return Some(at - kill_ms);
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

async fn convoy(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut cluster = cluster::start(&ctx.dir("failover"), cluster::options(ctx, 10_000)).await?;
    let api = Arc::new(cluster.api_client().with_patience(Duration::from_secs(30)));
    api.post::<_, Value>("/v1/resources", &json!({"name": "fo"}))
        .await?;
    api.post::<_, Value>("/v1/resources/fo/versions", &json!({}))
        .await?;
    let ids = node_ids("fo", FLEET);
    api.post::<_, Value>("/v1/consumers", &json!({"name": "fo", "nodes": ids}))
        .await?;
    let behaviour = Behaviour {
        download: Duration::from_millis(50),
        install: Duration::from_millis(150),
        fail_rate: 0.0,
    };
    let fleet = Fleet::spawn(
        api.clone(),
        ids,
        behaviour,
        Duration::from_millis(100),
        Some(("fo".into(), 1)),
    );
    let http = probe_client(Some(&ctx.token));
    let (mut writes, mut progress) = (Vec::new(), Vec::new());
    let kills = ctx.args.failovers;
    for round in 0..kills {
        let v: Value = api.post("/v1/resources/fo/versions", &json!({})).await?;
        let spec = json!({"consumer": "fo", "resource": "fo", "version": v["version"],
            "strategy": {"rolling": {"install_window": 1, "download_window": 1}}});
        let d: Value = api.post("/v1/deployments", &spec).await?;
        let id = d["id"].as_str().unwrap_or_default().to_string();
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let leader = cluster::leader(&ctx.http, &cluster, Duration::from_secs(30)).await?;
        let survivors: Vec<String> = cluster
            .servers
            .values()
            .filter(|s| s.id != leader)
            .map(|s| s.http_addr.clone())
            .collect();
        let (kill_ms, kill_at) = (now_ms(), Instant::now());
        cluster.get_mut(leader).expect("leader").kill();
        let write = {
            let (http, survivors) = (http.clone(), survivors.clone());
            first_success(kill_at, Duration::from_secs(20), move |k| {
                let url = format!(
                    "http://{}/v1/resources",
                    survivors[k as usize % survivors.len()]
                );
                let (http, body) = (http.clone(), json!({"name": format!("fo-{round}-{k}")}));
                async move { post_ok(&http, &url, &body).await.is_ok() }
            })
        };
        let (write, step) = tokio::join!(write, next_progress(&http, &survivors, &id, kill_ms));
        println!(
            "  convoy kill {round}: leader {leader}; write {write:?} ms, progress {step:?} ms"
        );
        writes.extend(write);
        progress.extend(step);
        let _ = api
            .post::<_, Value>(&format!("/v1/deployments/{id}/abort"), &json!({}))
            .await;
        cluster.restart(leader)?;
        cluster::wait_ready(
            &ctx.http,
            &cluster::addr(&cluster, leader),
            Duration::from_secs(60),
        )
        .await?;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    fleet.stop().await;
    summarize(
        &mut ctx.results,
        "convoy",
        "first committed write",
        &writes,
        kills,
    );
    summarize(
        &mut ctx.results,
        "convoy",
        "next deployment progress",
        &progress,
        kills,
    );
    Ok(())
}

/// Kills the leader `--failovers` times (the lab does the same to etcd).
pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    convoy(ctx).await
}
