//! Strong consumers always converge (issue 36), through three real servers and simulated nodes whose
//! installs take longer than a deployment's completion timeout lets the rollout go on: the nodes the
//! timeout caught before their turn get follow-up deployments until every node runs the version, on a
//! 4-node consumer and a 10-node one with the default strategy, and with `deployment_history = 0` (every
//! finished deployment pruned at once) a node that joins later still gets the version.

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{consumer, get_ok, publish, put_ok, resource_with_v1, wait_running};
use convoy_tests::{eventually, Cluster, ClusterOptions, Fleet, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(90);

/// The deployments of `name` on consumer `name`, oldest first.
async fn deployments(api: &RawClient, name: &str) -> anyhow::Result<Vec<Value>> {
    let list = get_ok(
        api,
        &format!("/v1/deployments?consumer={name}&resource={name}"),
    )
    .await?;
    Ok(list.as_array().context("a list")?.clone())
}

/// Consumer `name` of `n` simulated nodes on version 1 of resource `name`, strong with the default
/// strategy and a completion timeout of 3 s; installs take 1.2 s, so each deployment gets a node or two
/// done before its timeout. Then version 2 is published; the fleet (keep it alive).
async fn slow_strong_consumer(
    cluster: &Cluster,
    api: &RawClient,
    name: &str,
    n: usize,
) -> anyhow::Result<(Vec<String>, Fleet)> {
    resource_with_v1(api, name).await?;
    let nodes = consumer(api, name, n).await?;
    put_ok(
        api,
        &format!("/v1/consumers/{name}/subscriptions/{name}"),
        json!({"mode": "strong", "completion": {"timeout_ms": 3_000}}),
    )
    .await?;
    let slow = FleetConfig {
        install: Duration::from_millis(1_200),
        ..FleetConfig::new(name)
    };
    let fleet = slow.start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, name, 1, LONG).await?;
    for node in &nodes {
        eventually(LONG, || async {
            let view = get_ok(api, &format!("/v1/nodes/{node}")).await.ok()?;
            (view["active"] == true).then_some(())
        })
        .await
        .with_context(|| format!("{node} never active"))?;
    }
    publish(api, name, json!({"label": "v2"})).await?;
    Ok((nodes, fleet))
}

