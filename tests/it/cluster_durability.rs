//! Durability: a whole cluster killed and restarted from its data dirs has every committed write;
//! a server far behind catches up through a snapshot.

use std::time::Duration;

use convoy_tests::scenario::{create_resources, kill_all_and_restart, wait_resources};
use convoy_tests::{Cluster, ClusterOptions};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarted_cluster_has_every_committed_write() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let client = cluster.server(leader).client();
    let written = create_resources(&client, 40).await?;
    let leader = kill_all_and_restart(&mut cluster, &written).await?;
    // The restarted cluster keeps accepting writes.
    let (status, _) = cluster
        .server(leader)
        .client()
        .post("/v1/resources", &json!({"name": "after"}))
        .await?;
    assert_eq!(status, 201);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_far_behind_catches_up_through_a_snapshot() -> anyhow::Result<()> {
    let options = ClusterOptions {
        snapshot_every: 20,
        snapshot_max_every: Some(20),
        ..ClusterOptions::for_tests(3)
    };
    let mut cluster = Cluster::start_with(options).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let lagging = cluster
        .running()
        .into_iter()
        .find(|id| *id != leader)
        .unwrap();
    cluster.server_mut(lagging).kill();

    let client = cluster.server(leader).client();
    let mut written = Vec::new();
    for i in 0..150 {
        let name = format!("res-{i:03}");
        let (status, body) = client.post("/v1/resources", &json!({"name": name})).await?;
        assert_eq!(status, 201, "{body}");
        written.push(name);
    }
    // The leader has purged the log the lagging server would need.
    let (_, info) = client.get("/v1/cluster").await?;
    let purged = info["purged"].as_u64().unwrap_or(0);
    assert!(purged > 20, "leader did not purge its log: {info}");

    cluster.restart(lagging)?;
    let lagging_client = cluster.server(lagging).client();
    wait_resources(&lagging_client, &written, Duration::from_secs(15))
        .await
        .map_err(|e| anyhow::anyhow!("lagging server {lagging}: {e}\n{}", cluster.logs()))?;
    let (_, info) = lagging_client.get("/v1/cluster").await?;
    assert!(
        info["snapshot"].as_u64().unwrap_or(0) > 0,
        "no snapshot installed on {lagging}: {info}"
    );
    Ok(())
}
