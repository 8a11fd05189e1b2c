//! Bake times, deadlines, confirmation gates and the hard pause (DEPLOYMENTS.md §14) through a real server
//! and simulated agents whose installs take several report rounds: a bake between two batches, a node past
//! its healthy deadline freeing its batch, a confirmation gate that only `confirm` passes, and a hard pause
//! that takes back install permission not yet used.

use std::time::Duration;

use convoy_tests::scenario::{
    consumer, count_nodes, post_ok, publish, resource_with_v1, wait_deployment, wait_running,
    wait_status,
};
use convoy_tests::{Cluster, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(60);

/// A server, consumer `web` of `n` nodes running v1 of `app` under `fleet`, and v2 published.
async fn setup(
    n: usize,
    fleet: FleetConfig,
) -> anyhow::Result<(Cluster, RawClient, convoy_tests::Fleet)> {
    let cluster = Cluster::start(1).await?;
    let api = cluster.client_except(u64::MAX);
    resource_with_v1(&api, "app").await?;
    let nodes = consumer(&api, "web", n).await?;
    let fleet = fleet.start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(&api, &nodes, "app", 1, LONG).await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    Ok((cluster, api, fleet))
}

async fn start(api: &RawClient, body: Value) -> anyhow::Result<String> {
    let mut body = body;
    body["consumer"] = json!("web");
    body["resource"] = json!("app");
    body["version"] = json!(2);
    let started = post_ok(api, "/v1/deployments", body).await?;
    Ok(started["id"].as_str().expect("an id").to_string())
}

/// The leader-stamped time of the first event of `action` (for `node`, when given).
fn event_at(view: &Value, action: &str, node: Option<&str>) -> Option<u64> {
    view["events"]
        .as_array()?
        .iter()
        .find(|e| e["action"] == action && node.is_none_or(|n| e["node"] == n))
        .and_then(|e| e["at"].as_u64())
}

/// The state of `node` in the deployment `view` ("" when it is not there).
fn node_state<'a>(view: &'a Value, node: &str) -> &'a str {
    view["nodes"]
        .as_array()
        .and_then(|ns| ns.iter().find(|n| n["id"] == node))
        .and_then(|n| n["state"].as_str())
        .unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_batch_waits_the_bake_time() -> anyhow::Result<()> {
    let fleet = FleetConfig {
        install: Duration::from_millis(300),
        ..FleetConfig::new("app")
    };
    let (_cluster, api, _fleet) = setup(4, fleet).await?;
    let id = start(
        &api,
        json!({"strategy": {"batch": {"sizes": [2]}}, "pacing": {"bake_ms": 3_000}}),
    )
    .await?;
    let baking = wait_deployment(&api, &id, LONG, |v| count_nodes(v, "succeeded") == 2).await?;
    let summary = api.get(&format!("/v1/deployments/{id}/summary")).await?.1;
    assert_eq!(count_nodes(&baking, "pending"), 2, "{baking}");
    let done = wait_status(&api, &id, "ROLLED_FORWARD", LONG).await?;
    let bake = event_at(&done, "bake", None).expect("a bake event");
    let next = event_at(&done, "install", Some("web-2")).expect("web-2 admitted");
    assert!(
        next >= bake + 3_000,
        "batch 2 started {} ms into a 3000 ms bake",
        next - bake
    );
    // Read within the 3 s bake: the summary says it bakes, and until when.
    assert_eq!(
        summary["pace"]["baking_until"],
        json!(bake + 3_000),
        "{summary}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_past_its_healthy_deadline_frees_its_batch() -> anyhow::Result<()> {
    // Installs that never finish: the agents report (downloaded, installing) round after round.
    let fleet = FleetConfig {
        install: Duration::from_secs(3_600),
        ..FleetConfig::new("app")
    };
    let (_cluster, api, _fleet) = setup(2, fleet).await?;
    let id = start(
        &api,
        json!({"strategy": {"batch": {"sizes": [1]}}, "max_failed_nodes": 1,
               "rollback_on_failure": false, "pacing": {"healthy_deadline_ms": 1_500}}),
    )
    .await?;
    let moved = wait_deployment(&api, &id, LONG, |v| node_state(v, "web-1") != "pending").await?;
    assert_eq!(node_state(&moved, "web-0"), "failed", "{moved}");
    let failure = moved["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "failed" && e["node"] == "web-0")
        .expect("web-0's failure")
        .clone();
    assert_eq!(failure["by"], "timer", "{failure}");
    assert!(
        failure["message"]
            .as_str()
            .unwrap()
            .contains("healthy deadline of 1500 ms"),
        "{failure}"
    );
    let failed = wait_status(&api, &id, "FAILED", LONG).await?;
    assert_eq!(count_nodes(&failed, "failed"), 2, "{failed}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_gate_holds_until_confirmed() -> anyhow::Result<()> {
    let (_cluster, api, _fleet) = setup(2, FleetConfig::new("app")).await?;
    let id = start(
        &api,
        json!({"strategy": {"batch": {"sizes": [1]}}, "pacing": {"confirm": ["before_each_batch"]}}),
    )
    .await?;
    let waiting = wait_deployment(&api, &id, LONG, |v| v["paused_by"] == "confirm").await?;
    assert_eq!(waiting["status"], "ROLL_FORWARD_PAUSED", "{waiting}");
    assert_eq!(count_nodes(&waiting, "succeeded"), 1, "{waiting}");
    assert_eq!(node_state(&waiting, "web-1"), "pending", "{waiting}");
    let (status, refused) = api
        .post(&format!("/v1/deployments/{id}/resume"), &json!({}))
        .await?;
    assert_eq!(status, 409, "a resume does not pass a gate: {refused}");
    let confirmed = post_ok(&api, &format!("/v1/deployments/{id}/confirm"), json!({})).await?;
    assert_eq!(confirmed["status"], "ROLLING_FORWARD", "{confirmed}");
    wait_status(&api, &id, "ROLLED_FORWARD", LONG).await?;
    let (status, _) = api
        .post(&format!("/v1/deployments/{id}/confirm"), &json!({}))
        .await?;
    assert_eq!(status, 409, "nothing left to confirm");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hard_pause_takes_back_install_permission_not_yet_used() -> anyhow::Result<()> {
    // Downloads take long: the admitted nodes have not started installing when the pause comes.
    let fleet = FleetConfig {
        download: Duration::from_secs(4),
        ..FleetConfig::new("app")
    };
    let (_cluster, api, _fleet) = setup(3, fleet).await?;
    let id = start(
        &api,
        json!({"strategy": {"rolling": {"install_window": 2, "download_window": 2}}}),
    )
    .await?;
    let paused = post_ok(
        &api,
        &format!("/v1/deployments/{id}/pause"),
        json!({"hard": true, "message": "stop everything"}),
    )
    .await?;
    assert_eq!(paused["status"], "ROLL_FORWARD_PAUSED", "{paused}");
    assert_eq!(count_nodes(&paused, "installing"), 0, "{paused}");
    assert_eq!(count_nodes(&paused, "pending"), 3, "{paused}");
    assert!(
        event_at(&paused, "recalled", Some("web-0")).is_some(),
        "{paused}"
    );
    post_ok(&api, &format!("/v1/deployments/{id}/resume"), json!({})).await?;
    wait_status(&api, &id, "ROLLED_FORWARD", LONG).await?;
    Ok(())
}
