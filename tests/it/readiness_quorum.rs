//! A server that cannot reach a quorum is not ready (issue 39 §6): a leader whose two followers were
//! SIGKILLed answers `/readyz` 503 `no_quorum` (saying how long since a quorum acknowledged it) and 200 again
//! once they are back; a follower cut off from its leader answers 503 `leader_unreachable` until it hears
//! from a leader again.

use std::time::Duration;

use convoy_tests::{eventually, Cluster, Partitions, RawClient};
use serde_json::Value;

/// Waits up to `within` for `client`'s `/readyz` to answer 503 with `code`; returns the body.
async fn not_ready(client: &RawClient, code: &str, within: Duration) -> anyhow::Result<Value> {
    let found = eventually(within, || {
        let client = client.clone();
        async move {
            let (status, body) = client.get("/readyz").await.ok()?;
            (status == 503 && body["error"]["code"] == code).then_some(body)
        }
    })
    .await;
    match found {
        Ok(body) => Ok(body),
        Err(e) => {
            let last = client.get("/readyz").await;
            anyhow::bail!("/readyz never said {code}: {e}; now {last:?}")
        }
    }
}

/// Waits up to `within` for `client`'s `/readyz` to answer 200 `ready`.
async fn ready(client: &RawClient, within: Duration) -> anyhow::Result<()> {
    eventually(within, || {
        let client = client.clone();
        async move {
            let (status, body) = client.get("/readyz").await.ok()?;
            (status == 200 && body["status"] == "ready").then_some(())
        }
    })
    .await
    .map_err(|e| anyhow::anyhow!("/readyz never answered 200 ready again: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_whose_followers_were_killed_is_not_ready_until_they_are_back(
) -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let result = async {
        let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
        let followers: Vec<u64> = cluster
            .running()
            .into_iter()
            .filter(|id| *id != leader)
            .collect();
        for id in &followers {
            cluster.server_mut(*id).kill();
        }
        let client = cluster.server(leader).client();
        // A deadline, not a latency: the bound is the quorum patience (about a second by default).
        let body = not_ready(&client, "no_quorum", Duration::from_secs(10)).await?;
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("no quorum of voters has acknowledged it for")
                && message.contains(" s"),
            "{body}"
        );
        for id in &followers {
            cluster.restart(*id)?;
        }
        ready(&client, Duration::from_secs(20)).await
    }
    .await;
    cluster.logs_on_error(result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_cut_off_from_its_leader_is_not_ready_until_healed() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let result = async {
        let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
        let follower = cluster
            .running()
            .into_iter()
            .find(|id| *id != leader)
            .expect("a follower");
        cluster.partition(&[follower]).await?;
        let client = cluster.server(follower).client();
        let body = not_ready(&client, "leader_unreachable", Duration::from_secs(10)).await?;
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!(
                "has not heard from its leader, server {leader}, for"
            )),
            "{body}"
        );
        // The majority keeps its leader and stays ready.
        ready(&cluster.server(leader).client(), Duration::from_secs(10)).await?;
        cluster.heal().await?;
        ready(&client, Duration::from_secs(20)).await
    }
    .await;
    cluster.logs_on_error(result)
}
