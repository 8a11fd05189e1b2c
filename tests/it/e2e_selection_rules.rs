//! Which version a node should run, through three real servers and simulated agents whose installs take
//! several report rounds (issue 22): holds named by plan and start and lifted into a deployment by the same
//! actor (item 11), a canary that sticks on a pinned weak subscription (7), a re-imaged node that
//! reconverges after a canary (8), nodes a quorum left behind and a broken node that gets no chain of
//! follow-ups (4), and a blank joiner that does not flip a dependency (6); and a stale node that comes back on
//! an older version of a dependency, which never revokes it (issue 36 §6, seed 003).

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, currents, get_ok, post_ok, publish, put_ok, resource_with_v1, wait_running,
    wait_status,
};
use convoy_tests::{eventually, Cluster, ClusterOptions, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(40);

/// Installs take several report rounds (the fleet reports every 50 ms).
fn slow(resource: &str) -> FleetConfig {
    FleetConfig {
        download: Duration::from_millis(200),
        install: Duration::from_millis(400),
        ..FleetConfig::new(resource)
    }
}

/// The deployments of `resource` on `consumer`, oldest first.
async fn deployments(
    api: &RawClient,
    consumer: &str,
    resource: &str,
) -> anyhow::Result<Vec<Value>> {
    let list = get_ok(
        api,
        &format!("/v1/deployments?consumer={consumer}&resource={resource}"),
    )
    .await?;
    let mut out = Vec::new();
    for d in list.as_array().context("a list")? {
        let id = d["id"].as_str().context("an id")?;
        out.push(get_ok(api, &format!("/v1/deployments/{id}")).await?);
    }
    out.sort_by_key(|d| {
        d["id"]
            .as_str()
            .and_then(|i| i.trim_start_matches("d-").parse::<u64>().ok())
    });
    Ok(out)
}

/// Waits for the `n`-th deployment (1-based) of `resource` on `consumer`.
async fn nth(api: &RawClient, consumer: &str, resource: &str, n: usize) -> anyhow::Result<Value> {
    eventually(LONG, || async {
        deployments(api, consumer, resource)
            .await
            .ok()?
            .get(n - 1)
            .cloned()
    })
    .await
    .with_context(|| format!("no deployment number {n} of {consumer}/{resource}"))
}

fn node_ids(view: &Value) -> Vec<String> {
    view["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["id"].as_str().map(String::from))
        .collect()
}

/// Item 11: plan names the hold, start needs force, and lifting the hold on a strong subscription starts
/// the deployment, both events naming the same actor.
async fn holds_mean_something(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "hm").await?;
    let nodes = consumer(api, "hm", 2).await?;
    let _fleet = slow("hm")
        .failing("hm-1", 2)
        .start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, "hm", 1, LONG).await?;
    let all = json!({"all_at_once": {}});
    put_ok(
        api,
        "/v1/consumers/hm/subscriptions/hm",
        json!({"mode": "strong", "strategy": all}),
    )
    .await?;
    publish(api, "hm", json!({})).await?;
    let first = nth(api, "hm", "hm", 1).await?;
    let first_id = first["id"].as_str().context("id")?.to_string();
    wait_status(api, &first_id, "ROLLED_BACK", LONG).await?;
    let reason = format!("version 2 of hm held back on hm: rolled back by {first_id}");

    let body = json!({"consumer": "hm", "resource": "hm", "version": 2});
    let plan = post_ok(api, "/v1/deployments?dry_run=true", body.clone()).await?;
    ensure!(
        plan["held"] == reason.as_str(),
        "the plan says nothing of the hold: {plan}"
    );
    let (status, refused) = api.post("/v1/deployments", &body).await?;
    ensure!(
        status == 409,
        "a held version started without force: {status} {refused}"
    );
    ensure!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&reason)),
        "{refused}"
    );

    // Lifted by a person: the strong subscription deploys version 2 at once, started by them.
    let (status, view) = api.delete("/v1/consumers/hm/holds/hm/2").await?;
    ensure!(status == 200, "{status} {view}");
    let again = nth(api, "hm", "hm", 2).await?;
    ensure!(again["version"] == 2, "{again}");
    let first = get_ok(api, &format!("/v1/deployments/{first_id}")).await?;
    let released = first["events"]
        .as_array()
        .and_then(|es| es.iter().rev().find(|e| e["action"] == "released"))
        .context("no release event")?;
    ensure!(
        released["by"] == again["events"][0]["by"] && released["by"] == "user",
        "release {released} and start {} name different actors",
        again["events"][0]
    );
    Ok(())
}

