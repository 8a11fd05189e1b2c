//! (c) Rolling deployments of 10,000 and 100,000 nodes (install window 1,000) driven by instant
//! simulated agents, many virtual nodes per task: wall time and scheduler overhead per node. With
//! `scale` chosen, the 100k cluster is also measured: RSS per server, state size, snapshot build.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::cluster;
use super::context::{Agents, Ctx, Scenario};
use super::ingest_check::padded_ids;
use super::load::{fixed_count, get_json, post_ok, register_consumer, LoadResult};
use super::relay;
use crate::local::{Cluster, ClusterOptions};

const SCENARIO: &str = "rollout";
const WORKERS: usize = 256;

/// A report of a node on `current`, holding every version up to it installed.
pub fn node_report(current: u64) -> Value {
    let done = json!({"downloaded": true, "installed": true, "done": true, "healthy": true});
    let versions: serde_json::Map<String, Value> = (1..=current)
        .map(|v| (v.to_string(), done.clone()))
        .collect();
    json!({"active": true, "resources": {"roll": {"current": current, "versions": versions}}})
}

/// Whether a node's targets (`answer["targets"]` of its report) let it install `version` of `roll`.
pub fn may_install(targets: &Value, version: u64) -> bool {
    let t = &targets["roll"];
    t["version"].as_u64() == Some(version) && t["install"].as_bool() == Some(true)
}

fn e(s: String) -> anyhow::Error {
    anyhow::Error::msg(s)
}

