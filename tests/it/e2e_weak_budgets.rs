//! Issue 35 §6 through real servers and simulated agents: weak nodes move only with a slot under the consumer's
//! disruption budget and the fleet-wide limits, as a deployment's nodes do. Every node's installs take several
//! report rounds; sampled all along, no more nodes are ever on their way than the budget or the limit allows,
//! and every node gets the version in the end. Run with a budget of 1 on a 4-node consumer and with a fleet
//! limit of 3 installs on a 12-node one.

use std::time::Duration;

use anyhow::ensure;
use convoy_tests::scenario::{
    consumer, currents, get_ok, post_ok, put_ok, resource_with_v1, wait_running,
};
use convoy_tests::{Cluster, ClusterOptions, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(90);

/// The nodes on their way to `version` of `resource`: they hold it and do not run it done.
async fn moving(
    api: &RawClient,
    nodes: &[String],
    resource: &str,
    version: u64,
) -> anyhow::Result<usize> {
    let mut n = 0;
    for node in nodes {
        let view = get_ok(api, &format!("/v1/nodes/{node}")).await?;
        let r = &view["resources"][resource];
        let held = &r["versions"][version.to_string()];
        let arrived = r["current"] == version && held["done"] == true;
        n += usize::from(!held.is_null() && !arrived);
    }
    Ok(n)
}

/// A weak consumer `edge` of `n` agents on v1 of `wk`, `policy` set (a budget or limits), then v2
/// published: at most `bound` nodes are ever on their way, and all get v2.
async fn weak_moves_within(n: usize, policy: (&str, Value), bound: usize) -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    let result = async {
        resource_with_v1(&api, "wk").await?;
        let nodes = consumer(&api, "edge", n).await?;
        let mut config = FleetConfig::new("wk");
        config.install = Duration::from_millis(400);
        let _fleet = config.start(&cluster.http_addrs(), &nodes, Some(1));
        put_ok(&api, "/v1/consumers/edge/subscriptions/wk", json!({})).await?;
        wait_running(&api, &nodes, "wk", 1, LONG).await?;
        put_ok(&api, policy.0, policy.1.clone()).await?;
        let answer = post_ok(&api, "/v1/resources/wk/versions", json!({"label": "v2"})).await?;
        ensure!(answer["version"] == 2, "{answer}");
        let mut most = 0;
        let deadline = tokio::time::Instant::now() + LONG;
        loop {
            let now = moving(&api, &nodes, "wk", 2).await?;
            most = most.max(now);
            ensure!(
                now <= bound,
                "{now} weak nodes on their way at once, {} allow {bound}",
                policy.0
            );
            let on = currents(&api, &nodes, "wk").await?;
            if now == 0 && on.iter().all(|v| *v == Some(2)) {
                break;
            }
            ensure!(
                tokio::time::Instant::now() < deadline,
                "not all on v2: {on:?}"
            );
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
        ensure!(most >= 1, "no node was ever seen moving");
        wait_running(&api, &nodes, "wk", 2, LONG).await?;
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_of_one_moves_one_weak_node_at_a_time_on_4_nodes() -> anyhow::Result<()> {
    weak_moves_within(
        4,
        ("/v1/consumers/edge/budget", json!({"max_unavailable": 1})),
        1,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_limit_of_three_installs_bounds_weak_nodes_on_12_nodes() -> anyhow::Result<()> {
    weak_moves_within(
        12,
        ("/v1/cluster/limits", json!({"max_concurrent_installs": 3})),
        3,
    )
    .await
}
