//! The demo's story, step by step, over the real HTTP API.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};

use super::args::DemoArgs;
use crate::client::ApiClient;
use crate::local::{self, Cluster};
use crate::sim::node::Behaviour;
use crate::sim::{node_ids, Fleet};

const PULSE_MS: u64 = 3_000;

fn say(text: &str) {
    println!("\n\x1b[1m==> {text}\x1b[0m");
}

fn bar(len: u64, prefix: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>12} [{bar:40.cyan/blue}] {pos:>3}/{len} {msg}")
            .expect("template")
            .progress_chars("=> "),
    );
    bar.set_prefix(prefix.to_string());
    bar
}

/// Prints a narration line above the bar, or plainly when output is not a terminal (the bar is hidden).
fn narrate(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        println!("{line}");
    } else {
        bar.println(line);
    }
}

/// How long the demo waits for an election.
const ELECTION_PATIENCE: Duration = Duration::from_secs(20);

async fn wait_leader(client: &ApiClient) -> anyhow::Result<u64> {
    local::wait_leader(client, None, ELECTION_PATIENCE).await
}

async fn post(client: &ApiClient, path: &str, body: Value) -> anyhow::Result<Value> {
    client
        .post(path, &body)
        .await
        .with_context(|| format!("POST {path}"))
}

async fn put(client: &ApiClient, path: &str, body: Value) -> anyhow::Result<Value> {
    client
        .put(path, &body)
        .await
        .with_context(|| format!("PUT {path}"))
}

/// Waits until every node of `consumer` reported running `version` of `resource`.
async fn wait_fleet(
    client: &ApiClient,
    nodes: &[String],
    resource: &str,
    version: u64,
) -> anyhow::Result<()> {
    for _ in 0..300 {
        let mut ready = 0;
        for node in nodes {
            if let Ok(view) = client.get::<Value>(&format!("/v1/nodes/{node}")).await {
                if view["resources"][resource]["current"].as_u64() == Some(version) {
                    ready += 1;
                }
            }
        }
        if ready == nodes.len() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the simulated fleet did not report in")
}

fn count(view: &Value, state: &str) -> u64 {
    view["nodes"]
        .as_array()
        .map(|nodes| nodes.iter().filter(|n| n["state"] == state).count() as u64)
        .unwrap_or(0)
}

/// Pulses `id` every third of its interval until it answers STOP.
fn spawn_pulser(client: Arc<ApiClient>, id: String) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            match client
                .post::<_, Value>(&format!("/v1/deployments/{id}/pulse"), &json!({}))
                .await
            {
                Ok(answer) if answer["status"] == "STOP" => return,
                _ => {}
            }
            tokio::time::sleep(Duration::from_millis(PULSE_MS / 3)).await;
        }
    })
}

