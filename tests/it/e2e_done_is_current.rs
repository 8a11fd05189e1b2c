//! Issue 36 §6 through real servers: in seed 003 installation is finished when `done` is true, a success when
//! `error` is empty. A node whose report shows the new version done without error but names no `current`
//! is a success: the server records that version as what the node runs, and the deployment rolls forward.

use std::time::Duration;

use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, put_ok, resource_with_v1, wait_status,
};
use convoy_tests::Cluster;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn done_without_error_and_no_current_is_a_success() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    let result = async {
        resource_with_v1(&api, "app").await?;
        let nodes = consumer(&api, "web", 1).await?;
        let path = format!("/v1/nodes/{}/report", nodes[0]);
        let report = |body| post_ok(&api, &path, body);
        let done = json!({"downloaded": true, "installed": true, "done": true});
        report(json!({"resources": {"app": {"current": 1, "versions": {"1": done}}}})).await?;
        put_ok(
            &api,
            "/v1/consumers/web/subscriptions/app",
            json!({"mode": "strong", "pin": 1}),
        )
        .await?;
        publish(&api, "app", json!({"label": "v2"})).await?;
        let started = post_ok(
            &api,
            "/v1/deployments",
            json!({"consumer": "web", "resource": "app", "version": 2, "force": true,
                   "strategy": {"all_at_once": {}}}),
        )
        .await?;
        let id = started["id"].as_str().unwrap_or_default().to_string();
        // The node downloads and installs v2 and says it is done, without naming what it runs.
        for _ in 0..3 {
            report(json!({"resources": {"app": {"versions": {"1": done, "2": done}}}})).await?;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        wait_status(&api, &id, "ROLLED_FORWARD", Duration::from_secs(20)).await?;
        let view = get_ok(&api, &format!("/v1/nodes/{}", nodes[0])).await?;
        anyhow::ensure!(view["resources"]["app"]["current"] == 2, "{view}");
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
