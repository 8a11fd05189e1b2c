//! Issue 12, failures 6, 7 and 9 (the server's half), through three real servers and a simulated
//! fleet: automatic deployments and group steps run with the subscription's whole policy (a group
//! override wins per field), a deployment with no strategy anywhere is rolling with install window 1
//! and download window 2 (not all at once), and a resource name the agent would refuse is refused by
//! the server first.

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{consumer, get_ok, post_ok, publish, put_ok, resource_with_v1};
use convoy_tests::{eventually, Cluster, ClusterOptions, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(20);

/// The first deployment of `resource` on `consumer`, once it exists.
async fn first_deployment(
    api: &RawClient,
    consumer: &str,
    resource: &str,
) -> anyhow::Result<Value> {
    let path = format!("/v1/deployments?consumer={consumer}&resource={resource}");
    let id = eventually(LONG, || async {
        let (_, list) = api.get(&path).await.ok()?;
        list.as_array()?.first()?["id"].as_str().map(String::from)
    })
    .await
    .with_context(|| format!("no deployment of {resource} on {consumer}"))?;
    get_ok(api, &format!("/v1/deployments/{id}")).await
}

/// Issue 7: with no strategy anywhere, a deployment was all at once with no watch.
async fn safe_defaults(api: &RawClient) -> anyhow::Result<()> {
    resource_with_v1(api, "plain").await?;
    consumer(api, "bare", 2).await?;
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "bare", "resource": "plain", "version": 1}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?;
    let view = get_ok(api, &format!("/v1/deployments/{id}")).await?;
    ensure!(
        view["settings"]["strategy"]
            == json!({"rolling": {"install_window": 1, "download_window": 2}})
            && view["settings"]["rollback_on_failure"] == true,
        "defaults: {}",
        view["settings"]
    );
    Ok(())
}

/// Issue 6: automatic and group deployments ran with `DeploymentSpec::default()`.
async fn policy_everywhere(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    let policy = json!({
        "strategy": {"batch": {"sizes": [1, 2], "autopause": false}},
        "min_healthy_ms": 700,
        "max_failures_per_node": 2,
        "max_failed_nodes": "50%",
        "rollback_on_failure": false,
        "pulse_interval_ms": 60_000,
        "completion": {"quorum": 0.5, "timeout_ms": 90_000}
    });
    // Automatic: a strong subscription deploys a new version with its policy.
    resource_with_v1(api, "auto").await?;
    let nodes = consumer(api, "strict", 2).await?;
    let _fleet = FleetConfig::new("auto").start(&cluster.http_addrs(), &nodes, Some(1));
    convoy_tests::scenario::wait_running(api, &nodes, "auto", 1, LONG).await?;
    let mut body = policy.clone();
    body["mode"] = json!("strong");
    put_ok(api, "/v1/consumers/strict/subscriptions/auto", body).await?;
    publish(api, "auto", json!({"label": "v2"})).await?;
    let auto = first_deployment(api, "strict", "auto").await?;
    let settings = &auto["settings"];
    for key in [
        "strategy",
        "min_healthy_ms",
        "max_failures_per_node",
        "max_failed_nodes",
        "rollback_on_failure",
        "pulse_interval_ms",
    ] {
        ensure!(
            settings[key] == policy[key],
            "automatic deployment's {key}: {} (policy {})",
            settings[key],
            policy[key]
        );
    }
    ensure!(
        settings["completion"]["quorum"] == 0.5 && settings["completion"]["timeout_ms"] == 90_000,
        "{settings}"
    );
    ensure!(
        auto["status"] == "ROLL_FORWARD_AWAITING_PULSE",
        "a coordinated policy waits for a pulse: {auto}"
    );

    // Group step: the member subscription's policy, with the group's override winning per field.
    resource_with_v1(api, "grp").await?;
    publish(api, "grp", json!({"label": "v2"})).await?;
    let members = consumer(api, "member", 2).await?;
    let _members = FleetConfig::new("grp").start(&cluster.http_addrs(), &members, Some(1));
    convoy_tests::scenario::wait_running(api, &members, "grp", 1, LONG).await?;
    let mut body = policy.clone();
    body["mode"] = json!("strong");
    body["pin"] = json!(1);
    put_ok(api, "/v1/consumers/member/subscriptions/grp", body).await?;
    post_ok(
        api,
        "/v1/groups",
        json!({"name": "pair", "members": [{"consumer": "member", "resource": "grp"}]}),
    )
    .await?;
    let started = post_ok(
        api,
        "/v1/group-deployments",
        json!({"group": "pair", "versions": {"grp": 2},
               "overrides": {"grp": {"min_healthy_ms": 5}}}),
    )
    .await?;
    let gid = started["id"].as_str().context("group id")?.to_string();
    let step = eventually(LONG, || async {
        let g = get_ok(api, &format!("/v1/group-deployments/{gid}"))
            .await
            .ok()?;
        g["steps"][0][0]["deployment"].as_str().map(String::from)
    })
    .await
    .context("the group step never started")?;
    let view = get_ok(api, &format!("/v1/deployments/{step}")).await?;
    let settings = &view["settings"];
    ensure!(settings["min_healthy_ms"] == 5, "override lost: {settings}");
    for key in [
        "strategy",
        "max_failures_per_node",
        "max_failed_nodes",
        "rollback_on_failure",
        "pulse_interval_ms",
    ] {
        ensure!(
            settings[key] == policy[key],
            "group step's {key}: {} (policy {})",
            settings[key],
            policy[key]
        );
    }
    Ok(())
}

/// Issue 9: a resource named `../../etc` was accepted by the server and refused by the agent.
async fn names_the_agent_refuses(api: &RawClient) -> anyhow::Result<()> {
    for name in ["../../etc", "a/b", ".."] {
        let (status, answer) = api.post("/v1/resources", &json!({"name": name})).await?;
        ensure!(status == 400, "{name:?} accepted: {status} {answer}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policies_reach_automatic_and_group_deployments_and_defaults_are_safe() -> anyhow::Result<()>
{
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3)).await?;
    let api = cluster.client_except(0);
    let result = async {
        safe_defaults(&api).await.context("defaults")?;
        policy_everywhere(&cluster, &api).await.context("policy")?;
        names_the_agent_refuses(&api).await.context("names")
    }
    .await;
    cluster.logs_on_error(result)
}
