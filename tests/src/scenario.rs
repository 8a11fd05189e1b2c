//! Steps the end-to-end deployment tests share: set up a resource and a consumer over the API, wait for
//! a simulated fleet to report in, and follow a deployment until a condition holds.

use std::time::Duration;

use anyhow::{bail, ensure, Context};
use serde_json::{json, Value};

use crate::eventually;
use crate::{Cluster, RawClient};

/// `POST` that must succeed (2xx); returns the body.
pub async fn post_ok(api: &RawClient, path: &str, body: Value) -> anyhow::Result<Value> {
    let (status, answer) = api.post(path, &body).await?;
    ensure!(
        (200..300).contains(&status),
        "POST {path} {body}: {status} {answer}"
    );
    Ok(answer)
}

/// `PUT` that must succeed (2xx); returns the body.
pub async fn put_ok(api: &RawClient, path: &str, body: Value) -> anyhow::Result<Value> {
    let (status, answer) = api.put(path, &body).await?;
    ensure!(
        (200..300).contains(&status),
        "PUT {path} {body}: {status} {answer}"
    );
    Ok(answer)
}

/// `GET` that must answer 200; returns the body.
pub async fn get_ok(api: &RawClient, path: &str) -> anyhow::Result<Value> {
    let (status, answer) = api.get(path).await?;
    ensure!(status == 200, "GET {path}: {status} {answer}");
    Ok(answer)
}

/// Every route of `routes` refuses a bad `offset` or `limit` (zero, past the bounds, not a number, 10,000
/// digits, empty) with a 400 whose message names the parameter and stays short (the value cut).
pub async fn refuses_bad_pages(api: &RawClient, routes: &[&str]) -> anyhow::Result<()> {
    let huge = "9".repeat(10_000);
    for route in routes {
        for (query, name) in [
            ("limit=0", "limit"),
            ("limit=1001", "limit"),
            ("limit=ten", "limit"),
            (&*format!("limit={huge}"), "limit"),
            ("offset=-1", "offset"),
            ("offset=100000001", "offset"),
            ("offset=0&limit=", "limit"),
        ] {
            let (status, body) = api.get(&format!("{route}?{query}")).await?;
            let message = body["error"]["message"].as_str().unwrap_or_default();
            ensure!(
                status == 400 && message.starts_with(name) && message.len() < 200,
                "{route}?{}: {status} {body}",
                &query[..query.len().min(40)]
            );
        }
    }
    Ok(())
}

/// Creates `resource` with one published version (version 1).
pub async fn resource_with_v1(api: &RawClient, resource: &str) -> anyhow::Result<()> {
    post_ok(api, "/v1/resources", json!({"name": resource})).await?;
    publish(api, resource, json!({"label": "initial"})).await?;
    Ok(())
}

/// Publishes a version of `resource`; returns its number.
pub async fn publish(api: &RawClient, resource: &str, body: Value) -> anyhow::Result<u64> {
    let answer = post_ok(api, &format!("/v1/resources/{resource}/versions"), body).await?;
    answer["version"]
        .as_u64()
        .with_context(|| format!("no version in {answer}"))
}

/// Creates consumer `name` with nodes `name-0` .. `name-(n-1)`; returns their ids.
pub async fn consumer(api: &RawClient, name: &str, n: usize) -> anyhow::Result<Vec<String>> {
    let nodes: Vec<String> = (0..n).map(|i| format!("{name}-{i}")).collect();
    post_ok(api, "/v1/consumers", json!({"name": name, "nodes": nodes})).await?;
    Ok(nodes)
}

/// Creates, for each `(name, node)`, consumer `name` with the one node `node`, subscribed to `resource`
/// with the default (weak) settings.
pub async fn subscribed_consumers(
    api: &RawClient,
    resource: &str,
    consumers: &[(&str, &str)],
) -> anyhow::Result<()> {
    for (name, node) in consumers {
        post_ok(api, "/v1/consumers", json!({"name": name, "nodes": [node]})).await?;
        let path = format!("/v1/consumers/{name}/subscriptions/{resource}");
        put_ok(api, &path, json!({})).await?;
    }
    Ok(())
}

/// A client of the server at `addr` that sends `token` (none: anonymous).
pub fn client_with_token(addr: &str, token: Option<&str>) -> anyhow::Result<RawClient> {
    Ok(RawClient::from(
        convoy_node::client::ApiClient::new(addr)?.with_token(token),
    ))
}

