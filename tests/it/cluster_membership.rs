//! Membership 3 → 5 → 3 through the API while writes continue: nothing acknowledged is lost.

use std::sync::Arc;
use std::time::Duration;

use convoy_tests::{eventually, names};
use convoy_tests::{Cluster, RawClient};
use serde_json::json;
use tokio::sync::Mutex;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grow_to_five_and_shrink_to_three_under_writes() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let admin = cluster.server(leader).client();

    // A writer keeps proposing through server 1..3 in turn while membership changes.
    let clients: Vec<RawClient> = (1..=3).map(|id| cluster.server(id).client()).collect();
    let acked = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let acked = acked.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut i = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && i < 2000 {
                let name = format!("w{i:04}");
                if let Ok((201, _)) = clients[i % 3]
                    .post("/v1/resources", &json!({"name": name}))
                    .await
                {
                    acked.lock().await.push(name);
                }
                i += 1;
            }
        })
    };

    for id in [4, 5] {
        cluster.spawn_joiner(id)?;
        let s = cluster.server(id);
        let (status, body) = admin
            .post(
                "/v1/cluster/members",
                &json!({"id": id, "raft_addr": s.raft_addr, "http_addr": s.http_addr}),
            )
            .await?;
        assert_eq!(status, 200, "adding {id}: {body}\n{}", cluster.logs());
    }
    let (_, info) = admin.get("/v1/cluster").await?;
    let voters = info["members"].as_array().unwrap();
    assert_eq!(voters.len(), 5, "{info}");
    assert!(voters.iter().all(|m| m["role"] != "learner"), "{info}");

    for id in [4, 5] {
        let (status, body) = admin.delete(&format!("/v1/cluster/members/{id}")).await?;
        assert_eq!(status, 200, "removing {id}: {body}");
    }
    let (status, body) = admin.delete("/v1/cluster/members/42").await?;
    assert_eq!(status, 400, "removing an unknown member must fail: {body}");

    // A removed server says so: not ready, and it takes no writes.
    for id in [4, 5] {
        let removed = cluster.server(id).client();
        let (status, body) = eventually(Duration::from_secs(10), || {
            let removed = removed.clone();
            async move {
                let answer = removed.get("/readyz").await.ok()?;
                (answer.1["error"]["code"] == "not_a_member").then_some(answer)
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("removed server {id} still ready: {e}\n{}", cluster.logs()))?;
        assert_eq!(status, 503, "{body}");
        let (status, body) = removed
            .post(
                "/v1/resources",
                &json!({"name": format!("after-removal-{id}")}),
            )
            .await?;
        assert_eq!(status, 503, "a removed server must refuse writes: {body}");
        assert_eq!(body["error"]["code"], "not_a_member", "{body}");
    }

    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.await?;
    let acked = acked.lock().await.clone();
    assert!(
        acked.len() > 5,
        "the writer made too little progress: {}",
        acked.len()
    );

    let (_, info) = admin.get("/v1/cluster").await?;
    assert_eq!(info["members"].as_array().unwrap().len(), 3, "{info}");
    for id in 1..=3 {
        let client = cluster.server(id).client();
        let want = acked.clone();
        eventually(Duration::from_secs(10), || {
            let client = client.clone();
            let want = want.clone();
            async move {
                let (_, list) = client.get("/v1/resources").await.ok()?;
                let have = names(&list);
                want.iter().all(|n| have.contains(n)).then_some(())
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("server {id} lost acknowledged writes: {e}"))?;
    }
    Ok(())
}
