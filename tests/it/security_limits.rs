//! What an attacker without credentials could once make the cluster pay for, through the real binary:
//! a 4 MB name and a node-range bomb are refused before the log (the applied index does not move) and
//! not echoed back; 100,000 reports from node ids in no consumer leave the state as it was; 2,000 slow
//! connections leave `/healthz` and writes answering.

use std::time::{Duration, Instant};

use convoy_tests::scenario::{consumer, post_ok};
use convoy_tests::{Cluster, RawClient};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

/// The applied index and the state's digest on one server.
async fn applied(api: &RawClient) -> anyhow::Result<(u64, String)> {
    let (status, body) = api.get("/v1/cluster/digest").await?;
    anyhow::ensure!(status == 200, "digest: {status} {body}");
    Ok((
        body["last_applied"].as_u64().unwrap_or_default(),
        body["sha256"].as_str().unwrap_or_default().to_string(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_and_costly_requests_are_refused_before_the_log() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(leader).client();
    let follower = cluster.client_except(leader);
    post_ok(&api, "/v1/resources", json!({"name": "app"})).await?;
    consumer(&api, "web", 100).await?;
    let before = applied(&api).await?;

    // A 4 MB name, through a follower (which must not forward it) and through the leader.
    let huge = "a".repeat(4 * 1024 * 1024 - 64);
    for target in [&follower, &api] {
        let started = Instant::now();
        let (status, body) = target.post("/v1/resources", &json!({"name": huge})).await?;
        assert_eq!(status, 400, "{}", truncate(&body));
        assert_eq!(body["error"]["code"], "bad_request");
        let text = body.to_string();
        assert!(text.len() < 1_000, "the error echoes {} bytes", text.len());
        assert!(text.contains("bytes)"), "the error says the length: {text}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    // A range bomb: 14,000 copies of the whole node set of a 100-node consumer.
    let bomb = vec!["0-99"; 14_000].join(",");
    let started = Instant::now();
    let (status, body) = api
        .post(
            "/v1/deployments",
            &json!({"consumer": "web", "resource": "app", "nodes": bomb}),
        )
        .await?;
    assert_eq!(status, 400, "{}", truncate(&body));
    assert!(body.to_string().len() < 1_000);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    // 100,000 reports from node ids in no consumer, in batches of 10,000.
    for batch in 0..10 {
        let reports: Vec<Value> = (0..10_000)
            .map(|i| json!({"node": format!("ghost-{batch}-{i}"), "resources": {}}))
            .collect();
        let (status, body) = follower
            .post("/v1/nodes/reports", &json!({"reports": reports}))
            .await?;
        assert_eq!(status, 200, "{}", truncate(&body));
    }
    let (status, ghost) = api.get("/v1/nodes/ghost-3-17").await?;
    assert_eq!(
        status, 404,
        "a node in no consumer is not recorded: {ghost}"
    );

    // Nothing above reached the log: the applied index and the state are as they were.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(applied(&api).await?, before);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_connections_leave_health_and_writes_answering() -> anyhow::Result<()> {
    // The servers start with a soft file limit of 1,024 (a common default), below the 2,000
    // connections: each must raise its own limit and cap its connections below it.
    set_soft_open_files(1_024);
    let cluster = Cluster::start(3).await?;
    set_soft_open_files(8_192);
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let addr = cluster.server(leader).http_addr.clone();
    let api = cluster.server(leader).client();

    // 2,000 connections: half send a request head byte by byte and stop, half promise a body
    // they never send.
    let mut held = Vec::new();
    for i in 0..2_000 {
        let mut stream = tokio::net::TcpStream::connect(&addr).await?;
        let bytes: &[u8] = if i % 2 == 0 {
            b"GET /v1/resources HTTP/1.1\r\nHost: x\r\n"
        } else {
            b"POST /v1/resources HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{\"na"
        };
        stream.write_all(bytes).await?;
        held.push(stream);
    }
    let started = Instant::now();
    let (status, _) = api.get("/healthz").await?;
    assert_eq!(status, 200);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "/healthz took {:?}",
        started.elapsed()
    );
    for i in 0..5 {
        let started = Instant::now();
        post_ok(&api, "/v1/resources", json!({"name": format!("r{i}")})).await?;
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "a write took {:?}",
            started.elapsed()
        );
    }
    drop(held);
    Ok(())
}

fn truncate(v: &Value) -> String {
    v.to_string().chars().take(300).collect()
}

/// Sets this process's soft file limit (at most the hard one); children started after inherit it.
fn set_soft_open_files(want: u64) {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, want.min(hard), hard);
    }
}
