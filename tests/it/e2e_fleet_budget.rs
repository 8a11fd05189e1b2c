//! Issue 24 §1 through real servers: three resources rolling at once on one consumer's nodes, each deployment
//! with an install window as wide as the consumer, never take more of its nodes down at once than its
//! disruption budget allows (seen from the simulated nodes' install spans), wait for the budget without
//! pausing, and all finish; `convoy consumer budget` sets and shows it.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::fleet::max_overlap;
use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, resource_with_v1, wait_running, wait_status,
};
use convoy_tests::{convoy_bin, Cluster, FleetConfig, Phase};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(60);

/// Runs `convoy consumer budget ARGS` against the cluster; returns its stdout.
fn cli_budget(cluster: &Cluster, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(convoy_bin())
        .args(["consumer", "budget"])
        .args(args)
        .args(["--server", &cluster.http_addrs().join(",")])
        .output()?;
    ensure!(
        out.status.success(),
        "convoy consumer budget {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

/// Each node's install spans merged into the times it was down, so a node installing two resources at
/// once counts once.
fn down_times(spans: &[convoy_tests::fleet::Span]) -> Vec<(u64, Option<u64>)> {
    let mut by_node: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    for s in spans.iter().filter(|s| s.phase == Phase::Install) {
        by_node
            .entry(&s.node)
            .or_default()
            .push((s.start, s.end.unwrap_or(u64::MAX)));
    }
    let mut out = Vec::new();
    for (_, mut spans) in by_node {
        spans.sort();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (start, end) in spans {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        out.extend(merged.into_iter().map(|(s, e)| (s, Some(e))));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_resources_rolling_at_once_never_take_more_nodes_down_than_the_budget(
) -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    let result = async {
        for r in ["ba", "bb", "bc"] {
            resource_with_v1(&api, r).await?;
        }
        publish(&api, "ba", json!({"label": "v2"})).await?;
        let nodes = consumer(&api, "multi", 4).await?;
        let out = cli_budget(&cluster, &["multi", "--max-unavailable", "1"])?;
        ensure!(out.contains("budget of multi: max_unavailable 1"), "{out}");
        let config = FleetConfig {
            install: Duration::from_millis(300),
            ..FleetConfig::new("ba")
        };
        let fleet = config.start(&cluster.http_addrs(), &nodes, Some(1));
        wait_running(&api, &nodes, "ba", 1, LONG).await?;

        // Three deployments at once, each free to install on every node: the budget alone holds them.
        let wide = json!({"rolling": {"install_window": 4, "download_window": 1}});
        let mut ids = Vec::new();
        for (r, v) in [("ba", 2), ("bb", 1), ("bc", 1)] {
            let started = post_ok(
                &api,
                "/v1/deployments",
                json!({"consumer": "multi", "resource": r, "version": v, "strategy": wide}),
            )
            .await?;
            ids.push(started["id"].as_str().context("id")?.to_string());
        }
        let mut waited = false;
        let mut most = 0;
        for _ in 0..400 {
            let budget = get_ok(&api, "/v1/consumers/multi/budget").await?;
            let unavailable = budget["unavailable"].as_u64().context("unavailable")?;
            most = most.max(unavailable);
            for id in &ids {
                let s = get_ok(&api, &format!("/v1/deployments/{id}/summary")).await?;
                ensure!(s.get("paused_by").is_none(), "a budget paused {id}: {s}");
                waited |= s["waiting_for"] == "budget";
            }
            let mut done = 0;
            for id in &ids {
                let d = get_ok(&api, &format!("/v1/deployments/{id}")).await?;
                done += usize::from(d["status"] == "ROLLED_FORWARD");
            }
            if done == ids.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        for id in &ids {
            wait_status(&api, id, "ROLLED_FORWARD", LONG).await?;
        }
        ensure!(
            most <= 1,
            "the budget view counted {most} nodes down at once"
        );
        ensure!(waited, "no deployment ever said it waited for the budget");
        let spans = fleet.spans();
        let installs = spans.iter().filter(|s| s.phase == Phase::Install).count();
        ensure!(
            installs >= 12,
            "each node installed each resource: {installs} installs"
        );
        let down = max_overlap(down_times(&spans));
        ensure!(
            down == 1,
            "{down} nodes installed at once under a budget of 1"
        );
        let shown: Value = serde_json::from_str(&cli_budget(&cluster, &["multi", "-o", "json"])?)?;
        ensure!(
            shown["allowed"] == 1 && shown["unavailable"] == 0 && shown["disruptions_allowed"] == 1,
            "{shown}"
        );
        let out = cli_budget(&cluster, &["multi", "--delete"])?;
        ensure!(out.contains("removed the budget of multi"), "{out}");
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