/// Item 7: with a weak subscription pinned at 1, a finished canary of 2 stays on its nodes.
async fn canary_sticks_on_weak(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "wk").await?;
    let nodes = consumer(api, "wk", 4).await?;
    let _fleet = slow("wk").start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, "wk", 1, LONG).await?;
    put_ok(
        api,
        "/v1/consumers/wk/subscriptions/wk",
        json!({"mode": "weak", "pin": 1}),
    )
    .await?;
    publish(api, "wk", json!({})).await?;
    let canary = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "wk", "resource": "wk", "version": 2, "nodes": "0-1",
               "strategy": {"all_at_once": {}}}),
    )
    .await?;
    let id = canary["id"].as_str().context("id")?;
    wait_status(api, id, "ROLLED_FORWARD", LONG).await?;
    // Several install times later the canary nodes still run 2.
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    let now = currents(api, &nodes, "wk").await?;
    ensure!(
        now == vec![Some(2), Some(2), Some(1), Some(1)],
        "the weak rule undid the canary: {now:?}"
    );
    Ok(())
}

/// Item 8: a strong consumer pinned at 1, after a canary of 2, brings a re-imaged node back to 1.
async fn reimaged_after_canary(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "ri").await?;
    let nodes = consumer(api, "ri", 3).await?;
    let _steady = slow("ri").start(&cluster.http_addrs(), &nodes[..2], Some(1));
    let old = slow("ri").start(&cluster.http_addrs(), &nodes[2..], Some(1));
    wait_running(api, &nodes, "ri", 1, LONG).await?;
    put_ok(
        api,
        "/v1/consumers/ri/subscriptions/ri",
        json!({"mode": "strong", "pin": 1}),
    )
    .await?;
    publish(api, "ri", json!({})).await?;
    let canary = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "ri", "resource": "ri", "version": 2, "nodes": "0-1"}),
    )
    .await?;
    let id = canary["id"].as_str().context("id")?;
    wait_status(api, id, "ROLLED_FORWARD", LONG).await?;
    // ri-2 is re-imaged: its agent comes back holding nothing.
    old.stop().await;
    post_ok(
        api,
        "/v1/nodes/ri-2/report",
        json!({"resources": {"ri": {"removed": true, "versions": {}}}}),
    )
    .await?;
    let _fresh = slow("ri").start(&cluster.http_addrs(), &nodes[2..], None);
    let follow = nth(api, "ri", "ri", 2).await?;
    ensure!(
        node_ids(&follow) == ["ri-2"] && follow["version"] == 1,
        "{follow}"
    );
    wait_running(api, &nodes[2..], "ri", 1, LONG).await?;
    let now = currents(api, &nodes, "ri").await?;
    ensure!(now == vec![Some(2), Some(2), Some(1)], "{now:?}");
    Ok(())
}

/// Item 4: nodes a quorum left behind get a follow-up; a broken node gets no chain of them.
async fn quorum_left_behind(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "qb").await?;
    let nodes = consumer(api, "qb", 4).await?;
    let _fleet = slow("qb").start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, "qb", 1, LONG).await?;
    let policy = json!({"mode": "strong", "strategy": {"rolling": {"install_window": 1, "download_window": 1}},
                        "completion": {"quorum": 2}});
    put_ok(api, "/v1/consumers/qb/subscriptions/qb", policy).await?;
    publish(api, "qb", json!({})).await?;
    let first = nth(api, "qb", "qb", 1).await?;
    let first_id = first["id"].as_str().context("id")?.to_string();
    wait_status(api, &first_id, "ROLLED_FORWARD", LONG).await?;
    // The nodes the quorum left behind reach version 2 through follow-ups.
    let follow = nth(api, "qb", "qb", 2).await?;
    ensure!(
        follow["events"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("left behind")),
        "{follow}"
    );
    wait_running(api, &nodes, "qb", 2, LONG).await?;

    // A broken node whose failure was tolerated keeps reporting it: no follow-up, round after round.
    resource_with_v1(api, "bk").await?;
    let nodes = consumer(api, "bk", 3).await?;
    let _broken = slow("bk")
        .failing("bk-2", 2)
        .start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, "bk", 1, LONG).await?;
    let policy = json!({"mode": "strong", "strategy": {"all_at_once": {}}, "max_failed_nodes": 1});
    put_ok(api, "/v1/consumers/bk/subscriptions/bk", policy).await?;
    publish(api, "bk", json!({})).await?;
    let first = nth(api, "bk", "bk", 1).await?;
    let first_id = first["id"].as_str().context("id")?.to_string();
    wait_status(api, &first_id, "ROLLED_FORWARD", LONG).await?;
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    let all = deployments(api, "bk", "bk").await?;
    ensure!(all.len() == 1, "follow-ups of a broken node: {}", all.len());
    ensure!(currents(api, &nodes, "bk").await? == vec![Some(2), Some(2), Some(1)]);
    Ok(())
}

