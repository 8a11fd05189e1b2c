//! Safety that composes (issue 35) through a real server: why a deployment waits is one set of reasons, each
//! lifted only by its owner, and every deadline counts only the time it moved (DEPLOYMENTS.md §6). A person's
//! pause longer than the completion timeout uses none of it; a person's pause under the batch autopause is kept
//! and answers pulses STOP; a node that fails and recovers while the deployment is paused is watched again.

use std::time::Duration;

use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, report_running, resource_with_v1, wait_deployment,
    wait_running, wait_status,
};
use convoy_tests::{Cluster, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(60);

async fn start(api: &RawClient, consumer: &str, body: Value) -> anyhow::Result<String> {
    let mut body = body;
    body["consumer"] = json!(consumer);
    body["resource"] = json!("app");
    body["version"] = json!(2);
    let started = post_ok(api, "/v1/deployments", body).await?;
    Ok(started["id"].as_str().expect("an id").to_string())
}

fn reasons(view: &Value) -> Vec<String> {
    view["waits"]
        .as_array()
        .map(|ws| {
            ws.iter()
                .filter_map(|w| w["reason"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

async fn pulse(api: &RawClient, id: &str) -> anyhow::Result<String> {
    let answer = post_ok(api, &format!("/v1/deployments/{id}/pulse"), json!({})).await?;
    Ok(answer["status"].as_str().unwrap_or_default().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_longer_than_the_completion_timeout_uses_none_of_it() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let api = cluster.client_except(u64::MAX);
    resource_with_v1(&api, "app").await?;
    let nodes = consumer(&api, "web", 3).await?;
    let fleet = FleetConfig {
        install: Duration::from_millis(300),
        ..FleetConfig::new("app")
    };
    let _fleet = fleet.start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(&api, &nodes, "app", 1, LONG).await?;
    publish(&api, "app", json!({})).await?;
    let id = start(
        &api,
        "web",
        json!({"strategy": {"rolling": {"install_window": 1, "download_window": 1}},
               "completion": {"timeout_ms": 5_000}}),
    )
    .await?;
    let paused = post_ok(&api, &format!("/v1/deployments/{id}/pause"), json!({})).await?;
    assert_eq!(paused["status"], "ROLL_FORWARD_PAUSED", "{paused}");
    // Paused for 7 s: longer than the 5 s timeout.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let view = get_ok(&api, &format!("/v1/deployments/{id}")).await?;
    assert_eq!(
        view["status"], "ROLL_FORWARD_PAUSED",
        "the timer fired while paused: {view}"
    );
    assert_eq!(reasons(&view), ["user"], "{view}");
    post_ok(&api, &format!("/v1/deployments/{id}/resume"), json!({})).await?;
    let done = wait_deployment(&api, &id, LONG, |v| {
        v["status"]
            .as_str()
            .is_some_and(|s| matches!(s, "ROLLED_FORWARD" | "ROLLED_BACK" | "FAILED" | "ABORTED"))
    })
    .await?;
    assert_eq!(done["status"], "ROLLED_FORWARD", "{done}");
    let consumer = get_ok(&api, "/v1/consumers/web").await?;
    let holds = consumer["holds"].as_array().cloned().unwrap_or_default();
    assert!(
        holds.is_empty(),
        "a version no node failed is held: {consumer}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_pause_under_the_autopause_is_kept_and_answers_pulses_stop() -> anyhow::Result<()>
{
    let cluster = Cluster::start(1).await?;
    let api = cluster.client_except(u64::MAX);
    resource_with_v1(&api, "app").await?;
    let nodes = consumer(&api, "web", 2).await?;
    let _fleet = FleetConfig::new("app").start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(&api, &nodes, "app", 1, LONG).await?;
    publish(&api, "app", json!({})).await?;
    let id = start(
        &api,
        "web",
        json!({"strategy": {"batch": {"sizes": [1], "autopause": true}}, "pulse_interval_ms": 60_000}),
    )
    .await?;
    assert_eq!(pulse(&api, &id).await?, "OK");
    let auto = wait_deployment(&api, &id, LONG, |v| v["paused_by"] == "auto").await?;
    assert_eq!(reasons(&auto), ["auto"], "{auto}");
    assert_eq!(pulse(&api, &id).await?, "OK", "the autopause is no person");
    let paused = post_ok(&api, &format!("/v1/deployments/{id}/pause"), json!({})).await?;
    assert_eq!(
        paused["paused_by"], "user",
        "a person's pause ranks first: {paused}"
    );
    assert_eq!(
        pulse(&api, &id).await?,
        "STOP",
        "seed 000 case 5: a person holds it"
    );
    let view = get_ok(&api, &format!("/v1/deployments/{id}")).await?;
    assert_eq!(reasons(&view), ["user", "auto"], "{view}");
    assert_eq!(view["waits"][0]["by"], "user", "who paused it: {view}");
    post_ok(&api, &format!("/v1/deployments/{id}/resume"), json!({})).await?;
    assert_eq!(pulse(&api, &id).await?, "OK");
    wait_status(&api, &id, "ROLLED_FORWARD", LONG).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_fails_and_recovers_while_paused_is_watched_again() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let api = cluster.client_except(u64::MAX);
    resource_with_v1(&api, "app").await?;
    let nodes = consumer(&api, "db", 1).await?;
    // The test speaks for the node itself: its reports go through the server's report route.
    report_running(&api, &nodes, "app", 1).await?;
    publish(&api, "app", json!({})).await?;
    let id = start(&api, "db", json!({"strategy": {"all_at_once": {}}})).await?;
    let node = &nodes[0];
    let report = |body: Value| {
        let api = &api;
        async move { post_ok(api, &format!("/v1/nodes/{node}/report"), body).await }
    };
    report(json!({"resources": {"app": {"current": 1,
        "versions": {"2": {"downloaded": true, "installed": false, "done": false}}}}}))
    .await?;
    post_ok(&api, &format!("/v1/deployments/{id}/pause"), json!({})).await?;
    // Aurora's testSuccessfulUpdate: the node crashes while the update is paused...
    report(json!({"resources": {"app": {"current": 2,
        "versions": {"2": {"downloaded": true, "installed": true, "done": true, "healthy": false}}}}}))
    .await?;
    let view = get_ok(&api, &format!("/v1/deployments/{id}")).await?;
    assert_eq!(
        view["nodes"][0]["state"], "installing",
        "judged while paused: {view}"
    );
    // ...and is healthy again before the resume.
    report(json!({"resources": {"app": {"current": 2,
        "versions": {"2": {"downloaded": true, "installed": true, "done": true, "healthy": true}}}}}))
    .await?;
    post_ok(&api, &format!("/v1/deployments/{id}/resume"), json!({})).await?;
    let done = wait_status(&api, &id, "ROLLED_FORWARD", LONG).await?;
    assert_eq!(done["nodes"][0]["failures"], 0, "{done}");
    Ok(())
}
