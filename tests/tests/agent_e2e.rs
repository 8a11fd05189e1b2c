//! A real `convoy agent` process against three real servers: it downloads a `file://` artifact,
//! checks its sha256, switches `current`, reports a bad checksum as a clean failure (leaving
//! `current` alone), rides through the leader being killed, and stops cleanly on SIGTERM.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use convoy_tests::{convoy_bin, eventually};
use convoy_tests::{Cluster, RawClient};
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

/// Kills the agent if the test fails before stopping it.
struct Agent(Option<Child>);

impl Drop for Agent {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
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
    let expected = format!("sha256 mismatch: expected {wrong}, got {}", sha256(&bad));
    assert_eq!(failure["error"], expected.as_str(), "{failure}");
    assert_eq!(current(&state).as_deref(), Some("1"));
    assert!(!state.join("resources/web/2/artifact").exists());
    assert!(!state.join("resources/web/2/artifact.tmp").exists());

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