/// Item 6: a blank node joining the holder of a dependency does not flip the dependent's selection.
async fn blank_joiner_keeps_dependency(api: &RawClient) -> anyhow::Result<()> {
    for r in ["dl", "da"] {
        resource_with_v1(api, r).await?;
    }
    publish(api, "dl", json!({})).await?;
    let nodes = consumer(api, "dj", 2).await?;
    let runs = |v: u64| json!({"current": v, "versions": {v.to_string(): {"downloaded": true, "installed": true, "done": true}}});
    for n in &nodes {
        post_ok(
            api,
            &format!("/v1/nodes/{n}/report"),
            json!({"resources": {"dl": runs(2), "da": runs(1)}}),
        )
        .await?;
    }
    put_ok(
        api,
        "/v1/consumers/dj/subscriptions/dl",
        json!({"mode": "weak"}),
    )
    .await?;
    put_ok(
        api,
        "/v1/consumers/dj/subscriptions/da",
        json!({"mode": "strong", "strategy": {"all_at_once": {}}}),
    )
    .await?;
    publish(
        api,
        "da",
        json!({"depends_on": [{"resource": "dl", "version": 2}]}),
    )
    .await?;
    let up = nth(api, "dj", "da", 1).await?;
    ensure!(up["version"] == 2, "{up}");
    for n in &nodes {
        post_ok(
            api,
            &format!("/v1/nodes/{n}/report"),
            json!({"resources": {"dl": runs(2), "da": runs(2)}}),
        )
        .await?;
    }
    let id = up["id"].as_str().context("id")?;
    wait_status(api, id, "ROLLED_FORWARD", LONG).await?;
    // A blank node joins: today the dependency flipped and a downgrade deployment of da@1 started.
    put_ok(api, "/v1/consumers/dj/nodes", json!({"add": ["dj-blank"]})).await?;
    post_ok(api, "/v1/nodes/dj-blank/report", json!({"resources": {}})).await?;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let all = deployments(api, "dj", "da").await?;
    ensure!(
        all.iter().all(|d| d["version"] == 2),
        "a downgrade started: {:?}",
        all.iter()
            .map(|d| (&d["id"], &d["version"]))
            .collect::<Vec<_>>()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn which_version_a_node_runs_with_slow_agents() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    // Every scenario runs, so one failing does not hide the others; then all failures are reported.
    let mut failures = Vec::new();
    if let Err(e) = holds_mean_something(&cluster, &api).await {
        failures.push(format!("item 11 (holds): {e:#}"));
    }
    if let Err(e) = canary_sticks_on_weak(&cluster, &api).await {
        failures.push(format!("item 7 (weak canary): {e:#}"));
    }
    if let Err(e) = reimaged_after_canary(&cluster, &api).await {
        failures.push(format!("item 8 (re-imaged after a canary): {e:#}"));
    }
    if let Err(e) = quorum_left_behind(&cluster, &api).await {
        failures.push(format!("item 4 (quorum, broken node): {e:#}"));
    }
    if let Err(e) = blank_joiner_keeps_dependency(&api).await {
        failures.push(format!("item 6 (blank joiner): {e:#}"));
    }
    let result = if failures.is_empty() {
        Ok(())
    } else {
        Err(anyhow::anyhow!("{}", failures.join("\n")))
    };
    cluster.logs_on_error(result)
}

/// Issue 36 §6 (seed 003): `sa` 2 needs `sl` 2 on the same consumer. `sn-2` goes stale on `sl` 1 while the
/// others move to `sl` 2, so the dependency holds and `sa` 2 rolls out; `sn-2` comes back still on `sl` 1,
/// and its install of 2 takes several report rounds. Today the dependency flipped back for every node (a
/// downgrade deployment of `sa` 1 started) and forward again once it caught up; now it holds: only a
/// rollback, a retraction or an edit of the subscription revokes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_node_coming_back_never_revokes_a_dependency() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions {
        node_timeout_ms: Some(1_500),
        ..ClusterOptions::for_tests(3)
    })
    .await?;
    let api = cluster.client_except(0);
    let result = stale_node_keeps_dependency(&cluster, &api).await;
    cluster.logs_on_error(result)
}

