//! Safety that composes (issue 35) through three real servers and simulated agents: a version is held back
//! only on evidence (a timer or a person that rolls a deployment back holds nothing), a pin on a held-back
//! version still selects it and the consumer view and `deploy plan` say it is held, and a full deployment
//! by hand past a strong subscription's pin is not reverted by an automatic one.

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, currents, get_ok, post_ok, publish, put_ok, resource_with_v1, wait_running,
    wait_status,
};
use convoy_tests::{eventually, Cluster, ClusterOptions, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(40);

/// The last event of deployment `view` with action `action`.
fn last_event<'v>(view: &'v Value, action: &str) -> Option<&'v Value> {
    view["events"]
        .as_array()?
        .iter()
        .rev()
        .find(|e| e["action"] == action)
}

/// The consumer's holds.
async fn holds(api: &RawClient, consumer: &str) -> anyhow::Result<Value> {
    Ok(get_ok(api, &format!("/v1/consumers/{consumer}")).await?["holds"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_by_a_timer_or_a_person_holds_nothing() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "ev").await?;
    let nodes = consumer(&api, "ev", 2).await?;
    // Installs take far longer than the completion timeout: the timer ends the deployment, no node fails.
    let _fleet = FleetConfig {
        install: Duration::from_secs(4),
        ..FleetConfig::new("ev")
    }
    .start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(&api, &nodes, "ev", 1, LONG).await?;
    put_ok(
        &api,
        "/v1/consumers/ev/subscriptions/ev",
        json!({"mode": "weak", "pin": 1}),
    )
    .await?;
    publish(&api, "ev", json!({})).await?;

    let timed = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "ev", "resource": "ev", "version": 2,
               "completion": {"timeout_ms": 1_000, "on_timeout": "fail"}}),
    )
    .await?;
    let id = timed["id"].as_str().context("an id")?;
    let view = wait_status(&api, id, "ROLLED_BACK", LONG).await?;
    let holds_now = holds(&api, "ev").await?;
    ensure!(
        holds_now.as_array().is_none_or(|h| h.is_empty()),
        "a timer held version 2: {holds_now}"
    );
    let not_held = last_event(&view, "not_held").context("no not_held event")?;
    ensure!(
        not_held["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("version 2 of ev not held back on ev: ")),
        "{not_held}"
    );
    wait_running(&api, &nodes, "ev", 1, LONG).await?;

    // A person rolls back a deployment no node failed: nothing says the version is bad.
    let by_hand = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "ev", "resource": "ev", "version": 2}),
    )
    .await?;
    let id = by_hand["id"].as_str().context("an id")?;
    post_ok(&api, &format!("/v1/deployments/{id}/rollback"), json!({})).await?;
    wait_status(&api, id, "ROLLED_BACK", LONG).await?;
    let holds_now = holds(&api, "ev").await?;
    ensure!(
        holds_now.as_array().is_none_or(|h| h.is_empty()),
        "a rollback by hand with no failure held version 2: {holds_now}"
    );
    // So the next start of it needs no force.
    let plan = post_ok(
        &api,
        "/v1/deployments?dry_run=true",
        json!({"consumer": "ev", "resource": "ev", "version": 2}),
    )
    .await?;
    ensure!(plan.get("held").is_none(), "{plan}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_on_a_version_the_brake_held_still_selects_it_and_says_so() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "pn").await?;
    let nodes = consumer(&api, "pn", 3).await?;
    let _fleet = nodes
        .iter()
        .fold(FleetConfig::new("pn"), |f, n| f.failing(n, 2))
        .start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(&api, &nodes, "pn", 1, LONG).await?;
    publish(&api, "pn", json!({})).await?;
    put_ok(
        &api,
        "/v1/consumers/pn/subscriptions/pn",
        json!({"mode": "weak", "pin": 2}),
    )
    .await?;
    // Every node fails the pinned version: the brake holds it.
    let view = eventually(LONG, || async {
        let view = get_ok(&api, "/v1/consumers/pn").await.ok()?;
        let held = view["holds"]
            .as_array()?
            .iter()
            .any(|h| h["version"] == 2 && h["by"] == "brake");
        held.then_some(view)
    })
    .await
    .context("no hold by the brake")?;
    // The pin is a person's decision: it still selects version 2, and the view says it is held.
    let sub = &view["subscriptions"]["pn"];
    ensure!(sub["selected"] == 2, "the pin selects nothing: {sub}");
    ensure!(
        sub["held"]
            .as_str()
            .is_some_and(|h| h.starts_with("version 2 of pn held back on pn by its brake: ")),
        "the view does not say the pinned version is held: {sub}"
    );
    for node in &nodes {
        let n = get_ok(&api, &format!("/v1/nodes/{node}")).await?;
        ensure!(
            n["targets"]["pn"]["version"] == 2,
            "{node}: the pin selects nothing: {}",
            n["targets"]
        );
    }
    let plan = post_ok(
        &api,
        "/v1/deployments?dry_run=true",
        json!({"consumer": "pn", "resource": "pn"}),
    )
    .await?;
    ensure!(
        plan["version"] == 2 && plan["version_reason"] == "pin" && plan["held"].is_string(),
        "the plan does not say the pinned version is held: {plan}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hotfix_by_hand_past_a_strong_pin_is_not_reverted() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "hf").await?;
    let nodes = consumer(&api, "hf", 2).await?;
    let _fleet = FleetConfig::new("hf").start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(&api, &nodes, "hf", 1, LONG).await?;
    put_ok(
        &api,
        "/v1/consumers/hf/subscriptions/hf",
        json!({"mode": "strong", "pin": 1, "strategy": {"all_at_once": {}}}),
    )
    .await?;
    publish(&api, "hf", json!({})).await?;
    let hotfix = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "hf", "resource": "hf", "version": 2, "strategy": {"all_at_once": {}}}),
    )
    .await?;
    let id = hotfix["id"].as_str().context("an id")?.to_string();
    wait_status(&api, &id, "ROLLED_FORWARD", LONG).await?;
    // Give an automatic deployment every chance to start (it used to within 0.1 s), then look.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let list = get_ok(&api, "/v1/deployments?consumer=hf&resource=hf").await?;
    let ids: Vec<&str> = list
        .as_array()
        .context("a list")?
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    ensure!(
        ids == [id.as_str()],
        "an automatic deployment reverted the hotfix: {list}"
    );
    ensure!(
        currents(&api, &nodes, "hf")
            .await?
            .iter()
            .all(|c| *c == Some(2)),
        "a node left the hotfix"
    );
    Ok(())
}
