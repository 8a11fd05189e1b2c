//! A partition: the minority side cannot commit; the majority elects a leader and commits; after
//! healing, the minority catches up with everything the majority committed.

use std::time::Duration;

use convoy_tests::{eventually, names};
use convoy_tests::{Cluster, Partitions};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minority_cannot_commit_and_the_cluster_heals() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let old_leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let majority: Vec<u64> = cluster
        .running()
        .into_iter()
        .filter(|id| *id != old_leader)
        .collect();

    cluster.partition(&[old_leader]).await?;
    let new_leader = cluster
        .wait_leader_among(&majority, Duration::from_secs(10))
        .await?;
    assert_ne!(new_leader, old_leader);

    // The isolated old leader cannot commit.
    let (status, body) = cluster
        .server(old_leader)
        .client()
        .post("/v1/resources", &json!({"name": "minority"}))
        .await?;
    assert_eq!(status, 503, "minority write must fail: {body}");

    // The majority commits.
    let (status, body) = cluster
        .server(new_leader)
        .client()
        .post("/v1/resources", &json!({"name": "majority"}))
        .await?;
    assert_eq!(status, 201, "{body}");

    cluster.heal().await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    assert!(majority.contains(&leader) || leader == old_leader);
    let client = cluster.server(old_leader).client();
    eventually(Duration::from_secs(10), || {
        let client = client.clone();
        async move {
            let (_, list) = client.get("/v1/resources").await.ok()?;
            (names(&list) == vec!["majority"]).then_some(())
        }
    })
    .await
    .map_err(|e| anyhow::anyhow!("old leader did not converge: {e}\n{}", cluster.logs()))?;
    Ok(())
}
