//! Real fleets over three real servers: a node in three consumers stays active while it reports and goes
//! inactive once when it stops; a version rolled back on a weak subscription is held back (not sent again)
//! until the hold is cleared; and `convoy consumer subscribe --pin` on a strong rolling subscription changes
//! only the pin (the CLI PATCHes an existing subscription).

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, currents, get_ok, post_ok, publish, put_ok, resource_with_v1, wait_running,
    wait_status,
};
use convoy_tests::{convoy_bin, eventually, ClusterOptions};
use convoy_tests::{Cluster, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(30);
/// The servers' node timeout: short, so a flapping node shows within the test.
const NODE_TIMEOUT_MS: u64 = 1_000;

async fn node(api: &RawClient, id: &str) -> anyhow::Result<Value> {
    get_ok(api, &format!("/v1/nodes/{id}")).await
}

/// Issue 2: a node in three consumers was marked inactive by the two whose actor got no reports.
async fn liveness_once_per_node(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "lv").await?;
    for c in ["lv-a", "lv-b", "lv-c"] {
        post_ok(
            api,
            "/v1/consumers",
            json!({"name": c, "nodes": ["shared-0"]}),
        )
        .await?;
    }
    let config = FleetConfig {
        interval: Duration::from_millis(200),
        ..FleetConfig::new("lv")
    };
    let fleet = config.start(&cluster.http_addrs(), &["shared-0".to_string()], Some(1));
    wait_running(api, &["shared-0".to_string()], "lv", 1, LONG).await?;
    // Three node timeouts of reporting: never inactive.
    let until = Instant::now() + Duration::from_millis(3 * NODE_TIMEOUT_MS);
    while Instant::now() < until {
        let view = node(api, "shared-0").await?;
        ensure!(
            view["active"] == true,
            "a reporting node in three consumers went inactive: {view}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(fleet);
    eventually(Duration::from_millis(6 * NODE_TIMEOUT_MS), || async {
        let view = node(api, "shared-0").await.ok()?;
        (view["active"] == false).then_some(())
    })
    .await
    .context("a silent node was never marked inactive")?;
    Ok(())
}

/// Issue 3: after ROLLED_BACK on a weak subscription, the nodes were sent the rolled-back version again.
async fn rolled_back_version_is_held(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "hb").await?;
    let nodes = consumer(api, "hold", 2).await?;
    let config = FleetConfig::new("hb").failing("hold-1", 2);
    let _fleet = config.start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, "hb", 1, LONG).await?;
    publish(api, "hb", json!({"label": "v2"})).await?;
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "hold", "resource": "hb", "version": 2, "strategy": {"all_at_once": {}}}),
    )
    .await?;
    // Weak = newest; the deployment's targets win while it runs.
    put_ok(
        api,
        "/v1/consumers/hold/subscriptions/hb",
        json!({"mode": "weak"}),
    )
    .await?;
    let id = started["id"].as_str().context("deployment id")?;
    let view = wait_status(api, id, "ROLLED_BACK", LONG).await?;
    let reason = format!("version 2 of hb held back on hold: rolled back by {id}");
    ensure!(
        view["events"]
            .as_array()
            .is_some_and(|es| es.iter().any(|e| e["message"] == reason.as_str())),
        "no hold event: {view}"
    );
    let c = get_ok(api, "/v1/consumers/hold").await?;
    ensure!(
        c["holds"]
            == json!([{"resource": "hb", "version": 2, "by": "rollback", "deployment": id,
                              "at": c["holds"][0]["at"], "reason": reason}]),
        "{c}"
    );
    wait_running(api, &nodes, "hb", 1, LONG).await?;
    // Several report rounds later the nodes are still told version 1 and run it.
    for _ in 0..10 {
        for n in &nodes {
            let v = node(api, n).await?;
            ensure!(v["targets"]["hb"]["version"] == 1, "{n} sent back: {v}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ensure!(currents(api, &nodes, "hb").await? == vec![Some(1), Some(1)]);

    // Clearing the hold lets the weak selection take version 2 again.
    let (status, body) = api.delete("/v1/consumers/hold/holds/hb/2").await?;
    ensure!(
        status == 200 && body.get("holds").is_none(),
        "{status} {body}"
    );
    let (status, body) = api.delete("/v1/consumers/hold/holds/hb/2").await?;
    ensure!(status == 404, "cleared twice: {status} {body}");
    wait_running(api, &nodes[..1], "hb", 2, LONG).await?;
    Ok(())
}

/// Runs `convoy consumer subscribe ...` against the cluster; returns its stdout.
fn cli_subscribe(cluster: &Cluster, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(convoy_bin())
        .args(["consumer", "subscribe"])
        .args(args)
        .args(["--server", &cluster.http_addrs().join(",")])
        .output()?;
    ensure!(
        out.status.success(),
        "convoy consumer subscribe {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

/// Issue 5: `--pin 1` on a strong rolling subscription made it weak and dropped its strategy.
async fn cli_pin_keeps_the_policy(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "pn").await?;
    consumer(api, "pinned", 1).await?;
    let rolling = json!({"rolling": {"install_window": 2, "download_window": 3}});
    put_ok(
        api,
        "/v1/consumers/pinned/subscriptions/pn",
        json!({"mode": "strong", "strategy": rolling, "min_healthy_ms": 700}),
    )
    .await?;
    let out = cli_subscribe(cluster, &["pinned", "pn", "--pin", "1", "-o", "json"])?;
    let view: Value = serde_json::from_str(&out).context("JSON output")?;
    let sub = &view["subscriptions"]["pn"];
    ensure!(
        sub["mode"] == "strong"
            && sub["strategy"] == rolling
            && sub["pin"] == 1
            && sub["min_healthy_ms"] == 700,
        "{sub}"
    );
    // Table output: the resulting policy; `--clear pin` unpins and keeps the rest.
    let table = cli_subscribe(cluster, &["pinned", "pn", "--clear", "pin"])?;
    for expected in [
        "mode:          strong",
        "pin:           -",
        "rolling(install 2, download 3)",
        "min healthy:",
    ] {
        ensure!(table.contains(expected), "{expected:?} not in:\n{table}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn liveness_holds_and_subscription_patch_on_real_fleets() -> anyhow::Result<()> {
    let options = ClusterOptions {
        node_timeout_ms: Some(NODE_TIMEOUT_MS),
        ..ClusterOptions::for_tests(3)
    };
    let cluster = Cluster::start_with(options).await?;
    let api = cluster.client_except(0);
    let result = async {
        liveness_once_per_node(&cluster, &api)
            .await
            .context("liveness")?;
        rolled_back_version_is_held(&cluster, &api)
            .await
            .context("holds")?;
        cli_pin_keeps_the_policy(&cluster, &api)
            .await
            .context("subscribe --pin")
    }
    .await;
    cluster.logs_on_error(result)
}
