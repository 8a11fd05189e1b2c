//! Strong consumers reconverge, through three real servers and simulated nodes: a node that goes
//! silent during a rollout is skipped by it, and when it reports again after the rollout ended it is
//! brought to the version through an automatic follow-up deployment with the subscription's strategy;
//! a node added to the consumer later joins the same way.

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, deployment, get_ok, publish, put_ok, resource_with_v1, wait_running, wait_status,
};
use convoy_tests::{eventually, Cluster, ClusterOptions, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(30);
const NODE_TIMEOUT_MS: u64 = 1_000;

/// The ids of the deployments of `rc` on consumer `rc`, oldest first.
async fn deployments(api: &RawClient) -> anyhow::Result<Vec<String>> {
    let list = get_ok(api, "/v1/deployments?consumer=rc&resource=rc").await?;
    Ok(list
        .as_array()
        .context("a list")?
        .iter()
        .filter_map(|d| d["id"].as_str().map(String::from))
        .collect())
}

/// Waits for the `n`-th deployment (1-based) of `rc` on `rc` to exist; its view.
async fn nth_deployment(api: &RawClient, n: usize) -> anyhow::Result<Value> {
    let id = eventually(LONG, || async {
        deployments(api).await.ok()?.get(n - 1).cloned()
    })
    .await
    .with_context(|| format!("no deployment number {n}"))?;
    deployment(api, &id).await
}

fn creation_message(view: &Value) -> String {
    view["events"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn node_ids(view: &Value) -> Vec<String> {
    view["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["id"].as_str().map(String::from))
        .collect()
}

async fn scenario(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "rc").await?;
    let nodes = consumer(api, "rc", 3).await?;
    let rolling = json!({"rolling": {"install_window": 1, "download_window": 1}});
    put_ok(
        api,
        "/v1/consumers/rc/subscriptions/rc",
        json!({"mode": "strong", "strategy": rolling}),
    )
    .await?;
    // rc-0 and rc-1 install slowly, so the rollout is still on its first nodes when rc-2 goes silent.
    let slow = FleetConfig {
        install: Duration::from_millis(1_500),
        ..FleetConfig::new("rc")
    };
    let _steady = slow.start(&cluster.http_addrs(), &nodes[..2], Some(1));
    let late = FleetConfig::new("rc").start(&cluster.http_addrs(), &nodes[2..], Some(1));
    wait_running(api, &nodes, "rc", 1, LONG).await?;
    eventually(LONG, || async {
        let view = get_ok(api, "/v1/nodes/rc-2").await.ok()?;
        (view["active"] == true).then_some(())
    })
    .await
    .context("rc-2 never active")?;

    // Version 2: the automatic deployment takes all three; rc-2 goes silent at once.
    publish(api, "rc", json!({"label": "v2"})).await?;
    let first = nth_deployment(api, 1).await?;
    drop(late);
    ensure!(node_ids(&first) == nodes, "first deployment: {first}");
    let first_id = first["id"].as_str().context("id")?.to_string();
    let ended = wait_status(api, &first_id, "ROLLED_FORWARD", LONG).await?;
    ensure!(
        ended["nodes"][2]["state"] == "skipped",
        "rc-2 was not skipped: {ended}"
    );
    // Silent: no follow-up while it is inactive.
    ensure!(
        deployments(api).await?.len() == 1,
        "follow-up for a silent node"
    );

    // Back after the rollout: a follow-up of version 2 for rc-2 alone, with the subscription's strategy.
    let _back = FleetConfig::new("rc").start(&cluster.http_addrs(), &nodes[2..], Some(1));
    let follow = nth_deployment(api, 2).await?;
    ensure!(
        follow["version"] == 2
            && node_ids(&follow) == vec!["rc-2".to_string()]
            && follow["settings"]["strategy"] == rolling
            && follow["events"][0]["by"] == "system",
        "follow-up: {follow}"
    );
    ensure!(
        creation_message(&follow) == "follow-up to version 2 for 1 node: 1 skipped",
        "{follow}"
    );
    let id = follow["id"].as_str().context("id")?.to_string();
    wait_status(api, &id, "ROLLED_FORWARD", LONG).await?;
    wait_running(api, &nodes[2..], "rc", 2, LONG).await?;

    // A node added later holds nothing: it is not sent a version on its own, but joins through a
    // follow-up deployment.
    put_ok(api, "/v1/consumers/rc/nodes", json!({"add": ["rc-3"]})).await?;
    let joined = vec!["rc-3".to_string()];
    let _new = FleetConfig::new("rc").start(&cluster.http_addrs(), &joined, None);
    let follow = nth_deployment(api, 3).await?;
    ensure!(
        node_ids(&follow) == joined
            && creation_message(&follow) == "follow-up to version 2 for 1 node: 1 joined"
            && follow["settings"]["strategy"] == rolling,
        "joined follow-up: {follow}"
    );
    let id = follow["id"].as_str().context("id")?.to_string();
    wait_status(api, &id, "ROLLED_FORWARD", LONG).await?;
    wait_running(api, &joined, "rc", 2, LONG).await?;
    // Converged: nothing more starts.
    tokio::time::sleep(Duration::from_millis(300)).await;
    ensure!(deployments(api).await?.len() == 3, "an extra deployment");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strong_consumers_reconverge_returned_and_joined_nodes_through_follow_ups(
) -> anyhow::Result<()> {
    let options = ClusterOptions {
        node_timeout_ms: Some(NODE_TIMEOUT_MS),
        ..ClusterOptions::for_tests(3)
    };
    let cluster = Cluster::start_with(options).await?;
    let api = cluster.client_except(0);
    cluster.logs_on_error(scenario(&cluster, &api).await)
}
