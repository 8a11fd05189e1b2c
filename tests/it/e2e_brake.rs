//! A weak subscription's brake through three real servers and simulated agents (issues 23 and 35): a
//! version that too many of the consumer's nodes fail is held back by `brake`; the brake freezes it, it
//! never downgrades the healthy: the nodes that failed it go back to the version before, the nodes that run
//! it healthy stay on it. `GET /v1/consumers/{name}` shows the hold and the event naming the failed nodes,
//! and `DELETE` lifts it.

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
async fn the_brake_holds_a_failing_version_and_leaves_the_healthy_nodes_on_it() -> anyhow::Result<()>
{
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "tool").await?;
    let nodes = consumer(&api, "edge", 5).await?;
    let (failing, healthy) = nodes.split_at(3);
    // Three of five agents fail version 2, slowly: the two others run it healthy well before the third
    // failure trips the default brake (over 20%, at least 3 nodes).
    let slow = FleetConfig {
        install: Duration::from_millis(2_500),
        ..FleetConfig::new("tool")
    };
    let _failing = failing.iter().fold(slow, |f, n| f.failing(n, 2)).start(
        &cluster.http_addrs(),
        failing,
        Some(1),
    );
    let _healthy = FleetConfig::new("tool").start(&cluster.http_addrs(), healthy, Some(1));
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
        sub["brake"]
            == json!({"enabled": true, "max_failed": "20%", "window_ms": 600_000, "min_failed": 3}),
        "the default brake is not shown: {sub}"
    );
    publish(&api, "tool", json!({})).await?;
    wait_running(&api, healthy, "tool", 2, LONG).await?;

    let hold = eventually(LONG, || async {
        let view = get_ok(&api, "/v1/consumers/edge").await.ok()?;
        brake_hold(&view, 2)
    })
    .await
    .context("no hold by the brake")?;
    let reason = hold["reason"].as_str().context("a reason")?;
    ensure!(
        reason == "version 2 of tool held back on edge by its brake: 3 of 5 nodes failed it within 10m, over 20%",
        "{hold}"
    );
    ensure!(hold.get("deployment").is_none(), "{hold}");
    let view = get_ok(&api, "/v1/consumers/edge").await?;
    let held = view["events"]
        .as_array()
        .and_then(|es| es.iter().find(|e| e["kind"] == "held"))
        .context("no event on the consumer")?;
    let message = held["message"].as_str().context("a message")?;
    // The event names the failed nodes (the first 10, then how many more).
    ensure!(
        message.starts_with(&format!("{reason}; failed: "))
            && failing.iter().all(|n| message.contains(n.as_str()))
            && healthy.iter().all(|n| !message.contains(n.as_str()))
            && held["by"] == "system",
        "{held}"
    );
    ensure!(
        view["subscriptions"]["tool"]["selected"] == 1,
        "{}",
        view["subscriptions"]["tool"]
    );

    // The nodes that failed go back to version 1; the two that run version 2 healthy stay on it.
    for node in failing {
        let n = get_ok(&api, &format!("/v1/nodes/{node}")).await?;
        ensure!(
            n["targets"]["tool"]["version"] == 1,
            "{node}: {}",
            n["targets"]
        );
    }
    for node in healthy {
        let n = get_ok(&api, &format!("/v1/nodes/{node}")).await?;
        let t = &n["targets"]["tool"];
        ensure!(
            t["version"] == 2 && t["install"] == false,
            "{node} was sent off its healthy version: {t}"
        );
    }
    wait_running(&api, failing, "tool", 1, LONG).await?;
    ensure!(
        currents(&api, healthy, "tool")
            .await?
            .iter()
            .all(|c| *c == Some(2)),
        "a healthy node left version 2"
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
        (json!({"min_failed": 0}), "brake.min_failed = 0"),
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
