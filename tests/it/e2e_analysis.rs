//! Analysis that never passes what it did not measure (issue 36 item 5), through the binary against a fake
//! Prometheus whose queries naming `broken` are answered HTTP 503 (with a body saying "success") and every
//! other with one series of value 0.002: a background analysis whose every query errors never ends
//! ROLLED_FORWARD when every node is done (it waits, saying so, then pauses at its error limit); a dry-run
//! metric whose queries all error holds nothing; an unknown provider is a 400 at creation naming it.

use std::time::Duration;

use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, put_ok, resource_with_v1, wait_deployment, wait_running,
};
use convoy_tests::{Cluster, ClusterOptions, FleetConfig, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(60);

/// The fake Prometheus: answers its address.
fn fake_prometheus() -> anyhow::Result<String> {
    use std::io::Write;
    let port = convoy_tests::stub::serve(|request, mut stream| {
        let (status, body) = if request.contains("broken") {
            (
                "503 Service Unavailable",
                r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1800000000,"0.002"]}]}}"#,
            )
        } else {
            (
                "200 OK",
                r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1800000000,"0.002"]}]}}"#,
            )
        };
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body.as_bytes());
    })?;
    Ok(format!("127.0.0.1:{port}"))
}

/// A one-server cluster whose only provider, `prom`, is the fake Prometheus.
async fn cluster() -> anyhow::Result<(Cluster, RawClient)> {
    let prometheus = fake_prometheus()?;
    let cluster = Cluster::start_with(ClusterOptions {
        extra: format!(
            "analysis_provider = [{{ name = \"prom\", prometheus = \"http://{prometheus}\", timeout = \"2s\" }}]\n"
        ),
        ..ClusterOptions::for_tests(1)
    })
    .await?;
    let leader = cluster.wait_leader(Duration::from_secs(20)).await?;
    let api = cluster.server(leader).client();
    Ok((cluster, api))
}

/// A consumer `name` of `n` nodes on `{name}app` v1 (strong, pinned), its fleet running, v2 published.
async fn fleet(
    cluster: &Cluster,
    api: &RawClient,
    name: &str,
    n: usize,
) -> anyhow::Result<(Vec<String>, convoy_tests::Fleet)> {
    let resource = format!("{name}app");
    resource_with_v1(api, &resource).await?;
    publish(api, &resource, json!({"label": "v2"})).await?;
    let nodes = consumer(api, name, n).await?;
    let mut config = FleetConfig::new(&resource);
    // Several report rounds per download and install.
    config.download = Duration::from_millis(300);
    config.install = Duration::from_millis(600);
    let fleet = config.start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(api, &nodes, &resource, 1, LONG).await?;
    put_ok(
        api,
        &format!("/v1/consumers/{name}/subscriptions/{resource}"),
        json!({"mode": "strong", "pin": 1}),
    )
    .await?;
    Ok((nodes, fleet))
}

fn metric(name: &str, query: &str, extra: Value) -> Value {
    let mut m =
        json!({"name": name, "query": query, "success": "result < 0.05", "interval_ms": 1000});
    if let (Some(m), Some(e)) = (m.as_object_mut(), extra.as_object()) {
        m.extend(e.clone());
    }
    m
}

fn messages(view: &Value) -> Vec<String> {
    view["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["message"].as_str().map(String::from))
        .collect()
}

/// Polls deployment `id`'s summary until `done` holds for it; fails with its last summary after a minute.
async fn wait_summary(
    api: &RawClient,
    id: &str,
    done: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    let deadline = std::time::Instant::now() + LONG;
    loop {
        let s = get_ok(api, &format!("/v1/deployments/{id}/summary")).await?;
        if done(&s) {
            return Ok(s);
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "deployment {id} not as expected: {s}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Starts v2 on `name`'s nodes all at once with `analysis`; answers its id.
async fn deploy(api: &RawClient, name: &str, analysis: Value) -> anyhow::Result<String> {
    let v = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": name, "resource": format!("{name}app"), "version": 2,
               "strategy": {"all_at_once": {}}, "analysis": analysis}),
    )
    .await?;
    Ok(v["id"].as_str().unwrap_or_default().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_analysis_that_measured_nothing_never_rolls_forward() -> anyhow::Result<()> {
    let (cluster, api) = cluster().await?;
    let (_nodes, _fleet) = fleet(&cluster, &api, "bg", 2).await?;
    let analysis = json!({"provider": "prom", "mode": "background",
        "metrics": [metric("errors", "broken_error_ratio", json!({"consecutive_error_limit": 6}))]});
    let id = deploy(&api, "bg", analysis).await?;
    // Every node installs v2 within a few seconds; the analysis has no successful measurement.
    let view = wait_summary(&api, &id, |v| {
        v["counts"]["succeeded"] == 2 || v["status"] != "ROLLING_FORWARD"
    })
    .await?;
    assert_eq!(view["status"], "ROLLING_FORWARD", "{view}");
    let view = wait_summary(&api, &id, |v| v["waiting_for"] == "analysis").await?;
    assert!(
        messages(&view).iter().any(|m| m
            == "every node is done; analysis has no successful measurement: waiting for one before it ends"),
        "{view}"
    );
    // Past its 6 tolerated errors it pauses as inconclusive: never ROLLED_FORWARD.
    let view = wait_deployment(&api, &id, LONG, |v| v["status"] != "ROLLING_FORWARD").await?;
    assert_eq!(view["status"], "ROLL_FORWARD_PAUSED", "{view}");
    assert_eq!(view["paused_by"], "analysis", "{view}");
    assert!(
        messages(&view)
            .iter()
            .any(|m| m.contains("7 consecutive errors, 6 tolerated (last: HTTP 503")),
        "{view}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_provider_is_refused_at_creation_naming_it() -> anyhow::Result<()> {
    let (cluster, api) = cluster().await?;
    let (_nodes, _fleet) = fleet(&cluster, &api, "up", 1).await?;
    let analysis = json!({"provider": "promm", "metrics": [metric("errors", "up", json!({}))]});
    let refused = |what: &str, (status, body): (u16, Value)| {
        assert_eq!(status, 400, "{what}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message
                .starts_with("analysis.provider = \"promm\" is invalid: no [[analysis_provider]]")
                && message.ends_with("(it has: prom)"),
            "{what}: {body}"
        );
    };
    let start = json!({"consumer": "up", "resource": "upapp", "version": 2, "analysis": analysis});
    refused("a start", api.post("/v1/deployments", &start).await?);
    refused(
        "a dry run",
        api.post("/v1/deployments?dry_run=true", &start).await?,
    );
    let sub = "/v1/consumers/up/subscriptions/upapp";
    refused(
        "a subscription",
        api.put(sub, &json!({"mode": "strong", "analysis": analysis}))
            .await?,
    );
    refused(
        "a patch",
        api.patch(sub, &json!({"analysis": analysis})).await?,
    );
    let list = get_ok(&api, "/v1/deployments").await?;
    assert_eq!(
        list.as_array().map(Vec::len),
        Some(0),
        "nothing started: {list}"
    );
    Ok(())
}
