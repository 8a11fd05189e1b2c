//! Dry runs and "why" through a real server: a deployment's and a group deployment's plan change nothing
//! (the applied index stays, no deployment appears), and a node's decisions are listed with reasons.

use std::time::Duration;

use convoy_tests::scenario::{deployment, get_ok, post_ok, publish, resource_with_v1};
use convoy_tests::{eventually, Cluster, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(60);

/// Reports `nodes` alive on version 1 of `app` until the server shows them all active.
async fn alive(api: &RawClient, nodes: &[&str]) -> anyhow::Result<()> {
    eventually(LONG, || async move {
        let reports: Vec<Value> = nodes
            .iter()
            .map(|n| {
                json!({"node": n, "resources": {"app": {"current": 1,
                    "versions": {"1": {"downloaded": true, "installed": true, "done": true}}}}})
            })
            .collect();
        post_ok(api, "/v1/nodes/reports", json!({ "reports": reports }))
            .await
            .ok()?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        for n in nodes {
            if get_ok(api, &format!("/v1/nodes/{n}")).await.ok()?["active"] != true {
                return None;
            }
        }
        Some(())
    })
    .await
}

/// One server with resource `app` at versions 1 and 2, and its client.
async fn app_at_two_versions() -> anyhow::Result<(Cluster, RawClient)> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(1).client();
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    Ok((cluster, api))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_change_nothing_and_why_lists_a_nodes_decisions() -> anyhow::Result<()> {
    let (_cluster, api) = app_at_two_versions().await?;
    post_ok(
        &api,
        "/v1/consumers",
        json!({"name": "web", "nodes": ["n0", "n1", "n2", "n3"]}),
    )
    .await?;
    alive(&api, &["n0", "n1", "n2"]).await?;
    post_ok(
        &api,
        "/v1/groups",
        json!({"name": "g", "members": [{"consumer": "web", "resource": "app"}]}),
    )
    .await?;
    let body = json!({"consumer": "web", "resource": "app",
                      "strategy": {"batch": {"sizes": [1, 2]}}});

    let before = get_ok(&api, "/v1/cluster").await?["last_applied"].clone();
    let plan = post_ok(&api, "/v1/deployments?dry_run=true", body.clone()).await?;
    assert_eq!(plan["version"], 2, "{plan}");
    assert_eq!(plan["version_reason"], "newest");
    let steps: Vec<(String, u64)> = plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["id"].as_str().unwrap().to_string(),
                n["step"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [("n0".into(), 1), ("n1".into(), 2), ("n2".into(), 2)]
    );
    assert_eq!(plan["skipped"][0]["id"], "n3", "{plan}");
    let group = post_ok(
        &api,
        "/v1/group-deployments?dry_run=true",
        json!({"group": "g"}),
    )
    .await?;
    assert_eq!(group["steps"][0][0]["version"], 2, "{group}");
    assert_eq!(
        group["steps"][0][0]["plan"]["nodes"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(get_ok(&api, "/v1/cluster").await?["last_applied"], before);
    assert_eq!(get_ok(&api, "/v1/deployments").await?, json!([]));
    let (status, refused) = api
        .post(
            "/v1/deployments?dry_run=true",
            &json!({"consumer": "nope", "resource": "app"}),
        )
        .await?;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (404, Some("not_found"))
    );

    let started = post_ok(&api, "/v1/deployments", body).await?;
    let id = started["id"].as_str().unwrap();
    let why = get_ok(&api, &format!("/v1/deployments/{id}/nodes/n0")).await?;
    let reasons: Vec<&str> = why["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["why"].as_str().unwrap())
        .collect();
    assert!(
        reasons.contains(&"admitted to the install window: may install the version"),
        "{why}"
    );
    assert!(
        why["now"].as_str().unwrap().starts_with("installing"),
        "{why}"
    );
    let waiting = get_ok(&api, &format!("/v1/deployments/{id}/nodes/n2")).await?;
    assert!(
        waiting["now"].as_str().unwrap().starts_with("pending"),
        "{waiting}"
    );
    let (status, _) = api.get(&format!("/v1/deployments/{id}/nodes/n3")).await?;
    assert_eq!(status, 404, "n3 is not in the deployment");
    Ok(())
}

/// The node ids of a plan's or a deployment's `nodes`, in order.
fn node_ids(view: &Value) -> Vec<String> {
    view["nodes"]
        .as_array()
        .map(|ns| {
            ns.iter()
                .filter_map(|n| n["id"].as_str())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_leaves_out_the_node_another_consumers_deployment_takes_as_the_start_does(
) -> anyhow::Result<()> {
    // n1 is in `web` and `edge`; web's deployment of app is active (paused), so a deployment of app on
    // edge leaves n1 out (a node follows one deployment of a resource at a time): its dry run must too.
    let (_cluster, api) = app_at_two_versions().await?;
    post_ok(
        &api,
        "/v1/consumers",
        json!({"name": "web", "nodes": ["n0", "n1"]}),
    )
    .await?;
    post_ok(
        &api,
        "/v1/consumers",
        json!({"name": "edge", "nodes": ["n1", "n2"]}),
    )
    .await?;
    alive(&api, &["n0", "n1", "n2"]).await?;
    let on_web = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 2}),
    )
    .await?;
    let web = on_web["id"].as_str().unwrap().to_string();
    post_ok(&api, &format!("/v1/deployments/{web}/pause"), json!({})).await?;
    let body = json!({"consumer": "edge", "resource": "app", "version": 2});
    let plan = post_ok(&api, "/v1/deployments?dry_run=true", body.clone()).await?;
    let started = post_ok(&api, "/v1/deployments", body).await?;
    let edge = deployment(&api, started["id"].as_str().unwrap()).await?;
    assert_eq!(node_ids(&edge), ["n2"], "the start leaves n1 out: {edge}");
    assert_eq!(
        node_ids(&plan),
        node_ids(&edge),
        "the plan's node set is the deployment's: {plan}"
    );
    assert_eq!(plan["skipped"][0]["id"], "n1", "{plan}");
    Ok(())
}
