//! How a deployment judges itself, through the real binary with simulated agents whose downloads and installs
//! take several report rounds (issue 22): failures never end ROLLED_FORWARD by accident (two nodes in a window
//! of three, 3 of 20 failing with `deploy start --watch`, a one-node canary whose agent died mid-install),
//! all-at-once waits for every node, a completion timeout finishes around a silent node, and the download
//! window caps every download.

use std::process::Command;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::fleet::max_overlap;
use convoy_tests::scenario::{
    consumer, count_nodes, currents, post_ok, publish, resource_with_v1, wait_deployment,
    wait_running, wait_status,
};
use convoy_tests::{convoy_bin, Cluster, ClusterOptions, FleetConfig, Phase, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(60);

/// A fleet whose downloads and installs each take several report rounds.
fn slow(resource: &str, download_ms: u64, install_ms: u64) -> FleetConfig {
    FleetConfig {
        download: Duration::from_millis(download_ms),
        install: Duration::from_millis(install_ms),
        ..FleetConfig::new(resource)
    }
}

async fn start(api: &RawClient, body: Value) -> anyhow::Result<String> {
    let started = post_ok(api, "/v1/deployments", body).await?;
    Ok(started["id"].as_str().context("id")?.to_string())
}

/// The time of the first event of `view` matching `f`.
fn first_at(view: &Value, f: impl Fn(&Value) -> bool) -> Option<u64> {
    view["events"].as_array()?.iter().find(|e| f(e))?["at"].as_u64()
}

async fn failures(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    let servers = cluster.http_addrs();

    // Two nodes in an install window of three, both failing: not ROLLED_FORWARD.
    resource_with_v1(api, "two").await?;
    let two = consumer(api, "two", 2).await?;
    let config = two
        .iter()
        .fold(slow("two", 200, 400), |c, n| c.failing(n, 2));
    let _two = config.start(&servers, &two, Some(1));
    wait_running(api, &two, "two", 1, LONG).await?;
    publish(api, "two", json!({})).await?;
    let id = start(
        api,
        json!({"consumer": "two", "resource": "two", "version": 2,
               "strategy": {"rolling": {"install_window": 3, "download_window": 3}}}),
    )
    .await?;
    let view = wait_deployment(api, &id, LONG, |v| {
        v["status"]
            .as_str()
            .is_some_and(|s| ["ROLLED_FORWARD", "ROLLED_BACK", "FAILED"].contains(&s))
    })
    .await?;
    ensure!(view["status"] == "ROLLED_BACK", "{view}");

    // 20 nodes, install window 5, 3 failing, as a new user would: `deploy start --watch` exits non-zero
    // and says how many failed.
    resource_with_v1(api, "twenty").await?;
    let twenty = consumer(api, "twenty", 20).await?;
    let config = twenty[5..8]
        .iter()
        .fold(slow("twenty", 100, 300), |c, n| c.failing(n, 2));
    let _twenty = config.start(&servers, &twenty, Some(1));
    wait_running(api, &twenty, "twenty", 1, LONG).await?;
    publish(api, "twenty", json!({})).await?;
    let out = tokio::task::spawn_blocking({
        let s = servers.join(",");
        move || {
            Command::new(convoy_bin())
                .args(["--server", &s, "deploy", "start", "twenty", "twenty"])
                .args(["--install-window", "5", "--watch"])
                .env_remove("CONVOY_SERVER")
                .env_remove("CONVOY_TOKEN")
                .env_remove("CONVOY_TOKEN_FILE")
                .output()
        }
    })
    .await??;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    ensure!(
        !out.status.success(),
        "exit 0 with failing nodes: {stdout}{stderr}"
    );
    ensure!(
        stderr.contains("ended ROLLED_BACK: ") && stderr.contains(" failed, 0 skipped"),
        "{stdout}{stderr}"
    );

    // A one-node canary whose agent died mid-install: skipped, no success, rolled back.
    resource_with_v1(api, "canary").await?;
    let canary = consumer(api, "canary", 3).await?;
    let dying = slow("canary", 100, 3_600_000).start(&servers, &canary[..1], Some(1));
    let _rest = slow("canary", 100, 100).start(&servers, &canary[1..], Some(1));
    wait_running(api, &canary, "canary", 1, LONG).await?;
    publish(api, "canary", json!({})).await?;
    let id = start(
        api,
        json!({"consumer": "canary", "resource": "canary", "version": 2, "nodes": "0"}),
    )
    .await?;
    wait_deployment(api, &id, LONG, |v| count_nodes(v, "installing") == 1).await?;
    dying.stop().await;
    let view = wait_deployment(api, &id, LONG, |v| {
        v["status"]
            .as_str()
            .is_some_and(|s| ["ROLLED_FORWARD", "ROLLED_BACK", "FAILED"].contains(&s))
    })
    .await?;
    ensure!(view["status"] == "ROLLED_BACK", "{view}");
    ensure!(count_nodes(&view, "skipped") == 1, "{view}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_never_end_rolled_forward_by_accident() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions {
        node_timeout_ms: Some(2_000),
        ..ClusterOptions::for_tests(1)
    })
    .await?;
    let api = cluster.client_except(0);
    cluster.logs_on_error(failures(&cluster, &api).await)
}