/// The nodes report running `version` of `resource` until the leader has them all active (a node that
/// never reported is skipped by a deployment).
pub async fn report_running(
    api: &RawClient,
    nodes: &[String],
    resource: &str,
    version: u64,
) -> anyhow::Result<()> {
    for _ in 0..100 {
        for node in nodes {
            let report = json!({"resources": {resource: {"current": version}}});
            post_ok(api, &format!("/v1/nodes/{node}/report"), report).await?;
        }
        let mut active = true;
        for node in nodes {
            active &= get_ok(api, &format!("/v1/nodes/{node}")).await?["active"] == true;
        }
        if active {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("nodes never became active")
}

/// Waits until every node has reported running `version` of `resource`.
pub async fn wait_running(
    api: &RawClient,
    nodes: &[String],
    resource: &str,
    version: u64,
    timeout: Duration,
) -> anyhow::Result<()> {
    for node in nodes {
        eventually(timeout, || async move {
            let (status, view) = api.get(&format!("/v1/nodes/{node}")).await.ok()?;
            (status == 200 && view["resources"][resource]["current"].as_u64() == Some(version))
                .then_some(())
        })
        .await
        .with_context(|| format!("{node} never ran {resource} v{version}"))?;
    }
    Ok(())
}

/// The deployment `id`.
pub async fn deployment(api: &RawClient, id: &str) -> anyhow::Result<Value> {
    get_ok(api, &format!("/v1/deployments/{id}")).await
}

/// Polls deployment `id` until `done` holds for it; fails with its last view after `timeout`.
pub async fn wait_deployment(
    api: &RawClient,
    id: &str,
    timeout: Duration,
    done: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let view = deployment(api, id).await;
        if let Ok(v) = &view {
            if done(v) {
                return Ok(v.clone());
            }
        }
        if std::time::Instant::now() > deadline {
            bail!("deployment {id} not as expected within {timeout:?}; last view: {view:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits for deployment `id` to reach `status`.
pub async fn wait_status(
    api: &RawClient,
    id: &str,
    status: &str,
    timeout: Duration,
) -> anyhow::Result<Value> {
    wait_deployment(api, id, timeout, |v| v["status"] == status).await
}

/// How many of the deployment's nodes are in `state`.
pub fn count_nodes(view: &Value, state: &str) -> usize {
    view["nodes"]
        .as_array()
        .map(|ns| ns.iter().filter(|n| n["state"] == state).count())
        .unwrap_or(0)
}

/// The messages of the deployment's events, in event order.
pub fn event_messages(view: &Value) -> Vec<String> {
    view["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["message"].as_str().map(String::from))
        .collect()
}

/// A consumer `name` of `n` nodes of `config`'s resource, its fleet started and all running version 1, then
/// subscribed strong and pinned at 1.
pub async fn strong_fleet_at_v1(
    cluster: &Cluster,
    api: &RawClient,
    name: &str,
    n: usize,
    config: crate::FleetConfig,
) -> anyhow::Result<(Vec<String>, crate::Fleet)> {
    let nodes = consumer(api, name, n).await?;
    let resource = config.resource.clone();
    let fleet = config.start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, &resource, 1, Duration::from_secs(60)).await?;
    put_ok(
        api,
        &format!("/v1/consumers/{name}/subscriptions/{resource}"),
        json!({"mode": "strong", "pin": 1}),
    )
    .await?;
    Ok((nodes, fleet))
}

/// The node ids of the deployment's events with `action`, in event order.
pub fn event_nodes(view: &Value, action: &str) -> Vec<String> {
    view["events"]
        .as_array()
        .map(|es| {
            es.iter()
                .filter(|e| e["action"] == action)
                .filter_map(|e| e["node"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The time of the first event entering `status`.
pub fn status_at(view: &Value, status: &str) -> Option<u64> {
    view["events"]
        .as_array()?
        .iter()
        .find(|e| e["status"] == status)
        .and_then(|e| e["at"].as_u64())
}

/// Every node's `current` version of `resource`, as the servers know it.
pub async fn currents(
    api: &RawClient,
    nodes: &[String],
    resource: &str,
) -> anyhow::Result<Vec<Option<u64>>> {
    let mut out = Vec::new();
    for node in nodes {
        let view = get_ok(api, &format!("/v1/nodes/{node}")).await?;
        out.push(view["resources"][resource]["current"].as_u64());
    }
    Ok(out)
}

/// The names in a `GET /v1/resources` (or any list of named objects) answer.
pub fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Waits until the server of `api` lists exactly the resources `want`, in order.
pub async fn wait_resources(
    api: &RawClient,
    want: &[String],
    timeout: Duration,
) -> anyhow::Result<()> {
    eventually(timeout, || async move {
        let (_, list) = api.get("/v1/resources").await.ok()?;
        (names(&list) == want).then_some(())
    })
    .await
}

/// Creates resources `res-00`, `res-01`, … (`n` of them) through `api`; returns their names.
pub async fn create_resources(api: &RawClient, n: usize) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("res-{i:02}");
        let (status, body) = api.post("/v1/resources", &json!({"name": name})).await?;
        ensure!(status == 201, "creating {name}: {status} {body}");
        written.push(name);
    }
    Ok(written)
}

/// Kills every running server of `cluster` at once (SIGKILL), restarts them all from their data
/// dirs, and waits until each lists exactly the resources `want`; returns the new leader.
pub async fn kill_all_and_restart(cluster: &mut Cluster, want: &[String]) -> anyhow::Result<u64> {
    let ids = cluster.running();
    for id in &ids {
        cluster.server_mut(*id).kill();
    }
    for id in &ids {
        cluster.restart(*id)?;
    }
    let leader = cluster.wait_leader(Duration::from_secs(15)).await?;
    for id in ids {
        wait_resources(&cluster.server(id).client(), want, Duration::from_secs(10))
            .await
            .map_err(|e| {
                anyhow::anyhow!("server {id} (leader {leader}): {e}\n{}", cluster.logs())
            })?;
    }
    Ok(leader)
}
