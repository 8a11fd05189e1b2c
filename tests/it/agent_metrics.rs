//! Issue 29, item 4, through the real binary: an agent started with `--metrics-listen` serves
//! `GET /metrics` (Prometheus text format) with its installs, failures by reason, health-check
//! latency, report round trip and the age of its last successful report; with `--log-format json`
//! each line it logs is one JSON object, as the server's are.

use std::io::Write;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{consumer, post_ok, publish, wait_status};
use convoy_tests::{free_port, Agent, Cluster, RawClient};
use serde_json::{json, Value};

/// The value of the series written exactly `series` (name and labels as the exposition prints them).
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .filter_map(|l| l.rsplit_once(' '))
        .find(|(s, _)| *s == series)
        .and_then(|(_, v)| v.parse().ok())
}

async fn scrape(addr: &str) -> anyhow::Result<String> {
    let response = reqwest::Client::new()
        .get(format!("http://{addr}/metrics"))
        .send()
        .await?;
    ensure!(
        response.status() == 200,
        "GET /metrics: {}",
        response.status()
    );
    let text = response.text().await?;
    // Valid exposition format.
    prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))?;
    Ok(text)
}

async fn deploy(api: &RawClient, version: u64, status: &str, agent: &Agent) -> anyhow::Result<()> {
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "edge", "resource": "web", "version": version,
               "rollback_on_failure": false}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?;
    wait_status(api, id, status, Duration::from_secs(30))
        .await
        .with_context(|| format!("agent:\n{}", agent.output()))?;
    Ok(())
}

async fn scenario(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    let health = convoy_tests::stub::serve(|_, mut stream| {
        let reply = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
        let _ = stream.write_all(reply.as_bytes());
    })?;
    post_ok(api, "/v1/resources", json!({"name": "web"})).await?;
    consumer(api, "edge", 1).await?;
    let dir = tempfile::tempdir()?;
    let addr = format!("127.0.0.1:{}", free_port()?);
    let agent = Agent::start(
        cluster,
        "edge-0",
        dir.path(),
        &[
            "--log-format",
            "json",
            "--metrics-listen",
            &addr,
            "--interval-ms",
            "200",
            "--health-interval-ms",
            "100",
            "--health-grace-ms",
            "0",
        ],
    )?;
    agent.wait_active(api).await?;
    let v1 = publish(api, "web", json!({"health_port": health})).await?;
    deploy(api, v1, "ROLLED_FORWARD", &agent).await?;
    // Version 2's artifact is a `file://` URL the agent refuses (no --artifact-root): a download failure.
    let v2 = publish(
        api,
        "web",
        json!({"artifact": {"url": "file:///nonexistent/web-2.tar", "sha256": "0".repeat(64)}}),
    )
    .await?;
    deploy(api, v2, "FAILED", &agent).await?;

    let text = scrape(&addr)
        .await
        .with_context(|| format!("agent:\n{}", agent.output()))?;
    let get =
        |series: &str| value(&text, series).with_context(|| format!("no {series} in:\n{text}"));
    ensure!(
        get("convoy_agent_installs_total{result=\"ok\"}")? == 1.0,
        "{text}"
    );
    ensure!(
        get("convoy_agent_failures_total{reason=\"download\"}")? == 1.0,
        "{text}"
    );
    ensure!(
        get("convoy_agent_health_check_seconds_count")? >= 1.0,
        "{text}"
    );
    ensure!(get("convoy_agent_report_seconds_count")? >= 1.0, "{text}");
    ensure!(
        get("convoy_agent_reports_total{result=\"ok\"}")? >= 1.0,
        "{text}"
    );
    let age = get("convoy_agent_last_report_age_seconds")?;
    ensure!((0.0..30.0).contains(&age), "last report {age} s ago");
    let (status, _) = {
        let r = reqwest::get(format!("http://{addr}/other")).await?;
        (r.status().as_u16(), ())
    };
    ensure!(status == 404, "GET /other: {status}");

    // JSON logs: every line one object, the event's fields at the top level.
    let output = agent.output();
    let lines: Vec<Value> = output
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("not JSON: {l}")))
        .collect::<anyhow::Result<_>>()?;
    ensure!(
        lines
            .iter()
            .any(|l| l["message"] == "agent started" && l["level"] == "INFO"),
        "{output}"
    );
    drop(agent);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_serves_metrics_and_logs_json() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(1).client();
    cluster.logs_on_error(scenario(&cluster, &api).await)
}
