//! Failure thresholds through the real binary: `max_failed_nodes` as a percentage (`"25%"` of eight nodes
//! tolerates two failures, a third fails the deployment), and a completion timeout at which no node succeeded
//! rolls back when `rollback_on_failure` holds (the default).

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, post_ok, publish, resource_with_v1, wait_running, wait_status,
};
use convoy_tests::{Cluster, FleetConfig, RawClient};
use serde_json::json;

const LONG: Duration = Duration::from_secs(30);

async fn scenario(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "pc").await?;
    let nodes = consumer(api, "pct", 8).await?;
    let mut config = FleetConfig::new("pc");
    for n in &nodes[..3] {
        config = config.failing(n, 2);
    }
    let _fleet = config.start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, "pc", 1, LONG).await?;
    publish(api, "pc", json!({})).await?;
    let (status, body) = api
        .post(
            "/v1/deployments",
            &json!({"consumer": "pct", "resource": "pc", "version": 2, "max_failed_nodes": "101%"}),
        )
        .await?;
    ensure!(status == 400, "101%: {status} {body}");
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "pct", "resource": "pc", "version": 2,
               "strategy": {"all_at_once": {}}, "max_failed_nodes": "25%", "rollback_on_failure": false}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?;
    let view = wait_status(api, id, "FAILED", LONG).await?;
    ensure!(view["settings"]["max_failed_nodes"] == "25%", "{view}");
    // The failure event names the nodes that failed and why (issue 36).
    let named = |m: &str| {
        m.starts_with("3 nodes failed; 2 tolerated; failed: ")
            && nodes[..3]
                .iter()
                .all(|n| m.contains(&format!("{n} (attempt 1 failed: ")))
    };
    ensure!(
        view["events"]
            .as_array()
            .is_some_and(|es| es.iter().any(|e| e["message"].as_str().is_some_and(named))),
        "{view}"
    );

    // A completion timeout without quorum rolls back: a fleet that never finishes installing.
    resource_with_v1(api, "slow").await?;
    let slow = consumer(api, "slowc", 2).await?;
    let config = FleetConfig {
        install: Duration::from_secs(3600),
        ..FleetConfig::new("slow")
    };
    let _slow = config.start(&cluster.http_addrs(), &slow, Some(1));
    wait_running(api, &slow, "slow", 1, LONG).await?;
    publish(api, "slow", json!({})).await?;
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "slowc", "resource": "slow", "version": 2,
               "strategy": {"all_at_once": {}}, "completion": {"timeout_ms": 1500}}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?;
    let view = wait_status(api, id, "ROLLED_BACK", LONG).await?;
    ensure!(
        view["events"]
            .as_array()
            .is_some_and(|es| es.iter().any(|e| {
                e["status"] == "ROLLING_BACK"
                && e["by"] == "timer"
                && e["message"]
                    == "completion timeout: 0 of 2 nodes succeeded, 2 timed out; no node succeeded"
            })),
        "{view}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn percentage_thresholds_and_timeouts_that_roll_back() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    cluster.logs_on_error(scenario(&cluster, &api).await)
}