pub async fn run(
    cluster: &mut Cluster,
    args: &DemoArgs,
    dir: &std::path::Path,
    prometheus_port: u16,
) -> anyhow::Result<()> {
    say(&format!(
        "Starting a 3-server convoy cluster under {}",
        dir.display()
    ));
    let client = Arc::new(cluster.api_client());
    let leader = wait_leader(&client).await?;
    println!(
        "    servers {} — leader is server {leader}; token auth on (admin token in {})",
        cluster.addresses(),
        dir.join("admin-token").display()
    );

    say("Publishing resources and creating consumers");
    let web = node_ids("web", args.web_nodes);
    let api = node_ids("api", (args.web_nodes * 2 / 3).max(1));
    for resource in ["app", "config"] {
        post(&client, "/v1/resources", json!({"name": resource})).await?;
        post(
            &client,
            &format!("/v1/resources/{resource}/versions"),
            json!({"label": "initial"}),
        )
        .await?;
    }
    post(
        &client,
        "/v1/consumers",
        json!({"name": "web", "nodes": web}),
    )
    .await?;
    post(
        &client,
        "/v1/consumers",
        json!({"name": "api", "nodes": api}),
    )
    .await?;
    println!(
        "    resources app, config at version 1; consumers web ({} nodes), api ({} nodes)",
        web.len(),
        api.len()
    );

    say("Starting a simulated fleet over the HTTP API");
    let behaviour = Behaviour {
        download: Duration::from_millis(args.install_ms / 3),
        install: Duration::from_millis(args.install_ms),
        fail_rate: 0.0,
    };
    let interval = Duration::from_millis(200);
    let web_fleet = Fleet::spawn(
        client.clone(),
        web.clone(),
        behaviour,
        interval,
        Some(("app".into(), 1)),
    );
    let api_fleet = Fleet::spawn(
        client.clone(),
        api.clone(),
        behaviour,
        interval,
        Some(("config".into(), 1)),
    );
    wait_fleet(&client, &web, "app", 1).await?;
    wait_fleet(&client, &api, "config", 1).await?;
    // Strong subscriptions, pinned while we publish so nothing rolls out on its own yet.
    let rolling = json!({"rolling": {"install_window": 4, "download_window": 8}});
    put(
        &client,
        "/v1/consumers/web/subscriptions/app",
        json!({"mode": "strong", "strategy": rolling, "pin": 1}),
    )
    .await?;
    put(
        &client,
        "/v1/consumers/api/subscriptions/config",
        json!({"mode": "strong", "strategy": {"batch": {"sizes": [2, 5]}}, "pin": 1}),
    )
    .await?;
    println!(
        "    {} nodes report in; web and api subscribe in strong mode",
        web.len() + api.len()
    );

    say("Coordinated rolling deployment of app v2 on web (install window 4, download window 8, pulse every 3 s)");
    post(
        &client,
        "/v1/resources/app/versions",
        json!({"label": "v2"}),
    )
    .await?;
    let started = post(
        &client,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 2, "strategy": rolling,
               "pulse_interval_ms": PULSE_MS, "message": "demo: coordinated rollout"}),
    )
    .await?;
    let id = started["id"].as_str().context("deployment id")?.to_string();
    println!(
        "    deployment {id} is {} until the first pulse",
        started["status"].as_str().unwrap_or("?")
    );
    // Hold the subscription at v2 from now on, so the end of d-1 starts nothing on its own.
    put(
        &client,
        "/v1/consumers/web/subscriptions/app",
        json!({"mode": "strong", "strategy": rolling, "pin": 2}),
    )
    .await?;
    let pulser = spawn_pulser(client.clone(), id.clone());

    let progress = bar(web.len() as u64, "web app v2");
    let mut killed: Option<u64> = None;
    let final_status = loop {
        let view: Value = client.get(&format!("/v1/deployments/{id}")).await?;
        let done = count(&view, "succeeded");
        let status = view["status"].as_str().unwrap_or("?").to_string();
        progress.set_position(done);
        progress.set_message(format!(
            "{status} installing {}",
            count(&view, "installing")
        ));
        if killed.is_none() && done >= web.len() as u64 / 2 {
            let leader = wait_leader(&client).await?;
            cluster.get_mut(leader).context("leader")?.kill();
            narrate(
                &progress,
                format!("    ✗ killed the leader, server {leader} (SIGKILL), halfway through"),
            );
            let started = std::time::Instant::now();
            let new_leader = local::wait_leader(&client, Some(leader), ELECTION_PATIENCE).await?;
            narrate(&progress, format!(
                "    ✓ server {new_leader} leads {} ms later; the deployment state and its pulse countdown carried over",
                started.elapsed().as_millis()
            ));
            killed = Some(leader);
        }
        if !view["status"]
            .as_str()
            .is_some_and(|s| s.starts_with("ROLL_") || s.starts_with("ROLLING_"))
        {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    progress.finish_with_message(final_status.clone());
    pulser.abort();
    if final_status != "ROLLED_FORWARD" {
        bail!("deployment {id} ended {final_status}");
    }
    if let Some(old) = killed {
        cluster.restart(old)?;
        println!("    server {old} restarted from its data dir and rejoined");
    }

    say("Group deployment: app v3 on web, then config v2 (which needs app v3) on api");
    post(
        &client,
        "/v1/resources/app/versions",
        json!({"label": "v3"}),
    )
    .await?;
    post(
        &client,
        "/v1/resources/config/versions",
        json!({"label": "v2", "depends_on": [{"resource": "app", "version": 3}]}),
    )
    .await?;
    post(
        &client,
        "/v1/groups",
        json!({"name": "shop", "members": [
        {"consumer": "web", "resource": "app"}, {"consumer": "api", "resource": "config"}]}),
    )
    .await?;
    let group = post(
        &client,
        "/v1/group-deployments",
        json!({"group": "shop", "versions": {"app": 3, "config": 2}}),
    )
    .await?;
    let gid = group["id"]
        .as_str()
        .context("group deployment id")?
        .to_string();
    // The group holds both subscriptions now: unpin them so they follow the newest versions after.
    put(
        &client,
        "/v1/consumers/web/subscriptions/app",
        json!({"mode": "strong", "strategy": rolling}),
    )
    .await?;
    put(
        &client,
        "/v1/consumers/api/subscriptions/config",
        json!({"mode": "strong", "strategy": {"batch": {"sizes": [2, 5]}}}),
    )
    .await?;
    let steps = group["steps"].as_array().map(Vec::len).unwrap_or(0);
    println!("    group deployment {gid}: {steps} steps");
    let progress = bar(steps as u64, "shop");
    let final_group = loop {
        let view: Value = client.get(&format!("/v1/group-deployments/{gid}")).await?;
        let status = view["status"].as_str().unwrap_or("?").to_string();
        let step = view["current_step"].as_u64().unwrap_or(0);
        progress.set_position(if status == "SUCCEEDED" {
            steps as u64
        } else {
            step
        });
        let members: Vec<String> = view["steps"]
            .as_array()
            .and_then(|s| s.get(step as usize))
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|i| {
                        format!(
                            "{}:{}@{} {}",
                            i["consumer"].as_str().unwrap_or(""),
                            i["resource"].as_str().unwrap_or(""),
                            i["version"],
                            i["status"].as_str().unwrap_or("waiting")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        progress.set_message(format!("{status} {}", members.join(", ")));
        if status != "RUNNING" {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    progress.finish_with_message(final_group.clone());
    web_fleet.stop().await;
    api_fleet.stop().await;
    if final_group != "SUCCEEDED" {
        bail!("group deployment {gid} ended {final_group}");
    }
    super::analysis_act::run(&client, dir, prometheus_port, behaviour, 8).await?;
    say("Done: every node runs the new versions; no rollout state was lost when the leader died; a bad version rolled itself back");
    Ok(())
}
