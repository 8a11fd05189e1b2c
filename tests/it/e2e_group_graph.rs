//! Issue 36 §6 through real servers: seed 003 checks a group's graph for connectivity, so a group deployment
//! whose members are not all linked by their versions' dependencies is refused with a 400 naming the member
//! with no link, and nothing starts.

use convoy_tests::scenario::{consumer, get_ok, post_ok, publish, put_ok, resource_with_v1};
use convoy_tests::Cluster;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_of_unlinked_members_is_refused_naming_them() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    let result = async {
        for (c, r) in [("web", "app"), ("api", "config"), ("ops", "tool")] {
            resource_with_v1(&api, r).await?;
            consumer(&api, c, 1).await?;
            put_ok(
                &api,
                &format!("/v1/consumers/{c}/subscriptions/{r}"),
                json!({"mode": "strong", "pin": 1}),
            )
            .await?;
        }
        publish(&api, "app", json!({"label": "v2"})).await?;
        publish(
            &api,
            "config",
            json!({"label": "v2", "depends_on": [{"resource": "app", "version": 2}]}),
        )
        .await?;
        publish(&api, "tool", json!({"label": "v2"})).await?;
        post_ok(
            &api,
            "/v1/groups",
            json!({"name": "shop", "members": [{"consumer": "api", "resource": "config"},
                                              {"consumer": "web", "resource": "app"},
                                              {"consumer": "ops", "resource": "tool"}]}),
        )
        .await?;
        let (status, body) = api
            .post(
                "/v1/group-deployments",
                &json!({"group": "shop", "versions": {"app": 2, "config": 2, "tool": 2}}),
            )
            .await?;
        anyhow::ensure!(
            status == 400,
            "a disconnected group started: {status} {body}"
        );
        let message = body["error"]["message"].as_str().unwrap_or_default();
        anyhow::ensure!(
            message.contains("not connected") && message.contains("ops/tool"),
            "{body}"
        );
        let started = get_ok(&api, "/v1/group-deployments").await?;
        anyhow::ensure!(
            started.as_array().is_some_and(|a| a.is_empty()),
            "something started: {started}"
        );
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
