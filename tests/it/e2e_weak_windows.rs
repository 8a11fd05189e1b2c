//! Issue 35 §5 and §6 through real servers and simulated agents: a weak subscription's nodes pass through the
//! maintenance windows as a deployment's do. A weak publish inside a deny window waits for it (every node
//! keeps the version it runs, a node's report is answered "stay"), the publish answer's `reach` names the
//! window, and deleting the window lets every node take the version. An allow window closed at the publish
//! holds the nodes until it opens on the clock, with no command: the leader ticks at its opening. Run on a
//! 4-node consumer and on a 40-node one.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, currents, get_ok, post_ok, put_ok, resource_with_v1, wait_running,
};
use convoy_tests::{eventually, Cluster, ClusterOptions, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(60);

/// The target the servers answer node `node` (not run by the fleet) that reports running `version`.
async fn probe(api: &RawClient, node: &str, resource: &str, version: u64) -> anyhow::Result<Value> {
    let report = json!({"resources": {resource: {"current": version}}});
    let answer = post_ok(api, &format!("/v1/nodes/{node}/report"), report).await?;
    // The answer leaves out a resource with nothing to do: the node keeps the version it runs.
    let t = answer["targets"][resource].clone();
    Ok(if t.is_null() {
        json!({"version": version, "download": false, "install": false})
    } else {
        t
    })
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A consumer `edge` of `n` agents on v1 plus one probe node, weakly subscribed to `wk` (the default mode).
async fn weak_fleet(
    cluster: &Cluster,
    api: &RawClient,
    n: usize,
) -> anyhow::Result<(Vec<String>, String, convoy_tests::Fleet)> {
    resource_with_v1(api, "wk").await?;
    let mut nodes = consumer(api, "edge", n + 1).await?;
    let probe_node = nodes.pop().context("a probe")?;
    let fleet = FleetConfig::new("wk").start(&cluster.http_addrs(), &nodes, Some(1));
    put_ok(api, "/v1/consumers/edge/subscriptions/wk", json!({})).await?;
    wait_running(api, &nodes, "wk", 1, LONG).await?;
    Ok((nodes, probe_node, fleet))
}

async fn a_deny_window_holds_a_weak_publish_until_it_goes(n: usize) -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    let result = async {
        let (nodes, probe_node, _fleet) = weak_fleet(&cluster, &api, n).await?;
        // In force at every moment: it opens every minute for an hour.
        post_ok(
            &api,
            "/v1/windows",
            json!({"name": "freeze", "kind": "deny", "schedule": "* * * * *", "duration": "1h",
                   "applies_to": {"consumers": ["edge"]}}),
        )
        .await?;
        let answer = post_ok(&api, "/v1/resources/wk/versions", json!({"label": "v2"})).await?;
        ensure!(answer["version"] == 2, "{answer}");

        // Every node keeps v1: the agents report many rounds (every 50 ms) and none moves; a node's
        // report is answered "stay on 1", by every server.
        for _ in 0..40 {
            let now = currents(&api, &nodes, "wk").await?;
            ensure!(
                now.iter().all(|v| *v == Some(1)),
                "weak nodes moved inside the deny window: {now:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for i in 1..=3 {
            let t = probe(&cluster.server(i).client(), &probe_node, "wk", 1).await?;
            ensure!(
                t == json!({"version": 1, "download": false, "install": false}),
                "server {i} answers {t}"
            );
        }
        let reach = &answer["reach"];
        ensure!(
            reach["at_once"] == json!([]) && reach["nodes_at_once"] == 0,
            "{answer}"
        );
        let waiting = &reach["waiting"][0];
        ensure!(
            waiting["consumer"] == "edge"
                && waiting["nodes"] == n as u64 + 1
                && waiting["windows"] == json!(["freeze"]),
            "{answer}"
        );
        let (status, _) = api.delete("/v1/windows/freeze").await?;
        ensure!(status == 200, "delete: {status}");
        wait_running(&api, &nodes, "wk", 2, LONG).await?;
        let t = probe(&api, &probe_node, "wk", 1).await?;
        ensure!(t["version"] == 2 && t["install"] == true, "{t}");
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_window_holds_a_weak_publish_on_4_nodes() -> anyhow::Result<()> {
    a_deny_window_holds_a_weak_publish_until_it_goes(4).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_window_holds_a_weak_publish_on_40_nodes() -> anyhow::Result<()> {
    a_deny_window_holds_a_weak_publish_until_it_goes(40).await
}

const PERIOD_MS: u64 = 20_000;
const OPEN_MS: u64 = 6_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weak_nodes_wait_for_an_allow_window_and_move_when_it_opens_on_the_clock(
) -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    let result = async {
        let (nodes, probe_node, _fleet) = weak_fleet(&cluster, &api, 4).await?;
        // Open 6 s of every 20 s (UTC, second 0, 20, 40 of each minute).
        post_ok(
            &api,
            "/v1/windows",
            json!({"name": "nightly", "kind": "allow", "schedule": "0,20,40 * * * * *",
                   "duration": "6s", "applies_to": {"consumers": ["edge"]}}),
        )
        .await?;
        // Publish while it is closed, with at least 10 s before it opens.
        while !(OPEN_MS + 500..PERIOD_MS - 10_000).contains(&(wall_ms() % PERIOD_MS)) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let opens = wall_ms() - wall_ms() % PERIOD_MS + PERIOD_MS;
        let answer = post_ok(&api, "/v1/resources/wk/versions", json!({})).await?;
        let waiting = &answer["reach"]["waiting"][0];
        ensure!(
            waiting["windows"] == json!(["nightly"]) && waiting["next_change"] == opens,
            "{answer}"
        );
        // Until it opens, nobody moves.
        while wall_ms() + 1_000 < opens {
            let t = probe(&api, &probe_node, "wk", 1).await?;
            ensure!(
                t["install"] == false && t["version"] == 1,
                "before the opening: {t}"
            );
            let now = currents(&api, &nodes, "wk").await?;
            ensure!(
                now.iter().all(|v| *v == Some(1)),
                "moved while closed: {now:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // It opens: no command is sent, the leader's tick lets them go.
        let t = eventually(Duration::from_secs(OPEN_MS / 1_000), || async {
            let t = probe(&api, &probe_node, "wk", 1).await.ok()?;
            (t["version"] == 2 && t["install"] == true).then_some(wall_ms())
        })
        .await
        .context("the probe never got v2 while the window was open")?;
        ensure!(t >= opens, "let go at {t}, before the opening at {opens}");
        wait_running(&api, &nodes, "wk", 2, LONG).await?;
        let view = get_ok(&api, "/v1/consumers/edge").await?;
        ensure!(view["subscriptions"]["wk"]["mode"] == "weak", "{view}");
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
