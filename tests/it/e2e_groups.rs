//! Group deployments and consistency modes over three real servers and simulated fleets: a group
//! deployment rolls `config` onto one consumer only after `app`, which it needs, is on the other; and
//! weak and strong consumers side by side — the weak one takes each version at once with no
//! deployment, the strong one gets a deployment per version and never sees a later version mid-way.

use std::time::Duration;

use convoy_tests::eventually;
use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, put_ok, resource_with_v1, status_at, wait_running,
    wait_status,
};
use convoy_tests::{Cluster, Fleet, FleetConfig, Phase, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(40);

async fn fleet(
    cluster: &Cluster,
    api: &RawClient,
    name: &str,
    resource: &str,
    n: usize,
) -> anyhow::Result<(Vec<String>, Fleet)> {
    let nodes = consumer(api, name, n).await?;
    let config = FleetConfig {
        install: Duration::from_millis(250),
        ..FleetConfig::new(resource)
    };
    let fleet = config.start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, resource, 1, LONG).await?;
    Ok((nodes, fleet))
}

/// The ends of `phase` spans on `version`: (earliest start, latest end).
fn extent(fleet: &Fleet, version: u64) -> (u64, u64) {
    let spans: Vec<_> = fleet
        .spans()
        .into_iter()
        .filter(|s| s.phase == Phase::Install && s.version == version)
        .collect();
    assert!(!spans.is_empty(), "no install of version {version}");
    let start = spans.iter().map(|s| s.start).min().unwrap();
    let end = spans
        .iter()
        .map(|s| s.end.expect("finished"))
        .max()
        .unwrap();
    (start, end)
}

async fn deployments_of(api: &RawClient, consumer: &str) -> anyhow::Result<Vec<Value>> {
    let list = get_ok(api, &format!("/v1/deployments?consumer={consumer}")).await?;
    Ok(list.as_array().cloned().unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_deployment_follows_dependency_order() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    resource_with_v1(&api, "config").await?;
    let (web, web_fleet) = fleet(&cluster, &api, "web", "app", 3).await?;
    let (apis, api_fleet) = fleet(&cluster, &api, "api", "config", 3).await?;
    let batch = json!({"batch": {"sizes": [2]}});
    for (c, r) in [("web", "app"), ("api", "config")] {
        put_ok(
            &api,
            &format!("/v1/consumers/{c}/subscriptions/{r}"),
            json!({"mode": "strong", "strategy": batch, "pin": 1}),
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
    post_ok(
        &api,
        "/v1/groups",
        json!({"name": "shop", "members": [{"consumer": "api", "resource": "config"},
                                          {"consumer": "web", "resource": "app"}]}),
    )
    .await?;
    let planned = post_ok(
        &api,
        "/v1/group-deployments",
        json!({"group": "shop", "versions": {"app": 2, "config": 2}}),
    )
    .await?;
    // The plan puts app (needed) before config (needing it), whatever the member order.
    let steps: Vec<Vec<(String, String, u64)>> = planned["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| {
            step.as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    let s = |k: &str| m[k].as_str().unwrap().to_string();
                    (s("consumer"), s("resource"), m["version"].as_u64().unwrap())
                })
                .collect()
        })
        .collect();
    let member = |c: &str, r: &str| (c.to_string(), r.to_string(), 2);
    assert_eq!(
        steps,
        vec![vec![member("web", "app")], vec![member("api", "config")]],
        "{planned}"
    );
    for (c, r) in [("web", "app"), ("api", "config")] {
        put_ok(
            &api,
            &format!("/v1/consumers/{c}/subscriptions/{r}"),
            json!({"mode": "strong", "strategy": batch}),
        )
        .await?;
    }
    let gid = planned["id"].as_str().unwrap().to_string();
    let path = format!("/v1/group-deployments/{gid}");
    let done = eventually(LONG, || {
        let (api, path) = (api.clone(), path.clone());
        async move {
            let view = get_ok(&api, &path).await.ok()?;
            (view["status"] != "RUNNING").then_some(view)
        }
    })
    .await?;
    assert_eq!(done["status"], "SUCCEEDED", "{done}");
    let listed = get_ok(&api, "/v1/group-deployments").await?;
    assert_eq!(
        listed[0], done,
        "the list holds the same view, newest first"
    );
    let step_deployment = |k: usize| {
        done["steps"][k][0]["deployment"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let first = wait_status(&api, &step_deployment(0), "ROLLED_FORWARD", LONG).await?;
    let second = wait_status(&api, &step_deployment(1), "ROLLED_FORWARD", LONG).await?;
    // Leader-stamped: the second step was created only after the first finished...
    let first_done = status_at(&first, "ROLLED_FORWARD").unwrap();
    let second_created = second["events"][0]["at"].as_u64().unwrap();
    assert!(second_created >= first_done, "{first} {second}");
    // ...and the agents saw it: no config v2 install began before every app v2 install ended.
    let (_, app_end) = extent(&web_fleet, 2);
    let (config_start, _) = extent(&api_fleet, 2);
    assert!(
        config_start >= app_end,
        "config began before app was everywhere"
    );
    wait_running(&api, &web, "app", 2, LONG).await?;
    wait_running(&api, &apis, "config", 2, LONG).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weak_and_strong_consumers_side_by_side() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "lib").await?;
    let (weak, _weak_fleet) = fleet(&cluster, &api, "loose", "lib", 3).await?;
    let (strong, strong_fleet) = fleet(&cluster, &api, "tight", "lib", 3).await?;
    put_ok(
        &api,
        "/v1/consumers/loose/subscriptions/lib",
        json!({"mode": "weak"}),
    )
    .await?;
    put_ok(
        &api,
        "/v1/consumers/tight/subscriptions/lib",
        json!({"mode": "strong", "strategy": {"rolling": {"install_window": 1, "download_window": 1}}}),
    )
    .await?;

    // Version 2: the weak consumer takes it at once, the strong one through a deployment.
    publish(&api, "lib", json!({"label": "v2"})).await?;
    let d2 = eventually(LONG, || {
        let api = api.clone();
        async move {
            let list = deployments_of(&api, "tight").await.ok()?;
            list.first()
                .and_then(|d| d["id"].as_str().map(String::from))
        }
    })
    .await?;
    // Version 3 while v2 is rolling onto the strong consumer: it waits for that deployment.
    publish(&api, "lib", json!({"label": "v3"})).await?;
    wait_running(&api, &weak, "lib", 3, LONG).await?;
    let first = wait_status(&api, &d2, "ROLLED_FORWARD", LONG).await?;
    assert_eq!(first["version"], 2, "{first}");

    // Then a deployment of v3 follows on its own.
    wait_running(&api, &strong, "lib", 3, LONG).await?;
    let all = deployments_of(&api, "tight").await?;
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[1]["version"], 3, "{all:?}");
    assert!(deployments_of(&api, "loose").await?.is_empty());
    // No strong node touched v3 before every v2 install had ended.
    let (_, v2_end) = extent(&strong_fleet, 2);
    let (v3_start, _) = extent(&strong_fleet, 3);
    assert!(
        v3_start >= v2_end,
        "a strong node was sent v3 during the v2 deployment"
    );
    Ok(())
}