async fn wait_status(
    http: &reqwest::Client,
    base: &str,
    want: &str,
    limit: Duration,
) -> anyhow::Result<String> {
    let deadline = Instant::now() + limit;
    loop {
        let list = get_json(http, &format!("{base}/v1/deployments?consumer=roll"))
            .await
            .map_err(e)?;
        let status = list[0]["status"].as_str().unwrap_or("").to_string();
        if status == want || ["ROLLED_BACK", "ABORTED", "FAILED"].contains(&status.as_str()) {
            return Ok(status);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "deployment still {status} after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Relays for `Agents::Relay`, and how many nodes each keeps in play.
const RELAYS: usize = 8;
const FRONTIER: usize = 500;

/// Instant agents, one HTTP request per report: 256 tasks claim nodes in order; each node reports
/// version 1 (answered with its targets) until allowed to install 2, then at once reports 2
/// installed and healthy. Every target poll is counted in `polls`.
fn per_node_agents(
    http: reqwest::Client,
    base: String,
    nodes: Arc<Vec<String>>,
    polls: Arc<AtomicU64>,
) -> impl std::future::Future<Output = LoadResult> {
    let base = Arc::new(base);
    let n = nodes.len() as u64;
    fixed_count(WORKERS, n, Duration::from_secs(1800), move |i| {
        let (http, base, nodes, polls) = (http.clone(), base.clone(), nodes.clone(), polls.clone());
        async move {
            let url = format!("{base}/v1/nodes/{}/report", nodes[i as usize]);
            let deadline = Instant::now() + Duration::from_secs(120);
            loop {
                let answer = post_ok(&http, &url, &node_report(1)).await?;
                polls.fetch_add(1, Ordering::Relaxed);
                let answer: Value = serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
                if may_install(&answer["targets"], 2) {
                    // An instant agent: installed and healthy in the same breath.
                    post_ok(&http, &url, &node_report(2)).await?;
                    return Ok(());
                }
                if Instant::now() > deadline {
                    return Err(format!("{} never allowed to install", nodes[i as usize]));
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    })
}

/// One rollout of `n` nodes; returns the cluster (for scale measurements) and its RSS before, KiB.
pub async fn one(ctx: &mut Ctx, n: usize, agents: Agents) -> anyhow::Result<(Cluster, Vec<u64>)> {
    let mode = agents;
    let (label, how) = match mode {
        Agents::PerNode => (
            format!("{n} nodes"),
            format!("{WORKERS} agent tasks, one request per report"),
        ),
        Agents::Relay => (
            format!("{n} nodes, relayed"),
            format!("{RELAYS} relays with {FRONTIER} nodes each in play, one request per round"),
        ),
    };
    let cluster = cluster::start(
        &ctx.dir(&format!("rollout-{n}-{agents:?}")),
        // A fixed interval: `scale` makes every server snapshot this state with 10,000 writes.
        ClusterOptions {
            snapshot_max_every: Some(10_000),
            ..cluster::options(ctx, 10_000)
        },
    )
    .await?;
    let rss_before: Vec<u64> = cluster
        .servers
        .values()
        .filter_map(|s| cluster::rss_kib(s.pid()?))
        .collect();
    let leader = cluster::leader(&ctx.http, &cluster, Duration::from_secs(30)).await?;
    let base = format!("http://{}", cluster::addr(&cluster, leader));
    let http = ctx.http.clone();
    post_ok(
        &http,
        &format!("{base}/v1/resources"),
        &json!({"name": "roll"}),
    )
    .await
    .map_err(e)?;
    for _ in 0..2 {
        post_ok(
            &http,
            &format!("{base}/v1/resources/roll/versions"),
            &json!({}),
        )
        .await
        .map_err(e)?;
    }
    let nodes = Arc::new(padded_ids("r", n));
    let t = Instant::now();
    register_consumer(&http, &base, "roll", &nodes)
        .await
        .map_err(e)?;
    ctx.results.add(
        SCENARIO,
        format!("{label}: register nodes"),
        Some(t.elapsed().as_secs_f64() * 1000.0),
        "ms",
        "consumer in chunks of 10,000 ids",
    );

    // Every node reports version 1 installed: the fleet convoy takes over.
    let (h, b, ns) = (http.clone(), Arc::new(base.clone()), nodes.clone());
    let initial = match agents {
        Agents::PerNode => {
            fixed_count(WORKERS, n as u64, Duration::from_secs(600), move |i| {
                let (http, base, nodes) = (h.clone(), b.clone(), ns.clone());
                async move {
                    let url = format!("{base}/v1/nodes/{}/report", nodes[i as usize]);
                    post_ok(&http, &url, &node_report(1)).await.map(|_| ())
                }
            })
            .await
        }
        Agents::Relay => {
            let chunks = n.div_ceil(1_000) as u64;
            let mut r = fixed_count(RELAYS, chunks, Duration::from_secs(600), move |c| {
                let (http, base, nodes) = (h.clone(), b.clone(), ns.clone());
                async move {
                    let from = c as usize * 1_000;
                    let report = node_report(1).to_string();
                    let body = relay::batch_body(
                        nodes[from..(from + 1_000).min(nodes.len())]
                            .iter()
                            .map(|id| (id.as_str(), report.as_str())),
                    );
                    let url = format!("{base}/v1/nodes/reports");
                    let answer = relay::post_batch(&http, &url, body, Instant::now()).await?;
                    let answer: relay::Rejected =
                        serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
                    match answer.rejected.len() {
                        0 => Ok(()),
                        k => Err(format!("{k} reports of chunk {c} not taken")),
                    }
                }
            })
            .await;
            r.ok = (r.ok * 1_000).min(n as u64);
            r
        }
    };
    ctx.results.add(
        SCENARIO,
        format!("{label}: initial reports/s"),
        Some(initial.rate()),
        "reports/s",
        initial.error_note(),
    );
    let last = &nodes[n - 1];
    let deadline = Instant::now() + Duration::from_secs(60);
    while get_json(&http, &format!("{base}/v1/nodes/{last}"))
        .await
        .ok()
        .and_then(|v| v["resources"]["roll"]["current"].as_u64())
        != Some(1)
    {
        anyhow::ensure!(
            Instant::now() < deadline,
            "initial reports not applied within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;

    let spec = json!({"consumer": "roll", "resource": "roll", "version": 2,
        "strategy": {"rolling": {"install_window": 1000, "download_window": 1000}}});
    let start = Instant::now();
    post_ok(&http, &format!("{base}/v1/deployments"), &spec)
        .await
        .map_err(e)?;
    let polls = Arc::new(AtomicU64::new(0));
    let agents = match agents {
        Agents::PerNode => tokio::spawn(per_node_agents(
            http.clone(),
            base.clone(),
            nodes.clone(),
            polls.clone(),
        )),
        Agents::Relay => {
            let fleet = Arc::new(relay::RelayFleet {
                nodes: nodes.to_vec(),
                relays: RELAYS,
                frontier: FRONTIER,
                to: 2,
                reports: [node_report(1).to_string(), node_report(2).to_string()],
                allowed: may_install,
            });
            let (http, url, polls) = (
                http.clone(),
                format!("{base}/v1/nodes/reports"),
                polls.clone(),
            );
            tokio::spawn(async move {
                let stats = relay::rollout(http, url, fleet, Duration::from_secs(1800)).await;
                let mut r = LoadResult::default();
                match stats {
                    Ok(stats) => {
                        polls.store(stats.requests, Ordering::Relaxed);
                        r.ok = stats.reports;
                    }
                    Err(e) => {
                        r.errors = 1;
                        r.first_error = Some(e);
                    }
                }
                r
            })
        }
    };
    let limit = Duration::from_secs(120 + n as u64 / 100);
    let status = wait_status(&http, &base, "ROLLED_FORWARD", limit).await?;
    let wall = start.elapsed();
    let agents = agents.await?;
    anyhow::ensure!(status == "ROLLED_FORWARD", "deployment ended {status}");
    let polls = polls.load(Ordering::Relaxed);
    ctx.results.add(
        SCENARIO,
        format!("{label}: wall time"),
        Some(wall.as_secs_f64()),
        "s",
        "POST /v1/deployments → ROLLED_FORWARD seen; install window 1000, download window 1000",
    );
    ctx.results.add(
        SCENARIO,
        format!("{label}: scheduler overhead per node"),
        Some(wall.as_secs_f64() * 1e6 / n as f64),
        "µs",
        format!("agents are instant (0 simulated time), so overhead = wall / nodes; {how}"),
    );
    let (requests, reports) = match mode {
        Agents::PerNode => (polls + n as u64, polls + n as u64),
        Agents::Relay => (polls, agents.ok),
    };
    ctx.results.add(
        SCENARIO,
        format!("{label}: agent requests/s"),
        Some(requests as f64 / wall.as_secs_f64()),
        "req/s",
        format!(
            "{reports} node reports in {requests} requests; {}",
            agents.error_note()
        ),
    );
    Ok((cluster, rss_before))
}

/// Measures RSS, state size and the snapshot built after writing enough entries to trigger one.
pub async fn measure_scale(
    ctx: &mut Ctx,
    cluster: &Cluster,
    rss_before: &[u64],
    n: usize,
) -> anyhow::Result<()> {
    const S: &str = "scale";
    let leader = cluster::leader(&ctx.http, cluster, Duration::from_secs(30)).await?;
    let base = format!("http://{}", cluster::addr(cluster, leader));
    let digest = get_json(&ctx.http, &format!("{base}/v1/cluster/digest"))
        .await
        .map_err(e)?;
    let bytes = digest["bytes"].as_u64().map(|b| b as f64);
    ctx.results.add(
        S,
        format!("state size, {n} nodes after a rollout"),
        bytes.map(|b| b / 1e6),
        "MB",
        "GET /v1/cluster/digest bytes",
    );
    ctx.results.add(
        S,
        "state bytes per node",
        bytes.map(|b| b / n as f64),
        "B",
        "",
    );
    // 10,000 more entries (snapshot_every) make every server build a snapshot of this state.
    let h = ctx.http.clone();
    let url = Arc::new(format!("{base}/v1/resources"));
    fixed_count(WORKERS, 10_500, Duration::from_secs(300), move |i| {
        let (http, url) = (h.clone(), url.clone());
        async move {
            post_ok(&http, &url, &json!({"name": format!("snap-{i}")}))
                .await
                .map(|_| ())
        }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut builds = Vec::new();
    for (s, before) in cluster.servers.values().zip(rss_before) {
        let rss = s.pid().and_then(cluster::rss_kib);
        ctx.results.add(
            S,
            format!("server {} RSS, {n} nodes", s.id),
            rss.map(|k| k as f64 / 1024.0),
            "MiB",
            format!("VmRSS; {} MiB right after start", before / 1024),
        );
        ctx.results.add(
            S,
            format!("server {} RSS per node", s.id),
            rss.map(|k| (k.saturating_sub(*before)) as f64 * 1024.0 / n as f64),
            "B",
            "(RSS − RSS at start) / nodes",
        );
        let log = std::fs::read_to_string(s.log_path()).unwrap_or_default();
        if let Some(last) = cluster::snapshot_lines(&log).last() {
            builds.push(*last);
        }
    }
    let (size, ms) = builds.iter().fold(
        (None, None),
        |(b, m): (Option<u64>, Option<u64>), (bytes, ms)| {
            (
                Some(b.unwrap_or(0).max(*bytes)),
                Some(m.unwrap_or(0).max(*ms)),
            )
        },
    );
    let note = format!(
        "last \"built snapshot\" log line of each of {} servers (max)",
        builds.len()
    );
    ctx.results.add(
        S,
        format!("snapshot size, {n} nodes"),
        size.map(|b| b as f64 / 1e6),
        "MB",
        note.clone(),
    );
    ctx.results.add(
        S,
        format!("snapshot build time, {n} nodes"),
        ms.map(|m| m as f64),
        "ms",
        note + "; encode + RocksDB write",
    );
    Ok(())
}

/// Every `--rollout-nodes` size; the largest also feeds `scale` when it is chosen.
pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    let sizes = ctx.args.rollout_nodes.clone();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    for n in sizes {
        for agents in ctx.args.rollout_agents.clone() {
            let (cluster, rss) = one(ctx, n, agents).await?;
            if n == largest && !ctx.scale_measured && ctx.scenarios.contains(&Scenario::Scale) {
                measure_scale(ctx, &cluster, &rss, n).await?;
                ctx.scale_measured = true;
            }
            drop(cluster);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_installs_only_the_allowed_version() {
        let allowed =
            json!({"targets": {"roll": {"version": 2, "download": true, "install": true}}});
        let prefetch =
            json!({"targets": {"roll": {"version": 2, "download": true, "install": false}}});
        assert!(may_install(&allowed["targets"], 2));
        assert!(!may_install(&allowed["targets"], 3));
        assert!(!may_install(&prefetch["targets"], 2));
        assert!(!may_install(&json!({}), 2));
    }

    #[test]
    fn a_node_report_holds_every_version_up_to_the_current_one() {
        let r = node_report(2);
        assert_eq!(r["resources"]["roll"]["current"], 2);
        let versions = r["resources"]["roll"]["versions"].as_object().unwrap();
        assert_eq!(versions.keys().collect::<Vec<_>>(), ["1", "2"]);
        assert_eq!(versions["2"]["installed"], true);
    }
}
