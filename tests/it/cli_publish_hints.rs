//! The CLI says what happens and what went wrong, through the real binary (issue 29, items 6 and 7):
//! `resource publish` names the weak subscriptions that take the version at once and their nodes (and
//! `--dry-run` shows it, publishing nothing); `deploy start --timeout` points at `--watch-timeout` and
//! `--timeout-ms`; `--watch-timeout` gives up watching; `deploy start --dry-run` plans; a server that does
//! not answer is named with the timeout; a server up without a leader says so.

use std::net::SocketAddr;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use convoy_tests::scenario::{consumer, get_ok, publish, put_ok, report_running, resource_with_v1};
use convoy_tests::{convoy_bin, Cluster};
use serde_json::{json, Value};

/// Runs `convoy ARGS` against `server` (nothing from this environment's CONVOY_* or config leaks in).
fn convoy(server: &str, args: &[&str]) -> Output {
    let home = std::env::temp_dir().join("convoy-cli-hints-no-config");
    Command::new(convoy_bin())
        .args(args)
        .args(["--server", server])
        .env("XDG_CONFIG_HOME", &home)
        .env_remove("CONVOY_SERVER")
        .env_remove("CONVOY_TOKEN")
        .env_remove("CONVOY_TOKEN_FILE")
        .env_remove("CONVOY_CONTEXT")
        .output()
        .expect("run convoy")
}

