//! A weak subscription's brake through three real servers and simulated agents (issue 23 item 4): a
//! version that too many of the consumer's nodes fail is held back by `brake`, every node goes back to the
//! version before, `GET /v1/consumers/{name}` shows the hold and the event, and `DELETE` lifts it.

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, currents, get_ok, publish, put_ok, resource_with_v1, wait_running,
};
use convoy_tests::{eventually, Cluster, ClusterOptions, FleetConfig};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(40);

/// The brake's hold of `version` on consumer `name`, once there is one.
fn brake_hold(view: &Value, version: u64) -> Option<Value> {
    view["holds"]
        .as_array()?
        .iter()
        .find(|h| h["version"] == version && h["by"] == "brake")
        .cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_too_many_weak_nodes_fail_is_held_back_by_the_brake() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "tool").await?;
    let nodes = consumer(&api, "edge", 5).await?;
    // Three of five agents fail version 2; two of five (40%) is over the 20% of the default brake.
    let _fleet = FleetConfig::new("tool")
        .failing("edge-0", 2)
        .failing("edge-1", 2)
        .failing("edge-2", 2)
        .start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(&api, &nodes, "tool", 1, LONG).await?;
    put_ok(
        &api,
        "/v1/consumers/edge/subscriptions/tool",
        json!({"mode": "weak"}),
    )
    .await?;
    let view = get_ok(&api, "/v1/consumers/edge").await?;
    let sub = &view["subscriptions"]["tool"];
    ensure!(
        sub["brake"] == json!({"enabled": true, "max_failed": "20%", "window_ms": 600_000}),
        "the default brake is not shown: {sub}"
    );
    publish(&api, "tool", json!({})).await?;

    let hold = eventually(LONG, || async {
        let view = get_ok(&api, "/v1/consumers/edge").await.ok()?;
        brake_hold(&view, 2)
    })
    .await
    .context("no hold by the brake")?;
    let reason = hold["reason"].as_str().context("a reason")?;
    ensure!(
        reason.starts_with("version 2 of tool held back on edge by its brake: ")
            && reason.ends_with(" of 5 nodes failed it within 10m, over 20%"),
        "{hold}"
    );
    ensure!(hold.get("deployment").is_none(), "{hold}");
    let view = get_ok(&api, "/v1/consumers/edge").await?;
    let held = view["events"]
        .as_array()
        .and_then(|es| es.iter().find(|e| e["kind"] == "held"))
        .context("no event on the consumer")?;
    ensure!(
        held["message"] == reason && held["by"] == "system",
        "{held}"
    );
    ensure!(
        view["subscriptions"]["tool"]["selected"] == 1,
        "{}",
        view["subscriptions"]["tool"]
    );

    // Every node is sent back to version 1, and runs it (the two that installed 2 go back).
    for node in &nodes {
        let n = get_ok(&api, &format!("/v1/nodes/{node}")).await?;
        ensure!(
            n["targets"]["tool"]["version"] == 1,
            "{node}: {}",
            n["targets"]
        );
    }
    wait_running(&api, &nodes, "tool", 1, LONG).await?;
    ensure!(
        currents(&api, &nodes, "tool")
            .await?
            .iter()
            .all(|c| *c == Some(1)),
        "a node left version 1"
    );

    // A person lifts it: the selection takes version 2 again, and the consumer says who lifted it.
    let (status, lifted) = api.delete("/v1/consumers/edge/holds/tool/2").await?;
    ensure!(status == 200, "{status} {lifted}");
    ensure!(brake_hold(&lifted, 2).is_none(), "{lifted}");
    let released = lifted["events"]
        .as_array()
        .and_then(|es| es.iter().rev().find(|e| e["kind"] == "released"))
        .context("no release event")?;
    ensure!(
        released["message"] == "version 2 of tool no longer held back on edge: cleared by user",
        "{released}"
    );
    let (status, again) = api.delete("/v1/consumers/edge/holds/tool/2").await?;
    ensure!(status == 404, "a second lift: {status} {again}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_brake_out_of_bounds_is_refused() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(1)).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "bt").await?;
    consumer(&api, "bt", 1).await?;
    let path = "/v1/consumers/bt/subscriptions/bt";
    for (brake, says) in [
        (json!({"max_failed": 0}), "brake.max_failed = 0"),
        (json!({"max_failed": "0%"}), "brake.max_failed = 0%"),
        (json!({"max_failed": "101%"}), "brake.max_failed = 101%"),
        (json!({"window_ms": 999}), "brake.window_ms = 999"),
        (
            json!({"window_ms": 604_800_001u64}),
            "brake.window_ms = 604800001",
        ),
    ] {
        let (status, answer) = api.put(path, &json!({"brake": brake})).await?;
        ensure!(status == 400, "{brake}: {status} {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        ensure!(message.contains(says), "{brake}: {answer}");
    }
    // Off, then back to the default by PATCH null.
    put_ok(&api, path, json!({"brake": {"enabled": false}})).await?;
    let view = get_ok(&api, "/v1/consumers/bt").await?;
    ensure!(
        view["subscriptions"]["bt"]["brake"]["enabled"] == false,
        "{view}"
    );
    let (status, view) = api.patch(path, &json!({"brake": null})).await?;
    ensure!(status == 200, "{status} {view}");
    ensure!(
        view["subscriptions"]["bt"]["brake"]["enabled"] == true,
        "{view}"
    );
    Ok(())
}