async fn waits_and_windows(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    let servers = cluster.http_addrs();

    // All at once: node 0 fails at once, nodes 1 and 2 take longer; nothing is judged before they are done.
    resource_with_v1(api, "all").await?;
    let all = consumer(api, "all", 3).await?;
    let _fast = slow("all", 50, 100)
        .failing(&all[0], 2)
        .start(&servers, &all[..1], Some(1));
    let _late = slow("all", 300, 1_500).start(&servers, &all[1..], Some(1));
    wait_running(api, &all, "all", 1, LONG).await?;
    publish(api, "all", json!({})).await?;
    let id = start(
        api,
        json!({"consumer": "all", "resource": "all", "version": 2,
               "strategy": {"all_at_once": {}}}),
    )
    .await?;
    let view = wait_status(api, &id, "ROLLED_BACK", LONG).await?;
    let back = first_at(&view, |e| e["status"] == "ROLLING_BACK").context("rolling back")?;
    for node in &all[1..] {
        let done = first_at(&view, |e| e["action"] == "succeeded" && e["node"] == *node)
            .with_context(|| format!("{node} never succeeded before the rollback: {view}"))?;
        ensure!(
            done <= back,
            "rolled back at {back} while {node} still installed: {view}"
        );
    }

    // A completion timeout with one silent node out of 10 finishes: 9 on version 2, the silent one
    // left where it is.
    resource_with_v1(api, "tmo").await?;
    let tmo = consumer(api, "tmo", 10).await?;
    let _nine = slow("tmo", 100, 300).start(&servers, &tmo[..9], Some(1));
    let _silent = slow("tmo", 100, 3_600_000).start(&servers, &tmo[9..], Some(1));
    wait_running(api, &tmo, "tmo", 1, LONG).await?;
    publish(api, "tmo", json!({})).await?;
    let id = start(
        api,
        json!({"consumer": "tmo", "resource": "tmo", "version": 2,
               "strategy": {"all_at_once": {}}, "completion": {"timeout_ms": 4_000}}),
    )
    .await?;
    let view = wait_deployment(api, &id, LONG, |v| {
        v["status"].as_str().is_some_and(|s| {
            ["ROLLED_FORWARD", "ROLLED_BACK", "ROLLING_BACK", "FAILED"].contains(&s)
        })
    })
    .await?;
    ensure!(view["status"] == "ROLLED_FORWARD", "{view}");
    ensure!(
        (
            count_nodes(&view, "succeeded"),
            count_nodes(&view, "timed_out")
        ) == (9, 1),
        "{view}"
    );
    let mut want = vec![Some(2); 9];
    want.push(Some(1));
    ensure!(currents(api, &tmo, "tmo").await? == want, "{view}");

    // install window 10, download window 1, 11 nodes: one download at a time, as the agents saw them.
    resource_with_v1(api, "dl").await?;
    let dl = consumer(api, "dl", 11).await?;
    let download = 400;
    let fleet = slow("dl", download, 50).start(&servers, &dl, Some(1));
    wait_running(api, &dl, "dl", 1, LONG).await?;
    publish(api, "dl", json!({})).await?;
    let id = start(
        api,
        json!({"consumer": "dl", "resource": "dl", "version": 2,
               "strategy": {"rolling": {"install_window": 10, "download_window": 1}}}),
    )
    .await?;
    wait_status(api, &id, "ROLLED_FORWARD", LONG).await?;
    // Each node fetches version 2 once, for `download` ms from its first span on it (a prefetch, or an
    // install that begins with the download).
    let mut first = std::collections::BTreeMap::new();
    for s in fleet.spans().into_iter().filter(|s| s.version == 2) {
        ensure!(matches!(s.phase, Phase::Prefetch | Phase::Install));
        let start = first.entry(s.node.clone()).or_insert(s.start);
        *start = (*start).min(s.start);
    }
    ensure!(first.len() == 11, "{first:?}");
    let fetching = max_overlap(first.values().map(|&s| (s, Some(s + download))));
    ensure!(fetching <= 1, "{fetching} nodes downloaded at once");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_at_once_waits_a_timeout_finishes_and_the_download_window_caps_downloads(
) -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(1)).await?;
    let api = cluster.client_except(0);
    cluster.logs_on_error(waits_and_windows(&cluster, &api).await)
}
