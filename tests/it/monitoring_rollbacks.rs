//! `convoy_rollbacks_total{consumer, resource}` on a real three-server cluster: a deployment rolled back by
//! hand is counted under its consumer and resource on every server (the count comes from the replicated
//! state), and an aborted one is not.

use std::time::Duration;

use convoy_tests::scenario::{
    consumer, post_ok, publish, report_running, resource_with_v1, wait_deployment,
};
use convoy_tests::{eventually, Cluster};
use serde_json::json;

/// The value of `convoy_rollbacks_total{consumer, resource}` in `addr`'s exposition, if it has that series.
async fn rollbacks(addr: &str, consumer: &str, resource: &str) -> anyhow::Result<Option<f64>> {
    let text = reqwest::Client::new()
        .get(format!("http://{addr}/metrics"))
        .send()
        .await?
        .text()
        .await?;
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))?;
    Ok(scrape
        .samples
        .iter()
        .find(|s| {
            s.metric == "convoy_rollbacks_total"
                && s.labels.get("consumer") == Some(consumer)
                && s.labels.get("resource") == Some(resource)
        })
        .map(|s| match s.value {
            prometheus_parse::Value::Counter(n)
            | prometheus_parse::Value::Gauge(n)
            | prometheus_parse::Value::Untyped(n) => n,
            _ => f64::NAN,
        }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_is_counted_by_consumer_and_resource_on_every_server() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    cluster.wait_leader(Duration::from_secs(20)).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    let mut nodes = consumer(&api, "web", 3).await?;
    nodes.extend(consumer(&api, "db", 2).await?);
    report_running(&api, &nodes, "app", 1).await?;
    let web = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 2}),
    )
    .await?;
    let web = web["id"].as_str().unwrap().to_string();
    post_ok(&api, &format!("/v1/deployments/{web}/rollback"), json!({})).await?;
    let db = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "db", "resource": "app", "version": 2}),
    )
    .await?;
    let db = db["id"].as_str().unwrap().to_string();
    post_ok(&api, &format!("/v1/deployments/{db}/abort"), json!({})).await?;
    wait_deployment(&api, &db, Duration::from_secs(10), |v| {
        v["status"] == "ABORTED"
    })
    .await?;

    for id in cluster.running() {
        let addr = cluster.server(id).http_addr.clone();
        let counted = eventually(Duration::from_secs(20), || {
            let addr = addr.clone();
            async move {
                let n = rollbacks(&addr, "web", "app").await.ok()??;
                (n >= 1.0).then_some(n)
            }
        })
        .await;
        let counted = match counted {
            Ok(n) => n,
            Err(_) => anyhow::bail!(
                "server {id} never counted the rollback of {web}: convoy_rollbacks_total{{consumer=\"web\",resource=\"app\"}} is {:?}",
                rollbacks(&addr, "web", "app").await?
            ),
        };
        assert_eq!(counted, 1.0, "server {id}: one rollback of web/app");
        assert_eq!(
            rollbacks(&addr, "db", "app").await?,
            None,
            "server {id}: an aborted deployment is no rollback"
        );
    }
    Ok(())
}
