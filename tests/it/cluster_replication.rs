//! Three real servers elect a leader and replicate; writes sent to a follower succeed; reads on
//! any server see them, and `consistent=true` reads see them at once; the server that took a
//! write shows it in its next read.

use std::time::Duration;

use convoy_tests::Cluster;
use convoy_tests::{eventually, names};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_servers_elect_replicate_and_forward() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let follower = cluster
        .running()
        .into_iter()
        .find(|id| *id != leader)
        .unwrap();

    let (status, info) = cluster.server(follower).client().get("/v1/cluster").await?;
    assert_eq!(status, 200);
    assert_eq!(info["id"], follower);
    assert_eq!(info["leader_id"], leader);
    assert_eq!(info["members"].as_array().unwrap().len(), 3);

    // A write sent to a follower is forwarded to the leader and succeeds.
    let (status, body) = cluster
        .server(follower)
        .client()
        .post("/v1/resources", &json!({"name": "web"}))
        .await?;
    assert_eq!(status, 201, "{body}\n{}", cluster.logs());
    assert_eq!(body["name"], "web", "the answer shows the write");
    // Read-your-writes on the follower that forwarded it, without a read barrier: the write's
    // answer came only once this server had applied it too.
    let (status, list) = cluster
        .server(follower)
        .client()
        .get("/v1/resources")
        .await?;
    assert_eq!(status, 200);
    assert_eq!(
        names(&list),
        vec!["web"],
        "follower {follower} after its own write"
    );

    // A consistent read on another follower sees it immediately.
    for id in cluster.running() {
        let (status, list) = cluster
            .server(id)
            .client()
            .get("/v1/resources?consistent=true")
            .await?;
        assert_eq!(status, 200);
        assert_eq!(names(&list), vec!["web"], "server {id}");
    }

    // A duplicate is refused with the API's error shape and changes nothing.
    let (status, body) = cluster
        .server(leader)
        .client()
        .post("/v1/resources", &json!({"name": "web"}))
        .await?;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("web"),
        "{body}"
    );

    for id in cluster.running() {
        let client = cluster.server(id).client();
        eventually(Duration::from_secs(5), || {
            let client = client.clone();
            async move {
                let (_, list) = client.get("/v1/resources").await.ok()?;
                (names(&list) == vec!["web"]).then_some(())
            }
        })
        .await?;
    }

    for id in cluster.running() {
        let (status, _) = cluster.server(id).client().get("/readyz").await?;
        assert_eq!(status, 200, "server {id} not ready");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_a_server_cleanly() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    assert!(
        cluster.server_mut(leader).terminate(),
        "server did not exit 0 on SIGTERM:\n{}",
        cluster.logs()
    );
    let new_leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    assert_ne!(new_leader, leader);
    Ok(())
}
