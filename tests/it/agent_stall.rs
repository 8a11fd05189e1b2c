//! Issue 12, failure 1 (the download half), through the real binary and a real `convoy agent`: an
//! HTTP artifact server that sends 10 bytes and then stalls no longer hangs the agent. Each attempt
//! fails after the stall timeout, the agent retries, then reports the version failed; the node
//! reports (and stays active) all along, and the deployment ends instead of hanging in `installing`.

use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use convoy_tests::scenario::{consumer, post_ok, put_ok};
use convoy_tests::{eventually, Agent, Cluster, ClusterOptions, RawClient};
use serde_json::{json, Value};

/// Answers every request with a 1000-byte body of which it sends 10 bytes, then holds the
/// connection open without sending more (until the test ends).
struct StallingServer {
    port: u16,
    connections: Arc<AtomicUsize>,
    _held: Arc<Mutex<Vec<TcpStream>>>,
}

impl StallingServer {
    fn start() -> anyhow::Result<Self> {
        let connections = Arc::new(AtomicUsize::new(0));
        let held = Arc::new(Mutex::new(Vec::new()));
        let (count, keep) = (connections.clone(), held.clone());
        let port = convoy_tests::stub::serve(move |_, mut stream: TcpStream| {
            count.fetch_add(1, Ordering::SeqCst);
            let head = "HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n0123456789";
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.flush();
            keep.lock().unwrap().push(stream);
        })?;
        Ok(Self {
            port,
            connections,
            _held: held,
        })
    }
}

async fn scenario(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    let server = StallingServer::start()?;
    post_ok(api, "/v1/resources", json!({"name": "web"})).await?;
    consumer(api, "edge", 1).await?;
    put_ok(
        api,
        "/v1/consumers/edge/subscriptions/web",
        json!({"mode": "strong"}),
    )
    .await?;
    let dir = tempfile::tempdir()?;
    let agent = Agent::start(
        cluster,
        "edge-0",
        dir.path(),
        &[
            "--interval-ms",
            "200",
            "--allow-http",
            "--download-stall-ms",
            "1000",
            "--download-attempts",
            "2",
        ],
    )?;
    agent.wait_active(api).await?;

    let url = format!("http://127.0.0.1:{}/web-1.tar", server.port);
    let body = json!({"artifact": {"url": url, "sha256": "ab".repeat(32)}});
    let v = post_ok(api, "/v1/resources/web/versions", body).await?["version"]
        .as_u64()
        .context("version")?;
    let id = eventually(Duration::from_secs(10), || async {
        let (_, list) = api
            .get("/v1/deployments?consumer=edge&resource=web")
            .await
            .ok()?;
        list.as_array()?
            .iter()
            .find(|d| d["version"].as_u64() == Some(v))
            .and_then(|d| d["id"].as_str().map(String::from))
    })
    .await
    .context("no automatic deployment")?;

    // Until the deployment ends, the node stays active (its reports go on beside the stalled download).
    let deadline = Instant::now() + Duration::from_secs(30);
    let view: Value = loop {
        let (_, node) = api.get("/v1/nodes/edge-0").await?;
        ensure!(
            node["active"] == true,
            "marked inactive during a stalled download: {node}\n{}",
            agent.output()
        );
        let (_, d) = api.get(&format!("/v1/deployments/{id}")).await?;
        if !d["status"].as_str().unwrap_or("").starts_with("ROLLING_") {
            break d;
        }
        ensure!(
            Instant::now() < deadline,
            "deployment hangs: {d}\n{}",
            agent.output()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    ensure!(
        view["status"] == "ROLLED_BACK" || view["status"] == "FAILED",
        "{view}"
    );
    // The node failed with the stall named (then the rollback removed what it never had).
    let failure = view["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["message"].as_str())
        .find(|m| m.contains("stalled"));
    ensure!(failure.is_some(), "no stall in the events: {view}");
    ensure!(
        server.connections.load(Ordering::SeqCst) >= 2,
        "the stalled download was not retried: {} connections",
        server.connections.load(Ordering::SeqCst)
    );
    drop(agent);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalling_artifact_server_fails_the_version_and_never_hangs_the_agent(
) -> anyhow::Result<()> {
    let options = ClusterOptions {
        node_timeout_ms: Some(2_000),
        ..ClusterOptions::for_tests(3)
    };
    let cluster = Cluster::start_with(options).await?;
    let api = cluster.client_except(0);
    cluster.logs_on_error(scenario(&cluster, &api).await)
}
