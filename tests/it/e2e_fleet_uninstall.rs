//! Uninstall through the real binary and real agents: deleting a subscription, removing a node from its
//! consumer, deleting the consumer, losing interest (`--uninterested`) and rolling back a node that had no
//! previous version each make the agent tear down and delete the resource and report it removed; deleting
//! a consumer or group is refused while it is in use.

use std::path::Path;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{get_ok, post_ok, publish, put_ok, wait_running, wait_status};
use convoy_tests::{eventually, Agent, Cluster, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(40);

/// Waits until `node` reports `resource` removed (no current version) and its agent deleted the dir.
async fn wait_removed(
    api: &RawClient,
    node: &str,
    resource: &str,
    state: &Path,
) -> anyhow::Result<Value> {
    let dir = state.join("resources").join(resource);
    eventually(LONG, || async {
        let (status, view) = api.get(&format!("/v1/nodes/{node}")).await.ok()?;
        let r = &view["resources"][resource];
        (status == 200 && r.is_object() && r["current"].is_null() && !dir.exists()).then_some(view)
    })
    .await
    .map_err(|e| {
        let listing = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
            .ok();
        anyhow::anyhow!("{e}: {node} never removed {resource}; dir holds {listing:?}")
    })
}

async fn scenario(api: &RawClient, agents: &[Agent]) -> anyhow::Result<()> {
    let (a, b, c) = (&agents[0], &agents[1], &agents[2]);
    post_ok(api, "/v1/resources", json!({"name": "app"})).await?;
    post_ok(api, "/v1/resources", json!({"name": "tool"})).await?;
    post_ok(
        api,
        "/v1/consumers",
        json!({"name": "web", "nodes": ["u-a", "u-b"]}),
    )
    .await?;
    for r in ["app", "tool"] {
        put_ok(
            api,
            &format!("/v1/consumers/web/subscriptions/{r}"),
            json!({"mode": "weak"}),
        )
        .await?;
        publish(api, r, json!({})).await?;
    }
    let ab = vec!["u-a".to_string(), "u-b".to_string()];
    wait_running(api, &ab, "app", 1, LONG).await?;
    wait_running(api, &ab, "tool", 1, LONG).await?;

    // Unsubscribe: both nodes remove `tool`, keep `app`.
    let (status, body) = api.delete("/v1/consumers/web/subscriptions/tool").await?;
    ensure!(
        status == 200 && body["subscriptions"].get("tool").is_none(),
        "{status} {body}"
    );
    wait_removed(api, "u-a", "tool", &a.state).await?;
    wait_removed(api, "u-b", "tool", &b.state).await?;
    ensure!(a.state.join("resources/app").exists());
    let (status, _) = api.delete("/v1/consumers/web/subscriptions/tool").await?;
    ensure!(status == 404, "unsubscribed twice: {status}");

    // A node removed from the consumer removes what it held for it.
    put_ok(api, "/v1/consumers/web/nodes", json!({"remove": ["u-b"]})).await?;
    wait_removed(api, "u-b", "app", &b.state).await?;

    // Interest lost: u-c runs with --uninterested app; it is never sent app, and reports so.
    post_ok(
        api,
        "/v1/consumers",
        json!({"name": "side", "nodes": ["u-c"]}),
    )
    .await?;
    put_ok(
        api,
        "/v1/consumers/side/subscriptions/app",
        json!({"mode": "weak"}),
    )
    .await?;
    eventually(LONG, || async {
        let (_, v) = api.get("/v1/nodes/u-c").await.ok()?;
        (v["resources"]["app"]["interested"] == false).then_some(())
    })
    .await
    .context("u-c never reported interested: false")?;
    ensure!(
        !c.state.join("resources/app").exists(),
        "installed though uninterested"
    );

    // A rollback of a node with no previous version uninstalls it: u-b joins `web` again, version 1 of
    // `fresh` (no subscription: deployed by hand) installs on u-b and fails on u-a after a second, the
    // deployment rolls back, and u-b removes `fresh`.
    put_ok(api, "/v1/consumers/web/nodes", json!({"add": ["u-b"]})).await?;
    post_ok(api, "/v1/resources", json!({"name": "fresh"})).await?;
    publish(api, "fresh", json!({})).await?;
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "fresh", "version": 1, "strategy": {"all_at_once": {}}}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?.to_string();
    let view = wait_status(api, &id, "ROLLED_BACK", LONG).await?;
    let b_node = view["nodes"]
        .as_array()
        .and_then(|ns| ns.iter().find(|n| n["id"] == "u-b"))
        .cloned();
    ensure!(
        b_node
            .as_ref()
            .is_some_and(|n| n["state"] == "rolled_back" && n["from_version"].is_null()),
        "{view}"
    );
    ensure!(
        view["events"].as_array().is_some_and(|es| es
            .iter()
            .any(|e| e["node"] == "u-b" && e["message"] == "uninstalled")),
        "{view}"
    );
    wait_removed(api, "u-b", "fresh", &b.state).await?;

    // Deleting: 409 while in use, then the nodes remove what they held.
    post_ok(
        api,
        "/v1/groups",
        json!({"name": "g", "members": [{"consumer": "web", "resource": "app"}]}),
    )
    .await?;
    let (status, body) = api.delete("/v1/consumers/web").await?;
    ensure!(
        status == 409
            && body["error"]["message"]
                == "consumer \"web\" is in use: it is a member of group \"g\"",
        "{status} {body}"
    );
    let (status, body) = api.delete("/v1/groups/g").await?;
    ensure!(status == 200 && body["name"] == "g", "{status} {body}");
    let (status, body) = api.delete("/v1/consumers/web").await?;
    ensure!(status == 200 && body["name"] == "web", "{status} {body}");
    wait_removed(api, "u-a", "app", &a.state).await?;
    let (status, _) = api.get("/v1/consumers/web").await?;
    ensure!(status == 404);
    let node = get_ok(api, "/v1/nodes/u-a").await?;
    ensure!(node["consumers"] == json!([]), "{node}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_uninstall_when_unsubscribed_removed_deleted_uninterested_or_rolled_back_to_nothing(
) -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    let work = tempfile::tempdir()?;
    // `fresh` fails on u-a only, after a second.
    let install = r#"if [ "$CONVOY_RESOURCE" = fresh ] && [ "$CONVOY_NODE" = u-a ]; then sleep 1; exit 1; fi"#;
    let mut agents = Vec::new();
    for (node, extra) in [("u-a", None), ("u-b", None), ("u-c", Some("app"))] {
        let mut flags = vec!["--interval-ms", "200", "--install-command", install];
        if let Some(r) = extra {
            flags.extend(["--uninterested", r]);
        }
        agents.push(Agent::start_with_env(
            &cluster,
            node,
            work.path(),
            &flags,
            &[("CONVOY_NODE", node)],
        )?);
    }
    let result = scenario(&api, &agents).await;
    if result.is_err() {
        for a in &agents {
            eprintln!("agent {}:\n{}", a.log.display(), a.output());
        }
        eprintln!("{}", cluster.logs());
    }
    result
}
