//! Issue 12, failure 8 (the snooze half), through the real binary and a real `convoy agent`: a
//! `.healthchecksnooze` file present from the start once meant the version was never done and never
//! failed. Now a snoozed check counts as passed, so the version finishes and the deployment rolls
//! forward; and the snooze lasts at most `--snooze-max-ms`: then the (failing) checks resume and the
//! node reports the version unhealthy, although the file is still there.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{consumer, post_ok, put_ok, wait_status};
use convoy_tests::{eventually, Agent, Cluster, RawClient};
use serde_json::json;

/// A health endpoint whose every `GET /health` answers `bad`.
fn failing_health(checks: Arc<AtomicUsize>) -> anyhow::Result<u16> {
    Ok(convoy_tests::stub::serve(move |_, mut stream| {
        checks.fetch_add(1, Ordering::SeqCst);
        let reply = "HTTP/1.1 200 OK\r\ncontent-length: 3\r\nconnection: close\r\n\r\nbad";
        let _ = stream.write_all(reply.as_bytes());
    })?)
}

async fn scenario(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    let checks = Arc::new(AtomicUsize::new(0));
    let port = failing_health(checks.clone())?;
    post_ok(api, "/v1/resources", json!({"name": "web"})).await?;
    consumer(api, "edge", 1).await?;
    let dir = tempfile::tempdir()?;
    // The snooze file is there before the version is installed.
    let resource_dir = dir.path().join("edge-0").join("resources").join("web");
    std::fs::create_dir_all(&resource_dir)?;
    std::fs::write(resource_dir.join(".healthchecksnooze"), "maintenance")?;
    let agent = Agent::start(
        cluster,
        "edge-0",
        dir.path(),
        &[
            "--interval-ms",
            "200",
            "--run-command",
            "exec sleep 1000",
            "--health-interval-ms",
            "100",
            "--health-grace-ms",
            "0",
            "--max-consecutive-failures",
            "1",
            "--snooze-max-ms",
            "3000",
            "--graceful-ms",
            "200",
        ],
    )?;
    agent.wait_active(api).await?;
    let v = post_ok(
        api,
        "/v1/resources/web/versions",
        json!({"health_port": port}),
    )
    .await?["version"]
        .as_u64()
        .context("version")?;
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "edge", "resource": "web", "version": v,
               "min_healthy_ms": 500, "rollback_on_failure": false}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?.to_string();
    put_ok(
        api,
        "/v1/consumers/edge/subscriptions/web",
        json!({"mode": "strong", "pin": v}),
    )
    .await?;
    // Snoozed checks count as passed: done, healthy through the watch, rolled forward.
    let view = wait_status(api, &id, "ROLLED_FORWARD", Duration::from_secs(20))
        .await
        .with_context(|| format!("agent:\n{}", agent.output()))?;
    ensure!(view["nodes"][0]["state"] == "succeeded", "{view}");
    ensure!(
        checks.load(Ordering::SeqCst) == 0,
        "a check was made during the snooze"
    );
    // After --snooze-max-ms the checks resume, despite the file, and fail.
    eventually(Duration::from_secs(15), || async {
        let (_, node) = api.get("/v1/nodes/edge-0").await.ok()?;
        let p = &node["resources"]["web"]["versions"][v.to_string()];
        (p["healthy"] == false || p["error"].is_string()).then_some(())
    })
    .await
    .with_context(|| format!("the snooze never ended:\n{}", agent.output()))?;
    ensure!(
        checks.load(Ordering::SeqCst) > 0,
        "no check after the snooze"
    );
    drop(agent);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snooze_counts_healthy_for_at_most_its_limit() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    cluster.logs_on_error(scenario(&cluster, &api).await)
}
