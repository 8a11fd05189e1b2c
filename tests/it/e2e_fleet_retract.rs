//! Retracting a version, through the real binary and real agents: a strong consumer running the retracted
//! version is deployed back to the newest allowed one (and the agent switches), a weak one is sent the
//! older version at once, the active deployment of it is aborted with the reason, it cannot be deployed,
//! the version is marked in the resource view, and `convoy resource unretract` brings it back.

use std::process::Command;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    event_messages, get_ok, post_ok, publish, put_ok, wait_running, wait_status,
};
use convoy_tests::{convoy_bin, eventually, Agent, Cluster, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(40);

/// Runs `convoy resource ARGS` against the cluster; its stdout.
fn cli(cluster: &Cluster, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(convoy_bin())
        .arg("resource")
        .args(args)
        .args(["--server", &cluster.http_addrs().join(",")])
        .output()?;
    ensure!(
        out.status.success(),
        "convoy resource {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

/// The id of the newest deployment of `app` on `consumer` at `version`, once it exists.
async fn deployment_of(api: &RawClient, consumer: &str, version: u64) -> anyhow::Result<String> {
    let path = format!("/v1/deployments?consumer={consumer}&resource=app");
    eventually(Duration::from_secs(15), || async {
        let (status, list) = api.get(&path).await.ok()?;
        (status == 200).then_some(())?;
        list.as_array()?
            .iter()
            .rev()
            .find(|d| d["version"].as_u64() == Some(version))
            .and_then(|d| d["id"].as_str().map(String::from))
    })
    .await
    .with_context(|| format!("no deployment of app v{version} on {consumer}"))
}

async fn scenario(cluster: &Cluster, api: &RawClient, agents: &[Agent]) -> anyhow::Result<()> {
    let strong = vec!["s-1".to_string()];
    let weak = vec!["w-1".to_string()];
    post_ok(api, "/v1/resources", json!({"name": "app"})).await?;
    for (c, n) in [("steady", &strong), ("loose", &weak)] {
        post_ok(api, "/v1/consumers", json!({"name": c, "nodes": n})).await?;
    }
    let all_at_once = json!({"all_at_once": {}});
    put_ok(
        api,
        "/v1/consumers/steady/subscriptions/app",
        json!({"mode": "strong", "strategy": all_at_once}),
    )
    .await?;
    put_ok(
        api,
        "/v1/consumers/loose/subscriptions/app",
        json!({"mode": "weak"}),
    )
    .await?;
    publish(api, "app", json!({})).await?;
    wait_running(api, &strong, "app", 1, LONG).await?;
    wait_running(api, &weak, "app", 1, LONG).await?;
    publish(api, "app", json!({})).await?;
    wait_running(api, &strong, "app", 2, LONG).await?;
    wait_running(api, &weak, "app", 2, LONG).await?;
    let forward = deployment_of(api, "steady", 2).await?;
    wait_status(api, &forward, "ROLLED_FORWARD", LONG).await?;

    let out = cli(cluster, &["retract", "app", "2", "-m", "leaks memory"])?;
    ensure!(out.contains("retracted app version 2"), "{out}");
    // The strong consumer is deployed back to 1 automatically, the weak one sent 1 at once.
    let back = deployment_of(api, "steady", 1).await?;
    ensure!(back != forward, "the old deployment of 1 was found");
    let view = wait_status(api, &back, "ROLLED_FORWARD", LONG).await?;
    ensure!(
        event_messages(&view)
            .contains(&"version 2 of app is retracted; selected version changed to 1".into()),
        "{view}"
    );
    wait_running(api, &strong, "app", 1, LONG).await?;
    wait_running(api, &weak, "app", 1, LONG).await?;
    for n in ["s-1", "w-1"] {
        let node = get_ok(api, &format!("/v1/nodes/{n}")).await?;
        ensure!(node["targets"]["app"]["version"] == 1, "{n}: {node}");
    }
    let res = get_ok(api, "/v1/resources/app").await?;
    let r = &res["versions"][1]["retracted"];
    ensure!(
        r["by"] == "user"
            && r["message"] == "leaks memory"
            && res["versions"][0].get("retracted").is_none(),
        "{res}"
    );
    let table = cli(cluster, &["show", "app"])?;
    ensure!(
        table.contains("RETRACTED") && table.contains("by user"),
        "{table}"
    );
    // Deploying it by hand is refused while it is retracted.
    let (status, body) = api
        .post(
            "/v1/deployments",
            &json!({"consumer": "loose", "resource": "app", "version": 2}),
        )
        .await?;
    ensure!(
        status == 409
            && body["error"]["message"]
                == "version 2 of resource \"app\" is retracted; unretract it first",
        "{status} {body}"
    );

    // A deployment of version 3 in flight (coordinated, awaiting a pulse) is aborted by its retraction.
    let patch = |body: Value| async move {
        let (status, answer) = api
            .patch("/v1/consumers/steady/subscriptions/app", &body)
            .await?;
        ensure!(status == 200, "patch: {status} {answer}");
        anyhow::Ok(())
    };
    patch(json!({"pulse_interval_ms": 600_000})).await?;
    publish(api, "app", json!({})).await?;
    let third = deployment_of(api, "steady", 3).await?;
    wait_running(api, &weak, "app", 3, LONG).await?;
    let (status, body) = api
        .post(
            "/v1/resources/app/versions/3/retract",
            &json!({"message": "bad config"}),
        )
        .await?;
    ensure!(status == 200, "{status} {body}");
    let view = wait_status(api, &third, "ABORTED", LONG).await?;
    let why = "version 3 of app retracted by user: bad config";
    ensure!(
        view["events"].as_array().is_some_and(|es| es
            .iter()
            .any(|e| e["action"] == "retracted" && e["message"] == why)),
        "{view}"
    );
    wait_running(api, &weak, "app", 1, LONG).await?;
    wait_running(api, &strong, "app", 1, LONG).await?;
    patch(json!({"pulse_interval_ms": null})).await?;

    // Unretracted through the CLI, version 3 is selected and deployed again.
    cli(cluster, &["unretract", "app", "3"])?;
    wait_running(api, &strong, "app", 3, LONG).await?;
    wait_running(api, &weak, "app", 3, LONG).await?;
    ensure!(agents.len() == 2);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retracted_version_is_replaced_everywhere_through_real_agents() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    let work = tempfile::tempdir()?;
    let flags = ["--interval-ms", "200"];
    let agents = vec![
        Agent::start(&cluster, "s-1", work.path(), &flags)?,
        Agent::start(&cluster, "w-1", work.path(), &flags)?,
    ];
    let result = scenario(&cluster, &api, &agents).await;
    if result.is_err() {
        for a in &agents {
            eprintln!("agent {}:\n{}", a.log.display(), a.output());
        }
        eprintln!("{}", cluster.logs());
    }
    result
}
