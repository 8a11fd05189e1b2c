//! Issue 35 §6 through real servers and simulated agents: a weak subscription's `start_jitter` spreads its nodes'
//! moves to a published version. Sampled all along, no node gets the version before its own time (the spread's
//! `since` plus its offset, which the consumer view shows and every server computes alike), the nodes do not all
//! move at once, and every node gets it within the jitter with no other command (the leader ticks at each
//! node's time). Run on a 4-node consumer and on a 40-node one.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{ensure, Context};
use convoy_actors::domain::weak_jitter_offset;
use convoy_tests::scenario::{consumer, get_ok, post_ok, put_ok, resource_with_v1, wait_running};
use convoy_tests::{Cluster, ClusterOptions, FleetConfig};
use serde_json::json;

const JITTER_MS: u64 = 8_000;
const LONG: Duration = Duration::from_secs(60);

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

async fn a_weak_publish_is_spread_over_the_jitter(n: usize) -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    let result = async {
        resource_with_v1(&api, "wk").await?;
        let nodes = consumer(&api, "edge", n).await?;
        let _fleet = FleetConfig::new("wk").start(&cluster.http_addrs(), &nodes, Some(1));
        put_ok(
            &api,
            "/v1/consumers/edge/subscriptions/wk",
            json!({"start_jitter": "8s"}),
        )
        .await?;
        wait_running(&api, &nodes, "wk", 1, LONG).await?;
        let answer = post_ok(&api, "/v1/resources/wk/versions", json!({"label": "v2"})).await?;
        ensure!(answer["version"] == 2, "{answer}");
        let view = get_ok(&api, "/v1/consumers/edge").await?;
        let sub = &view["subscriptions"]["wk"];
        ensure!(sub["start_jitter_ms"] == JITTER_MS, "{view}");
        ensure!(sub["spread"]["version"] == 2, "{view}");
        let since = sub["spread"]["since"]
            .as_u64()
            .context("the spread's since")?;
        let times: Vec<u64> = nodes
            .iter()
            .map(|id| since + weak_jitter_offset("edge", "wk", 2, id, JITTER_MS))
            .collect();
        let last = *times.iter().max().context("nodes")?;
        ensure!(
            last > since + JITTER_MS / 4,
            "the offsets of these nodes spread nothing: {times:?}"
        );
        let deadline = tokio::time::Instant::now() + LONG;
        loop {
            let mut got = 0;
            for (id, at) in nodes.iter().zip(&times) {
                let node = get_ok(&api, &format!("/v1/nodes/{id}")).await?;
                // Read after the answer: the server decided no later than this.
                let now = wall_ms();
                let r = &node["resources"]["wk"];
                if r["current"] == 2 || !r["versions"]["2"].is_null() {
                    got += 1;
                    ensure!(
                        *at <= now,
                        "{id} got v2 by {now}, its time is {at} (since {since})"
                    );
                }
            }
            if got == n {
                break;
            }
            ensure!(
                tokio::time::Instant::now() < deadline,
                "{got} of {n} nodes got v2"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        wait_running(&api, &nodes, "wk", 2, LONG).await?;
        let view = get_ok(&api, "/v1/consumers/edge").await?;
        ensure!(
            view["subscriptions"]["wk"]["spread"]["next"].is_null(),
            "every node released: {view}"
        );
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_weak_publish_is_spread_over_the_jitter_on_4_nodes() -> anyhow::Result<()> {
    a_weak_publish_is_spread_over_the_jitter(4).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_weak_publish_is_spread_over_the_jitter_on_40_nodes() -> anyhow::Result<()> {
    a_weak_publish_is_spread_over_the_jitter(40).await
}