fn out_err(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(server: &str, args: &[&str]) -> String {
    let out = convoy(server, args);
    let (stdout, stderr) = out_err(&out);
    assert!(
        out.status.success(),
        "convoy {args:?} failed: {stdout}{stderr}"
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_says_who_takes_the_version_at_once() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(20)).await?;
    let server = cluster.http_addrs().join(",");
    let s = server.as_str();
    let api = cluster.client_except(0);
    resource_with_v1(&api, "tool").await?;
    consumer(&api, "edge", 6).await?;
    consumer(&api, "web", 3).await?;
    consumer(&api, "pinned", 2).await?;
    put_ok(
        &api,
        "/v1/consumers/edge/subscriptions/tool",
        json!({"mode": "weak"}),
    )
    .await?;
    put_ok(
        &api,
        "/v1/consumers/web/subscriptions/tool",
        json!({"mode": "strong"}),
    )
    .await?;
    put_ok(
        &api,
        "/v1/consumers/pinned/subscriptions/tool",
        json!({"mode": "weak", "pin": 1}),
    )
    .await?;

    // A dry run names the weak takers and their nodes, and publishes nothing.
    let dry = ok(s, &["resource", "publish", "tool", "--dry-run"]);
    assert!(dry.contains("version 2 would be published"), "{dry}");
    assert!(
        dry.contains("edge (6 nodes)") && dry.contains("6 nodes in all"),
        "{dry}"
    );
    assert!(
        dry.contains("web (3 nodes)"),
        "strong, by deployment: {dry}"
    );
    assert!(
        !dry.contains("pinned"),
        "a pinned consumer takes nothing: {dry}"
    );
    let versions = get_ok(&api, "/v1/resources/tool").await?["versions"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(versions, 1, "a dry run publishes nothing");

    // The publish itself says the same, and JSON carries it.
    let published = ok(s, &["resource", "publish", "tool", "--label", "v2"]);
    assert!(
        published.contains("published tool version 2"),
        "{published}"
    );
    assert!(
        published.contains("weak subscriptions take it at once")
            && published.contains("edge (6 nodes)"),
        "{published}"
    );
    let v: Value = serde_json::from_str(&ok(s, &["resource", "publish", "tool", "-o", "json"]))?;
    assert_eq!(v["version"], 3);
    assert_eq!(
        v["reach"]["at_once"],
        json!([{"consumer": "edge", "nodes": 6}]),
        "{v}"
    );
    assert_eq!(v["reach"]["nodes_at_once"], 6, "{v}");
    assert_eq!(v["reach"]["by_deployment"][0]["consumer"], "web", "{v}");

    // Refusals of a dry run are the publish's own.
    let out = convoy(s, &["resource", "publish", "nope", "--dry-run"]);
    let (_, stderr) = out_err(&out);
    assert!(
        out.status.code() == Some(1) && stderr.contains("nope"),
        "{stderr}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_start_hints_timeouts_and_dry_run() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(20)).await?;
    let server = cluster.http_addrs().join(",");
    let s = server.as_str();
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    let nodes = consumer(&api, "web", 2).await?;
    // The nodes run version 1 and are active (they never report again: a deployment of 2 stays open).
    report_running(&api, &nodes, "app", 1).await?;

    // --timeout is not a flag of deploy start: both flags it may mean, with the value.
    let out = convoy(
        s,
        &[
            "deploy",
            "start",
            "web",
            "app",
            "--version",
            "2",
            "--watch",
            "--timeout",
            "120s",
        ],
    );
    let (_, stderr) = out_err(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--watch-timeout 120s") && stderr.contains("--timeout-ms 120s"),
        "{stderr}"
    );

    // --dry-run plans and starts nothing.
    let plan = ok(
        s,
        &[
            "deploy",
            "start",
            "web",
            "app",
            "--version",
            "2",
            "--dry-run",
        ],
    );
    assert!(plan.contains("web-0") && plan.contains("web-1"), "{plan}");
    let list = get_ok(&api, "/v1/deployments").await?;
    assert_eq!(list, json!([]), "a dry run starts nothing");

    // --watch-timeout gives up watching (the nodes never report); the deployment goes on.
    let started = Instant::now();
    let out = convoy(
        s,
        &[
            "deploy",
            "start",
            "web",
            "app",
            "--version",
            "2",
            "--watch-timeout",
            "2s",
        ],
    );
    let (stdout, stderr) = out_err(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("started deployment d-1")
            && stderr.contains("had not ended after")
            && stderr.contains("--watch-timeout"),
        "{stdout}{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    let d = get_ok(&api, "/v1/deployments/d-1").await?;
    assert!(
        !["ROLLED_FORWARD", "ROLLED_BACK", "ABORTED", "FAILED"]
            .contains(&d["status"].as_str().unwrap_or_default()),
        "{d}"
    );
    Ok(())
}

/// A loopback address that accepts no connection: a listener whose backlog is full, so the kernel
/// drops further SYNs (the sockets filling it are returned to be kept open).
fn blackhole() -> anyhow::Result<(SocketAddr, socket2::Socket, Vec<socket2::Socket>)> {
    use socket2::{Domain, Socket, Type};
    let listener = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    listener.bind(&"127.0.0.1:0".parse::<SocketAddr>()?.into())?;
    listener.listen(0)?;
    let addr = listener
        .local_addr()?
        .as_socket()
        .context("an IP address")?;
    let mut fillers = Vec::new();
    for _ in 0..4 {
        let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
        s.set_nonblocking(true)?;
        let _ = s.connect(&addr.into());
        fillers.push(s);
    }
    std::thread::sleep(Duration::from_millis(200));
    Ok((addr, listener, fillers))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unanswered_servers_are_named_with_the_timeout() -> anyhow::Result<()> {
    // A server that never completes the connection: named, with the connect timeout.
    let (addr, _listener, _fillers) = blackhole()?;
    let server = addr.to_string();
    let started = Instant::now();
    let out = convoy(&server, &["deploy", "list"]);
    let (_, stderr) = out_err(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.contains(&server) && first.contains("2s"),
        "the server and the timeout: {stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    // A server that takes the connection and never answers (a listener that never accepts: the
    // kernel completes the handshake): named, with the request timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0")?;
    let server = silent.local_addr()?.to_string();
    let out = convoy(&server, &["deploy", "list"]);
    let (_, stderr) = out_err(&out);
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        out.status.code() == Some(1) && first.contains(&server) && first.contains("15s"),
        "the server and the timeout: {stderr}"
    );
    drop(silent);

    // Something else answering (an egress proxy's 404 with no body, what `--server 10.255.255.1:8081`
    // met in a sandbox): who answered what, never an empty `error:`.
    let proxy = std::net::TcpListener::bind("127.0.0.1:0")?;
    let server = proxy.local_addr()?.to_string();
    let answering = std::thread::spawn(move || -> std::io::Result<()> {
        use std::io::{Read, Write};
        let (mut conn, _) = proxy.accept()?;
        let mut request = [0u8; 4096];
        let _ = conn.read(&mut request)?;
        conn.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
    });
    let out = convoy(&server, &["deploy", "list"]);
    let (_, stderr) = out_err(&out);
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        out.status.code() == Some(1)
            && first.contains(&server)
            && first.contains("404")
            && first.contains("empty body"),
        "who answered what: {stderr}"
    );
    answering.join().expect("the fake proxy")?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_up_without_a_leader_says_so() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(20)).await?;
    let follower = cluster
        .running()
        .into_iter()
        .find(|id| *id != leader)
        .context("a follower")?;
    cluster.server_mut(leader).kill();
    cluster.server_mut(follower).kill();
    let alone = cluster
        .running()
        .into_iter()
        .next()
        .context("one server left")?;
    let server = cluster.server(alone).http_addr.clone();
    let out = convoy(&server, &["resource", "create", "x"]);
    let (_, stderr) = out_err(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("reachable, but the cluster has no leader"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("no convoy server reachable") && !stderr.contains("start a server"),
        "{stderr}"
    );
    Ok(())
}