async fn stale_node_keeps_dependency(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    for r in ["sl", "sa"] {
        resource_with_v1(api, r).await?;
    }
    let nodes = consumer(api, "sn", 3).await?;
    let _steady = slow("sl").start(&cluster.http_addrs(), &nodes[..2], Some(1));
    let stale = slow("sl").start(&cluster.http_addrs(), &nodes[2..], Some(1));
    wait_running(api, &nodes, "sl", 1, LONG).await?;
    put_ok(
        api,
        "/v1/consumers/sn/subscriptions/sl",
        json!({"mode": "weak"}),
    )
    .await?;
    put_ok(
        api,
        "/v1/consumers/sn/subscriptions/sa",
        json!({"mode": "strong", "strategy": {"all_at_once": {}}}),
    )
    .await?;
    let first = nth(api, "sn", "sa", 1).await?;
    wait_status(
        api,
        first["id"].as_str().context("id")?,
        "ROLLED_FORWARD",
        LONG,
    )
    .await?;

    // sn-2 goes stale on sl 1.
    stale.stop().await;
    eventually(LONG, || async {
        let view = get_ok(api, "/v1/nodes/sn-2").await.ok()?;
        (view["active"] == false).then_some(())
    })
    .await
    .context("sn-2 never became inactive")?;
    // The others move to sl 2: the dependency of sa 2 holds, and sa 2 rolls out.
    publish(api, "sl", json!({})).await?;
    wait_running(api, &nodes[..2], "sl", 2, LONG).await?;
    publish(
        api,
        "sa",
        json!({"depends_on": [{"resource": "sl", "version": 2}]}),
    )
    .await?;
    let up = nth(api, "sn", "sa", 2).await?;
    ensure!(up["version"] == 2, "{up}");
    wait_status(
        api,
        up["id"].as_str().context("id")?,
        "ROLLED_FORWARD",
        LONG,
    )
    .await?;

    // sn-2 comes back, still on sl 1, and takes several report rounds to install sl 2.
    let back = FleetConfig {
        download: Duration::from_millis(1_000),
        install: Duration::from_millis(3_000),
        ..FleetConfig::new("sl")
    };
    let _back = back.start(&cluster.http_addrs(), &nodes[2..], Some(1));
    eventually(LONG, || async {
        let view = get_ok(api, "/v1/nodes/sn-2").await.ok()?;
        (view["active"] == true).then_some(())
    })
    .await
    .context("sn-2 never came back")?;
    let selected =
        get_ok(api, "/v1/consumers/sn").await?["subscriptions"]["sa"]["selected"].clone();
    let node = get_ok(api, "/v1/nodes/sn-2").await?;
    if node["resources"]["sl"]["current"] == 1 {
        ensure!(
            selected == 2,
            "sn-2 came back on sl 1 and sa's selection went to {selected}"
        );
    }
    wait_running(api, &nodes, "sl", 2, LONG).await?;
    // Every deployment of sa has ended (sn-2's follow-up of sa 2 too): none of them was a downgrade.
    let all = eventually(LONG, || async {
        let all = deployments(api, "sn", "sa").await.ok()?;
        all.iter()
            .all(|d| {
                d["status"] == "ROLLED_FORWARD"
                    || d["status"] == "FAILED"
                    || d["status"] == "ROLLED_BACK"
                    || d["status"] == "ABORTED"
            })
            .then_some(all)
    })
    .await
    .context("a deployment of sa never ended")?;
    ensure!(
        all[1..].iter().all(|d| d["version"] == 2),
        "the stale node flipped the dependency: {:?}",
        all.iter()
            .map(|d| (&d["id"], &d["version"], &d["status"]))
            .collect::<Vec<_>>()
    );
    let selected = &get_ok(api, "/v1/consumers/sn").await?["subscriptions"]["sa"]["selected"];
    ensure!(*selected == 2, "sa selects {selected}");
    ensure!(currents(api, &nodes[..2], "sa").await? == vec![Some(2), Some(2)]);
    Ok(())
}
