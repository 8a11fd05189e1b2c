//! Issue 36 item 2, through the real binary: a machine re-imaged under a strong consumer that converged
//! gets its app back. A `convoy agent` installs version 1 through the consumer's deployment; then it is
//! killed, its state dir wiped, and it is started again: it reports the resource it is asked for as
//! wanted and holding nothing, and a follow-up deployment brings it back to version 1.

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{consumer, get_ok, post_ok, publish, put_ok, wait_status};
use convoy_tests::{eventually, Agent, Cluster, RawClient};
use serde_json::json;

const LONG: Duration = Duration::from_secs(30);

/// The ids of the deployments of `app` on `img`, oldest first.
async fn deployments(api: &RawClient) -> anyhow::Result<Vec<String>> {
    let list = get_ok(api, "/v1/deployments?consumer=img&resource=app").await?;
    Ok(list
        .as_array()
        .context("a list")?
        .iter()
        .filter_map(|d| d["id"].as_str().map(String::from))
        .collect())
}

async fn current(api: &RawClient) -> Option<u64> {
    let view = get_ok(api, "/v1/nodes/img-0").await.ok()?;
    view["resources"]["app"]["current"].as_u64()
}

async fn scenario(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    post_ok(api, "/v1/resources", json!({"name": "app"})).await?;
    consumer(api, "img", 1).await?;
    let dir = tempfile::tempdir()?;
    let flags = ["--interval-ms", "200"];
    let mut agent = Agent::start(cluster, "img-0", dir.path(), &flags)?;
    agent.wait_active(api).await?;
    publish(api, "app", json!({})).await?;
    put_ok(
        api,
        "/v1/consumers/img/subscriptions/app",
        json!({"mode": "strong"}),
    )
    .await?;
    let first = eventually(LONG, || async {
        deployments(api).await.ok()?.first().cloned()
    })
    .await
    .context("no deployment")?;
    wait_status(api, &first, "ROLLED_FORWARD", LONG)
        .await
        .with_context(|| format!("agent:\n{}", agent.output()))?;
    ensure!(current(api).await == Some(1));

    // Re-imaged: the agent starts again on an empty state dir.
    agent.kill();
    std::fs::remove_dir_all(&agent.state)?;
    let agent = Agent::start(cluster, "img-0", dir.path(), &flags)?;
    let follow = eventually(LONG, || async {
        deployments(api).await.ok()?.get(1).cloned()
    })
    .await
    .with_context(|| format!("no follow-up for the re-imaged node:\n{}", agent.output()))?;
    let view = get_ok(api, &format!("/v1/deployments/{follow}")).await?;
    ensure!(
        view["events"][0]["message"] == "follow-up to version 1 for 1 node: 1 re-imaged"
            && view["events"][0]["by"] == "system",
        "{view}"
    );
    wait_status(api, &follow, "ROLLED_FORWARD", LONG)
        .await
        .with_context(|| format!("agent:\n{}", agent.output()))?;
    ensure!(
        current(api).await == Some(1),
        "the agent does not run version 1 again:\n{}",
        agent.output()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_imaged_machine_gets_its_app_back_through_a_follow_up() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    cluster.logs_on_error(scenario(&cluster, &api).await)
}
