//! Retention through real servers: with `deployment_history = 2`, after four finished deployments
//! the leader prunes the two oldest; `GET` of each says `"pruned": true` on every server, with its
//! summary (status, node counts) kept and its node list and node events gone; the two newest keep
//! everything, and every server's state digest is the same.

use std::time::Duration;

use convoy_tests::scenario::{consumer, post_ok, publish, resource_with_v1};
use convoy_tests::{eventually, Cluster, ClusterOptions};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oldest_finished_deployments_beyond_the_history_are_pruned() -> anyhow::Result<()> {
    let options = ClusterOptions {
        extra: "deployment_history = 2\n".into(),
        ..ClusterOptions::for_tests(3)
    };
    let cluster = Cluster::start_with(options).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(leader).client();
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "next"})).await?;
    for node in consumer(&api, "web", 3).await? {
        let done = json!({"downloaded": true, "installed": true, "done": true, "healthy": true});
        let report = json!({"resources": {"app": {"current": 1, "versions": {"1": done}}}});
        // One report, right after the consumer is created, must be applied (it once was answered
        // but dropped when it beat the supervisor to the new consumer's actor).
        let status = api
            .post(&format!("/v1/nodes/{node}/report"), &report)
            .await?
            .0;
        anyhow::ensure!(status == 200, "report of {node}: {status}");
        let path = format!("/v1/nodes/{node}");
        eventually(Duration::from_secs(10), || {
            let (api, path) = (api.clone(), path.clone());
            async move {
                let (status, view) = api.get(&path).await.ok()?;
                (status == 200 && view["active"] == true).then_some(())
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("{node} never became active: {e}"))?;
    }

    // Each deployment is aborted while its nodes are on their way (or taken as it finished).
    let mut ids = Vec::new();
    let mut statuses = Vec::new();
    let mut views = Vec::new();
    for _ in 0..4 {
        let started = post_ok(
            &api,
            "/v1/deployments",
            json!({"consumer": "web", "resource": "app", "version": 2, "strategy": {"all_at_once": {}}}),
        )
        .await?;
        let id = started["id"].as_str().unwrap().to_string();
        let path = format!("/v1/deployments/{id}");
        let (_, view) = api.get(&path).await?;
        if !["ROLLED_FORWARD", "ROLLED_BACK", "ABORTED", "FAILED"]
            .contains(&view["status"].as_str().unwrap_or_default())
        {
            post_ok(&api, &format!("{path}/abort"), json!({})).await?;
        }
        let (_, view) = api.get(&path).await?;
        statuses.push(view["status"].clone());
        views.push(view);
        ids.push(id);
    }

    for (id, status) in ids[..2].iter().zip(&statuses) {
        for server in cluster.servers.keys() {
            let client = cluster.server(*server).client();
            let path = format!("/v1/deployments/{id}");
            let view: Value = eventually(Duration::from_secs(30), || {
                let (client, path) = (client.clone(), path.clone());
                async move {
                    let (status, view) = client.get(&path).await.ok()?;
                    (status == 200 && view["pruned"] == true).then_some(view)
                }
            })
            .await
            .map_err(|e| anyhow::anyhow!("{id} not pruned on server {server}: {e}"))?;
            assert_eq!(view["status"], *status, "{view}");
            assert_eq!(view["nodes"], json!([]), "{view}");
            let events = view["events"].as_array().unwrap();
            assert!(events.iter().all(|e| e["node"].is_null()), "{view}");
            assert!(events.iter().any(|e| e["action"] == "pruned"), "{view}");
        }
    }
    // The first one had node detail to drop; the two newest are as they ended.
    assert!(
        !views[0]["nodes"].as_array().unwrap().is_empty(),
        "{}",
        views[0]
    );
    for (id, ended) in ids[2..].iter().zip(&views[2..]) {
        let (_, view) = api.get(&format!("/v1/deployments/{id}")).await?;
        assert!(view.get("pruned").is_none(), "{view}");
        assert_eq!(view, *ended);
    }
    // The summary line of a pruned deployment is still listed.
    let (_, list) = api.get("/v1/deployments").await?;
    let listed: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert!(ids.iter().all(|id| listed.contains(&id.as_str())), "{list}");

    let digests = eventually(Duration::from_secs(10), || {
        let clients: Vec<_> = cluster.servers.values().map(|s| s.client()).collect();
        async move {
            let mut seen = Vec::new();
            for c in clients {
                let (_, d) = c.get("/v1/cluster/digest").await.ok()?;
                seen.push((d["last_applied"].clone(), d["sha256"].clone()));
            }
            seen.windows(2).all(|w| w[0] == w[1]).then_some(seen)
        }
    })
    .await?;
    assert_eq!(digests.len(), 3);
    Ok(())
}