/// Every node of `name` comes to version 2; the first deployment ended by its completion timeout with
/// nodes it timed out, and the follow-ups took them (each created by `system`, "follow-up to version 2").
async fn converges(api: &RawClient, name: &str, nodes: &[String]) -> anyhow::Result<()> {
    wait_running(api, nodes, name, 2, LONG).await?;
    let all = deployments(api, name).await?;
    let first = &all[0];
    let id = first["id"].as_str().context("id")?;
    let first = get_ok(api, &format!("/v1/deployments/{id}")).await?;
    ensure!(
        first["status"] == "ROLLED_FORWARD"
            && first["events"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|e| e["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("completion timeout:"))),
        "the first deployment did not end by its timeout: {first}"
    );
    ensure!(all.len() >= 2, "no follow-up: {all:?}");
    for d in &all[1..] {
        let id = d["id"].as_str().context("id")?;
        let view = get_ok(api, &format!("/v1/deployments/{id}")).await?;
        let created = view["events"][0]["message"].as_str().unwrap_or_default();
        ensure!(
            view["events"][0]["by"] == "system" && created.starts_with("follow-up to version 2"),
            "not a follow-up: {view}"
        );
    }
    Ok(())
}

async fn scenario(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    // Four nodes, default strategy: one installs at a time, so the timeout catches two or three.
    let (small, _small) = slow_strong_consumer(cluster, api, "four", 4).await?;
    converges(api, "four", &small).await?;

    // A larger consumer: more rounds of follow-ups, each taking the nodes the last one left behind.
    let (large, _large) = slow_strong_consumer(cluster, api, "ten", 10).await?;
    converges(api, "ten", &large).await?;

    // Every finished deployment is pruned (deployment_history = 0): a node added later still joins.
    let pruned = eventually(LONG, || async {
        let all = deployments(api, "four").await.ok()?;
        let last = all.last()?["id"].as_str()?.to_string();
        let view = get_ok(api, &format!("/v1/deployments/{last}")).await.ok()?;
        (view["pruned"] == true).then_some(all.len())
    })
    .await
    .context("the last deployment of four was never pruned")?;
    put_ok(api, "/v1/consumers/four/nodes", json!({"add": ["four-4"]})).await?;
    let joined = vec!["four-4".to_string()];
    let _new = FleetConfig::new("four").start(&cluster.http_addrs(), &joined, None);
    wait_running(api, &joined, "four", 2, LONG).await?;
    let all = deployments(api, "four").await?;
    ensure!(all.len() == pruned + 1, "{all:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_timeout_leaves_no_node_behind_even_once_history_is_pruned(
) -> anyhow::Result<()> {
    let options = ClusterOptions {
        extra: "deployment_history = 0\n".into(),
        ..ClusterOptions::for_tests(3)
    };
    let cluster = Cluster::start_with(options).await?;
    let api = cluster.client_except(0);
    cluster.logs_on_error(scenario(&cluster, &api).await)
}

/// Issue 36 item 3: all at once on 5 nodes with a completion timeout of 8 s and a healthy deadline of
/// 3 s, one node's install outlasting both: it is timed out at its deadline, not failed, and the
/// deployment finishes at its timeout instead of rolling the consumer back.
async fn hung(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "hung").await?;
    let nodes = consumer(api, "hung", 5).await?;
    put_ok(
        api,
        "/v1/consumers/hung/subscriptions/hung",
        json!({"mode": "strong", "strategy": {"all_at_once": {}},
               "completion": {"timeout_ms": 8_000}, "pacing": {"healthy_deadline": "3s"}}),
    )
    .await?;
    let _quick = FleetConfig::new("hung").start(&cluster.http_addrs(), &nodes[..4], Some(1));
    let slow = FleetConfig {
        install: Duration::from_secs(30),
        ..FleetConfig::new("hung")
    };
    let _slow = slow.start(&cluster.http_addrs(), &nodes[4..], Some(1));
    wait_running(api, &nodes, "hung", 1, LONG).await?;
    for node in &nodes {
        eventually(LONG, || async {
            let view = get_ok(api, &format!("/v1/nodes/{node}")).await.ok()?;
            (view["active"] == true).then_some(())
        })
        .await
        .with_context(|| format!("{node} never active"))?;
    }
    publish(api, "hung", json!({"label": "v2"})).await?;
    let ended = eventually(LONG, || async {
        let all = deployments(api, "hung").await.ok()?;
        let id = all.first()?["id"].as_str()?.to_string();
        let view = get_ok(api, &format!("/v1/deployments/{id}")).await.ok()?;
        let status = view["status"].as_str()?;
        [
            "ROLLED_FORWARD",
            "ROLLING_BACK",
            "ROLLED_BACK",
            "FAILED",
            "ABORTED",
        ]
        .contains(&status)
        .then_some(view)
    })
    .await
    .context("the deployment never ended")?;
    ensure!(ended["status"] == "ROLLED_FORWARD", "{ended}");
    ensure!(ended["nodes"][4]["state"] == "timed_out", "{ended}");
    let last = ended["events"]
        .as_array()
        .and_then(|e| e.iter().rev().find(|e| e["status"] == "ROLLED_FORWARD"))
        .and_then(|e| e["message"].as_str())
        .unwrap_or_default();
    ensure!(
        last == "completion timeout: 4 of 5 nodes succeeded, 1 timed out",
        "{ended}"
    );
    let c = get_ok(api, "/v1/consumers/hung").await?;
    ensure!(
        c["holds"].as_object().is_none_or(|h| h.is_empty())
            || c["holds"].as_array().is_some_and(|h| h.is_empty()),
        "a version held back: {c}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_hung_node_does_not_roll_back_a_deployment_with_a_completion_timeout(
) -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    cluster.logs_on_error(hung(&cluster, &api).await)
}

/// Issue 36 item 4: rolling with an install window of 3 under a budget of 1, one failure tolerated: the
/// failed node holds the budget's only slot, so the deployment can never go on; it fails at once,
/// naming the budget, instead of waiting for good.
async fn budget_stall(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "bud").await?;
    let nodes = consumer(api, "bud", 4).await?;
    put_ok(
        api,
        "/v1/consumers/bud/budget",
        json!({"max_unavailable": 1}),
    )
    .await?;
    put_ok(
        api,
        "/v1/consumers/bud/subscriptions/bud",
        json!({"mode": "strong", "max_failed_nodes": 1,
               "strategy": {"rolling": {"install_window": 3, "download_window": 3}}}),
    )
    .await?;
    let fleet = FleetConfig::new("bud").failing("bud-0", 2);
    let _fleet = fleet.start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, "bud", 1, LONG).await?;
    for node in &nodes {
        eventually(LONG, || async {
            let view = get_ok(api, &format!("/v1/nodes/{node}")).await.ok()?;
            (view["active"] == true).then_some(())
        })
        .await
        .with_context(|| format!("{node} never active"))?;
    }
    publish(api, "bud", json!({"label": "v2"})).await?;
    let view = eventually(Duration::from_secs(30), || async {
        let all = deployments(api, "bud").await.ok()?;
        let id = all.first()?["id"].as_str()?.to_string();
        let view = get_ok(api, &format!("/v1/deployments/{id}")).await.ok()?;
        (view["status"] != "ROLLING_FORWARD").then_some(view)
    })
    .await
    .context("the deployment stalled under its budget")?;
    let why = view["events"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["status"] == "ROLLING_BACK"))
        .and_then(|e| e["message"].as_str())
        .unwrap_or_default();
    ensure!(
        why == "disruption budget of bud (1 unavailable at most) is entirely taken by 1 failed nodes of this deployment: node bud-1 can never be admitted",
        "{view}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_nodes_holding_every_budget_slot_fail_the_deployment() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    cluster.logs_on_error(budget_stall(&cluster, &api).await)
}
