//! Watching a deployment through a real server: the summary and the SSE feed of a 100,000-node deployment
//! stay under 10 KB per update (the full view is megabytes), node pages filter and count, the feed ends
//! with the terminal status, and a server refuses watches beyond its bound.

use std::time::Duration;

use convoy_node::client::ApiClient;
use convoy_node::sse::{SseEvent, SseReader};
use convoy_tests::scenario::{get_ok, post_ok, publish, resource_with_v1};
use convoy_tests::{eventually, Cluster, RawClient};
use serde_json::{json, Value};

const NODES: usize = 100_000;
const BATCH: usize = 5_000;
const LONG: Duration = Duration::from_secs(120);

fn node(i: usize) -> String {
    format!("n{i}")
}

/// Reports `nodes` as alive on version 1 of `app`, sending again whatever a batch rejects.
async fn report_v1(api: &RawClient, nodes: Vec<String>) -> anyhow::Result<()> {
    let mut todo = nodes;
    for _ in 0..50 {
        if todo.is_empty() {
            return Ok(());
        }
        let reports: Vec<Value> = todo
            .iter()
            .map(|n| {
                json!({"node": n, "resources": {"app": {"current": 1,
                    "versions": {"1": {"downloaded": true, "installed": true, "done": true}}}}})
            })
            .collect();
        let answer = post_ok(api, "/v1/nodes/reports", json!({ "reports": reports })).await?;
        let rejected = answer["rejected"].as_object().cloned().unwrap_or_default();
        todo.retain(|n| rejected.contains_key(n));
        if !todo.is_empty() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    anyhow::bail!("{} reports still rejected", todo.len())
}

async fn next_summary(reader: &mut SseReader) -> anyhow::Result<(SseEvent, Value)> {
    loop {
        let event = tokio::time::timeout(LONG, reader.next())
            .await??
            .ok_or_else(|| anyhow::anyhow!("the feed closed"))?;
        if event.event == "summary" {
            let summary = serde_json::from_str(&event.data)?;
            return Ok((event, summary));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100k_node_deployment_is_watched_in_under_10_kb_per_update() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(1).client();
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    let nodes: Vec<String> = (0..NODES).map(node).collect();
    post_ok(
        &api,
        "/v1/consumers",
        json!({"name": "big", "nodes": nodes}),
    )
    .await?;
    for start in (0..NODES).step_by(BATCH) {
        report_v1(&api, (start..start + BATCH).map(node).collect()).await?;
    }
    // Reports reach the log in the leader's batches: wait until the last of each batch is active.
    for start in (0..NODES).step_by(BATCH) {
        let last = node(start + BATCH - 1);
        eventually(LONG, || {
            let api = api.clone();
            let path = format!("/v1/nodes/{last}");
            async move { (get_ok(&api, &path).await.ok()?["active"] == true).then_some(()) }
        })
        .await?;
    }
    let started = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "big", "resource": "app", "version": 2, "min_healthy_ms": 0,
               "strategy": {"rolling": {"install_window": 100, "download_window": 100}}}),
    )
    .await?;
    let id = started["id"].as_str().unwrap().to_string();

    let summary = get_ok(&api, &format!("/v1/deployments/{id}/summary")).await?;
    assert_eq!(summary["nodes"], NODES, "{summary}");
    assert_eq!(summary["counts"]["installing"], 100, "{summary}");
    assert_eq!(
        summary["windows"]["install"],
        json!({"used": 100, "size": 100})
    );
    let summary_bytes = summary.to_string().len();
    assert!(summary_bytes < 10_000, "summary is {summary_bytes} bytes");

    let (status, page) = api
        .get(&format!(
            "/v1/deployments/{id}?state=installing&offset=90&limit=20"
        ))
        .await?;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["nodes"].as_array().unwrap().len(),
        10,
        "90 of 100 skipped"
    );
    assert_eq!(page["page"]["matched"], 100);
    assert_eq!(page["page"]["total"], NODES);
    let (status, refused) = api.get(&format!("/v1/deployments/{id}?limit=0")).await?;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (400, Some("bad_request"))
    );

    let full = get_ok(&api, &format!("/v1/deployments/{id}")).await?;
    let full_bytes = full.to_string().len();
    assert!(
        full_bytes > 100 * summary_bytes,
        "the full view ({full_bytes} bytes) is what the summary spares"
    );

    let client = ApiClient::new(&cluster.server(1).http_addr)?;
    let stream = client
        .open_stream(&format!("/v1/deployments/{id}/watch"), LONG)
        .await?;
    let mut reader = SseReader::new(stream);
    let (first, s1) = next_summary(&mut reader).await?;
    assert!(
        first.wire_bytes < 10_000,
        "first event: {} bytes",
        first.wire_bytes
    );
    assert_eq!(s1["nodes"], NODES);

    // Ten nodes of the install window finish: one update, still small.
    let reports: Vec<Value> = (0..10)
        .map(|i| {
            json!({"node": node(i), "resources": {"app": {"current": 2, "versions": {
                "1": {"downloaded": true, "installed": true, "done": true},
                "2": {"downloaded": true, "installed": true, "done": true}}}}})
        })
        .collect();
    post_ok(&api, "/v1/nodes/reports", json!({ "reports": reports })).await?;
    let (update, s2) = next_summary(&mut reader).await?;
    assert!(
        update.wire_bytes < 10_000,
        "update: {} bytes",
        update.wire_bytes
    );
    assert_ne!(s1["fingerprint"], s2["fingerprint"]);
    assert!(update.id.unwrap().parse::<u64>()? > first.id.unwrap().parse::<u64>()?);

    // Abort: the feed sends the terminal summary, an end event, and closes.
    post_ok(&api, &format!("/v1/deployments/{id}/abort"), json!({})).await?;
    let mut last = s2;
    while last["status"] != "ABORTED" {
        last = next_summary(&mut reader).await?.1;
    }
    let end = tokio::time::timeout(LONG, reader.next()).await??.unwrap();
    assert_eq!(end.event, "end");
    assert_eq!(
        serde_json::from_str::<Value>(&end.data)?,
        json!({"id": id, "status": "ABORTED"})
    );
    assert!(tokio::time::timeout(LONG, reader.next()).await??.is_none());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_bounds_its_watches_and_unknown_ids_are_404() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(1).client();
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({})).await?;
    post_ok(&api, "/v1/consumers", json!({"name": "c", "nodes": ["a"]})).await?;
    report_one(&api).await?;
    let started = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "c", "resource": "app", "version": 2}),
    )
    .await?;
    let id = started["id"].as_str().unwrap().to_string();
    let client = ApiClient::new(&cluster.server(1).http_addr)?;
    let path = format!("/v1/deployments/{id}/watch");
    let mut open = Vec::new();
    for _ in 0..convoy_node::api::deployment_feed::MAX_WATCHERS {
        let mut reader = SseReader::new(client.open_stream(&path, LONG).await?);
        next_summary(&mut reader).await?;
        open.push(reader);
    }
    let refused = client.open_stream(&path, LONG).await.unwrap_err();
    assert!(
        refused.to_string().contains("deployment watches"),
        "{refused}"
    );
    // The summary route is not a watch: it still answers while every slot is taken.
    get_ok(&api, &format!("/v1/deployments/{id}/summary")).await?;
    drop(open);
    let (status, body) = api.get("/v1/deployments/d-999/watch").await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
    Ok(())
}

/// Reports node `a` alive until the server shows it active (an agent reports periodically too).
async fn report_one(api: &RawClient) -> anyhow::Result<()> {
    eventually(LONG, || {
        let api = api.clone();
        async move {
            report_v1(&api, vec!["a".to_string()]).await.ok()?;
            tokio::time::sleep(Duration::from_millis(300)).await;
            (get_ok(&api, "/v1/nodes/a").await.ok()?["active"] == true).then_some(())
        }
    })
    .await
}
