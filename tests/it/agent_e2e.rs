//! A real `convoy agent` process against three real servers: it downloads a `file://` artifact,
//! checks its sha256, switches `current`, reports a bad checksum as a clean failure (leaving
//! `current` alone), rides through the leader being killed, and stops cleanly on SIGTERM; it keeps
//! reporting through an install longer than the node timeout; its health rules tolerate a flapping
//! health endpoint and fail a crash-looping run command after its restarts.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use convoy_tests::{convoy_bin, eventually, Cluster, ClusterOptions, RawClient};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

fn current(state: &Path) -> Option<String> {
    std::fs::read_link(state.join("resources/web/current"))
        .ok()
        .map(|p| p.display().to_string())
}

/// Stops the agent when dropped (also when a test fails first): SIGTERM, so it tears down the
/// processes it runs, and SIGKILL if it is still there after 10 s.
struct Agent(Option<Child>);

impl Drop for Agent {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = kill(Pid::from_raw(c.id() as i32), Signal::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

async fn publish(client: &RawClient, file: &Path, sha: &str) -> anyhow::Result<u64> {
    let body = json!({"artifact": {"url": format!("file://{}", file.display()), "sha256": sha}});
    let (status, answer) = client.post("/v1/resources/web/versions", &body).await?;
    anyhow::ensure!(status == 201 || status == 200, "publish: {status} {answer}");
    answer["version"]
        .as_u64()
        .ok_or_else(|| anyhow::anyhow!("no version in {answer}"))
}

async fn node_version(client: &RawClient, v: u64) -> Option<Value> {
    let (status, node) = client.get("/v1/nodes/n1").await.ok()?;
    (status == 200).then(|| node["resources"]["web"]["versions"][v.to_string()].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_downloads_checks_switches_fails_cleanly_and_survives_failover() -> anyhow::Result<()>
{
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.client_except(0);
    let work = tempfile::tempdir()?;
    let state = work.path().join("agent");
    let good = work.path().join("web-1.tar");
    std::fs::write(&good, "release one")?;
    let bad = work.path().join("web-2.tar");
    std::fs::write(&bad, "tampered")?;

    let (status, body) = api.post("/v1/resources", &json!({"name": "web"})).await?;
    assert_eq!(status, 201, "{body}");
    let (status, body) = api
        .post("/v1/consumers", &json!({"name": "edge", "nodes": ["n1"]}))
        .await?;
    assert_eq!(status, 201, "{body}");
    let (status, body) = api
        .put(
            "/v1/consumers/edge/subscriptions/web",
            &json!({"mode": "weak"}),
        )
        .await?;
    assert!(status < 300, "{status} {body}");
    let v1 = publish(&api, &good, &sha256(&good)).await?;

    let servers: Vec<String> = cluster
        .servers
        .values()
        .map(|s| s.http_addr.clone())
        .collect();
    let log = std::fs::File::create(work.path().join("agent.log"))?;
    let child = Command::new(convoy_bin())
        .args([
            "agent",
            "--node-id",
            "n1",
            "--interval-ms",
            "200",
            "--retry-ms",
            "600000",
        ])
        .arg("--server")
        .arg(servers.join(","))
        .arg("--state-dir")
        .arg(&state)
        .arg("--artifact-root")
        .arg(work.path())
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()?;
    let mut agent = Agent(Some(child));
    let agent_log = || std::fs::read_to_string(work.path().join("agent.log")).unwrap_or_default();

    // Version 1: downloaded, checked, installed by switching `current`, reported done.
    let s = state.clone();
    eventually(Duration::from_secs(20), || {
        let s = s.clone();
        async move { (current(&s).as_deref() == Some("1")).then_some(()) }
    })
    .await
    .map_err(|e| anyhow::anyhow!("{e}\nagent:\n{}", agent_log()))?;
    assert_eq!(
        std::fs::read_to_string(state.join("resources/web/current/artifact"))?,
        "release one"
    );
    eventually(Duration::from_secs(10), || {
        let api = api.clone();
        async move {
            node_version(&api, v1)
                .await
                .filter(|p| p["done"] == true && p["error"].is_null())
        }
    })
    .await
    .map_err(|e| anyhow::anyhow!("{e}\nagent:\n{}", agent_log()))?;

    // Version 2 with a wrong checksum: a finished failure, no file left, `current` untouched.
    let wrong = "0".repeat(64);
    let v2 = publish(&api, &bad, &wrong).await?;
    let failure = eventually(Duration::from_secs(20), || {
        let api = api.clone();
        async move { node_version(&api, v2).await.filter(|p| p["done"] == true) }
    })
    .await
    .map_err(|e| anyhow::anyhow!("{e}\nagent:\n{}", agent_log()))?;
    // The error names the published hash only, never the hash of the file the server cannot see.
    let expected =
        format!("sha256 mismatch: the artifact is not the one published with sha256 {wrong}");
    assert_eq!(failure["error"], expected.as_str(), "{failure}");
    assert!(!failure.to_string().contains(&sha256(&bad)));
    assert_eq!(current(&state).as_deref(), Some("1"));
    assert!(!state.join("resources/web/2/artifact").exists());
    assert!(!state.join("resources/web/2/artifact.tmp").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(state.join("resources/web/1/artifact"))?
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the copy is private: {mode:o}");

    // Artifacts are checked by the server: a misspelt key and a missing sha256 are refused.
    for body in [
        json!({"artifact": {"url": "file:///etc/hostname", "sha_256": wrong}}),
        json!({"artifact": {"url": "file:///etc/hostname"}}),
        json!({"artifact": {"url": "file:///etc/hostname", "sha256": "abc"}}),
    ] {
        let (status, answer) = api.post("/v1/resources/web/versions", &body).await?;
        assert_eq!(status, 400, "{body}: {answer}");
    }
    // An unchecked version outside --artifact-root is refused by the agent, a clean failure.
    let (status, answer) = api
        .post(
            "/v1/resources/web/versions",
            &json!({"artifact": {"url": "file:///etc/hostname"}, "unchecked": true}),
        )
        .await?;
    assert_eq!(status, 201, "{answer}");
    let outside = answer["version"].as_u64().expect("version");
    let failure = eventually(Duration::from_secs(20), || {
        let api = api.clone();
        async move {
            node_version(&api, outside)
                .await
                .filter(|p| p["done"] == true)
        }
    })
    .await
    .map_err(|e| anyhow::anyhow!("{e}\nagent:\n{}", agent_log()))?;
    assert_eq!(
        failure["error"], "artifact url file:///etc/hostname refused: outside --artifact-root",
        "{failure}"
    );
    assert_eq!(current(&state).as_deref(), Some("1"));

    // Kill the leader; a version published through the survivors still reaches the agent.
    cluster.server_mut(leader).kill();
    let survivors = cluster.client_except(leader);
    let new_leader = cluster
        .wait_leader_among(&cluster.running(), Duration::from_secs(15))
        .await?;
    assert_ne!(new_leader, leader);
    let three = work.path().join("web-3.tar");
    std::fs::write(&three, "release three")?;
    let v3 = publish(&survivors, &three, &sha256(&three)).await?;
    let s = state.clone();
    eventually(Duration::from_secs(30), || {
        let s = s.clone();
        async move { (current(&s) == Some(v3.to_string())).then_some(()) }
    })
    .await
    .map_err(|e| anyhow::anyhow!("{e}\nagent:\n{}\n{}", agent_log(), cluster.logs()))?;

    // SIGTERM stops it cleanly.
    // Every path below waits for it (or kills and reaps it before failing).
    #[allow(clippy::zombie_processes)]
    let mut child = agent.0.take().unwrap();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM)?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("agent did not stop on SIGTERM");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "agent exit {status}\n{}", agent_log());
    let saved: Value = serde_json::from_slice(&std::fs::read(state.join("state.json"))?)?;
    assert_eq!(saved["resources"]["web"]["current"], v3);
    Ok(())
}

/// Starts `convoy agent` as node `n1` against every server of `cluster`, logging to `log`.
fn start_agent(
    cluster: &Cluster,
    state: &Path,
    log: &Path,
    flags: &[&str],
) -> anyhow::Result<Agent> {
    let servers: Vec<String> = cluster
        .servers
        .values()
        .map(|s| s.http_addr.clone())
        .collect();
    let out = std::fs::File::create(log)?;
    let child = Command::new(convoy_bin())
        .args(["agent", "--node-id", "n1", "--retry-ms", "600000"])
        .args(flags)
        .arg("--server")
        .arg(servers.join(","))
        .arg("--state-dir")
        .arg(state)
        .arg("--artifact-root")
        .arg(state.parent().unwrap_or(state))
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()?;
    Ok(Agent(Some(child)))
}

/// Resource `web`, consumer `edge` = [n1], subscribed with `subscription`.
async fn edge_web(api: &RawClient, subscription: Value) -> anyhow::Result<()> {
    for (path, body) in [
        ("/v1/resources", json!({"name": "web"})),
        ("/v1/consumers", json!({"name": "edge", "nodes": ["n1"]})),
    ] {
        let (status, answer) = api.post(path, &body).await?;
        anyhow::ensure!(status == 201, "{path}: {status} {answer}");
    }
    let (status, answer) = api
        .put("/v1/consumers/edge/subscriptions/web", &subscription)
        .await?;
    anyhow::ensure!(status < 300, "subscribe: {status} {answer}");
    Ok(())
}

/// The id of the deployment of `web` version `v` on `edge`, once it exists.
async fn deployment_of(api: &RawClient, v: u64) -> anyhow::Result<String> {
    eventually(Duration::from_secs(10), || async move {
        let (status, list) = api
            .get("/v1/deployments?consumer=edge&resource=web")
            .await
            .ok()?;
        (status == 200).then_some(())?;
        list.as_array()?
            .iter()
            .find(|d| d["version"].as_u64() == Some(v))
            .and_then(|d| d["id"].as_str().map(String::from))
    })
    .await
}

/// Waits for deployment `id` to reach a terminal status; its view.
async fn ended(api: &RawClient, id: &str, timeout: Duration) -> anyhow::Result<Value> {
    const TERMINAL: [&str; 4] = ["ROLLED_FORWARD", "ROLLED_BACK", "ABORTED", "FAILED"];
    eventually(timeout, || async move {
        let (status, d) = api.get(&format!("/v1/deployments/{id}")).await.ok()?;
        (status == 200 && TERMINAL.contains(&d["status"].as_str()?)).then_some(d)
    })
    .await
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_install_longer_than_the_node_timeout_keeps_the_node_active_and_done(
) -> anyhow::Result<()> {
    let options = ClusterOptions {
        node_timeout_ms: Some(2_000),
        ..ClusterOptions::for_tests(3)
    };
    let cluster = Cluster::start_with(options).await?;
    let api = cluster.client_except(0);
    let work = tempfile::tempdir()?;
    let state = work.path().join("agent");
    let log = work.path().join("agent.log");
    edge_web(&api, json!({"mode": "strong"})).await?;
    let agent = start_agent(
        &cluster,
        &state,
        &log,
        &["--interval-ms", "200", "--install-command", "sleep 5"],
    )?;
    eventually(Duration::from_secs(10), || async {
        let (status, node) = api.get("/v1/nodes/n1").await.ok()?;
        (status == 200 && node["active"] == true).then_some(())
    })
    .await
    .map_err(|e| anyhow::anyhow!("{e}\nagent:\n{}", read(&log)))?;

    let artifact = work.path().join("web-1.tar");
    std::fs::write(&artifact, "release one")?;
    let published = Instant::now();
    let v1 = publish(&api, &artifact, &sha256(&artifact)).await?;
    let id = deployment_of(&api, v1).await?;

    // Through the whole install (5 s against a 2 s node timeout) the node stays active.
    let mut phases: Vec<String> = Vec::new();
    let mut inactive = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(40);
    let view = loop {
        let (status, node) = api.get("/v1/nodes/n1").await?;
        if status == 200 && node["active"] != true {
            inactive.push(node.clone());
        }
        let status_file: Value =
            serde_json::from_str(&read(&state.join("status.json"))).unwrap_or(Value::Null);
        if let Some(p) = status_file["phases"]["web"]["phase"].as_str() {
            if phases.last().map(String::as_str) != Some(p) {
                phases.push(p.to_string());
            }
        }
        let (_, d) = api.get(&format!("/v1/deployments/{id}")).await?;
        if d["status"] != "ROLLING_FORWARD" {
            break d;
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "deployment still rolling: {d}\nagent:\n{}",
            read(&log)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let took = published.elapsed();
    assert!(
        inactive.is_empty(),
        "marked inactive while reporting: {inactive:?}"
    );
    assert_eq!(
        view["status"],
        "ROLLED_FORWARD",
        "{view}\nagent:\n{}",
        read(&log)
    );
    assert_eq!(view["nodes"][0]["state"], "succeeded", "{view}");
    assert!(
        took >= Duration::from_secs(5),
        "the install ran its 5 s: {took:?}"
    );
    assert!(phases.iter().any(|p| p == "installing"), "{phases:?}");
    let (_, node) = api.get("/v1/nodes/n1").await?;
    assert_eq!(node["active"], true);
    assert_eq!(
        node["resources"]["web"]["versions"][v1.to_string()]["done"],
        true
    );
    drop(agent);
    Ok(())
}

/// A health endpoint whose `GET /health` answers fail, ok, fail, ok...; other requests get `ok`.
struct FlappingHealth {
    port: u16,
    checks: Arc<AtomicUsize>,
}

impl FlappingHealth {
    fn start() -> anyhow::Result<Self> {
        let checks = Arc::new(AtomicUsize::new(0));
        let count = checks.clone();
        let port = convoy_tests::stub::serve(move |first, mut stream| {
            let body = if first.starts_with("GET /health") {
                let n = count.fetch_add(1, Ordering::SeqCst);
                if n.is_multiple_of(2) {
                    "flap"
                } else {
                    "ok"
                }
            } else {
                "ok"
            };
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        })?;
        Ok(Self { port, checks })
    }
}

/// Publishes a version of `web` without an artifact, with `health_port` if given.
async fn publish_plain(api: &RawClient, health_port: Option<u16>) -> anyhow::Result<u64> {
    let body = match health_port {
        Some(port) => json!({"health_port": port}),
        None => json!({}),
    };
    let (status, answer) = api.post("/v1/resources/web/versions", &body).await?;
    anyhow::ensure!(status == 201 || status == 200, "publish: {status} {answer}");
    answer["version"]
        .as_u64()
        .ok_or_else(|| anyhow::anyhow!("no version in {answer}"))
}

/// Deploys `web` version `v` to `edge` with `settings`, then pins the subscription to it (so no
/// automatic deployment follows).
async fn deploy(api: &RawClient, v: u64, settings: Value) -> anyhow::Result<String> {
    let mut body = json!({"consumer": "edge", "resource": "web", "version": v});
    for (k, val) in settings.as_object().into_iter().flatten() {
        body[k] = val.clone();
    }
    let (status, answer) = api.post("/v1/deployments", &body).await?;
    anyhow::ensure!(status == 201, "deploy: {status} {answer}");
    let (status, pin) = api
        .put(
            "/v1/consumers/edge/subscriptions/web",
            &json!({"mode": "strong", "pin": v}),
        )
        .await?;
    anyhow::ensure!(status < 300, "pin: {status} {pin}");
    Ok(answer["id"].as_str().unwrap_or_default().to_string())
}

fn starts_of(state: &Path, v: u64) -> usize {
    read(&state.join("starts"))
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(&v.to_string()))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flapping_health_endpoint_is_tolerated_and_a_crash_loop_fails_the_node(
) -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    let work = tempfile::tempdir()?;
    let state: PathBuf = work.path().join("agent");
    let log = work.path().join("agent.log");
    edge_web(&api, json!({"mode": "strong"})).await?;
    let flapping = FlappingHealth::start()?;
    // Version 3 crashes at once; the others run until torn down.
    let run = r#"echo "$CONVOY_VERSION $$" >> "$CONVOY_STATE_DIR/starts"; if [ "$CONVOY_VERSION" = 3 ]; then exit 3; fi; exec sleep 1000"#;
    let agent = start_agent(
        &cluster,
        &state,
        &log,
        &[
            "--interval-ms",
            "200",
            "--run-command",
            run,
            "--health-interval-ms",
            "100",
            "--health-grace-ms",
            "0",
            "--max-consecutive-failures",
            "1",
            "--max-restarts",
            "2",
            "--restart-backoff-ms",
            "100",
            "--restart-backoff-max-ms",
            "400",
            "--graceful-ms",
            "200",
        ],
    )?;
    let fail = |e: anyhow::Error| anyhow::anyhow!("{e}\nagent:\n{}", read(&log));

    // Version 1 (no health port: healthy while its process stays up), deployed automatically.
    let v1 = publish_plain(&api, None).await?;
    let d1 = deployment_of(&api, v1).await?;
    let view = ended(&api, &d1, Duration::from_secs(30))
        .await
        .map_err(fail)?;
    assert_eq!(view["status"], "ROLLED_FORWARD", "{view}");
    // Pinned, so publishing does not start deployments: each is started below with its settings.
    let (status, pin) = api
        .put(
            "/v1/consumers/edge/subscriptions/web",
            &json!({"mode": "strong", "pin": v1}),
        )
        .await?;
    assert!(status < 300, "{status} {pin}");

    // Version 2 answers its health checks fail, ok, fail, ok...: with one failure tolerated the
    // node stays healthy through a 2 s watch, and its process is never restarted.
    let v2 = publish_plain(&api, Some(flapping.port)).await?;
    let d2 = deploy(
        &api,
        v2,
        json!({"min_healthy_ms": 2000, "rollback_on_failure": false}),
    )
    .await?;
    let view = ended(&api, &d2, Duration::from_secs(30))
        .await
        .map_err(fail)?;
    assert_eq!(
        view["status"],
        "ROLLED_FORWARD",
        "{view}\nagent:\n{}",
        read(&log)
    );
    assert_eq!(view["nodes"][0]["state"], "succeeded", "{view}");
    let checks = flapping.checks.load(Ordering::SeqCst);
    assert!(checks >= 10, "only {checks} checks during the watch");
    assert_eq!(starts_of(&state, v2), 1, "{}", read(&state.join("starts")));
    assert!(read(&log).contains("tolerated"), "{}", read(&log));

    // Version 3 exits at once: started, restarted twice with backoff, then reported failed.
    let v3 = publish_plain(&api, None).await?;
    let d3 = deploy(&api, v3, json!({"rollback_on_failure": false})).await?;
    let view = ended(&api, &d3, Duration::from_secs(30))
        .await
        .map_err(fail)?;
    assert_eq!(view["status"], "FAILED", "{view}\nagent:\n{}", read(&log));
    assert_eq!(view["nodes"][0]["state"], "failed", "{view}");
    let progress = node_version(&api, v3).await.unwrap_or(Value::Null);
    assert_eq!(
        progress["error"], "run command exited: exit status: 3 (gave up after 2 restarts)",
        "{progress}"
    );
    assert_eq!(starts_of(&state, v3), 3, "{}", read(&state.join("starts")));
    drop(agent);
    Ok(())
}
