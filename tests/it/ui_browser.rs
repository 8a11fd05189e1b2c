//! The web dashboard in a real browser: `ui/tests/dashboard.mjs` (Playwright driving Debian's headless
//! Chromium) against a real 3-server cluster with tokens and a simulated fleet. The page shows a rolling
//! deployment progressing; a pause clicked on the page reaches the cluster (`ROLL_FORWARD_PAUSED`, `by` the
//! token's name); killing the leader that served the page does not break it (it moves to another member and
//! resumes the deployment from there); the buttons are only those the deployment's state and the token's
//! role allow (no resume while awaiting a pulse, no pulse while a person holds it); the pulse line reads
//! "pulse overdue by N s", times are UTC as the CLI prints them with the local time on hover; a deployment
//! with metric analysis (against a fake Prometheus served here) shows per metric its counters, verdict and
//! last measurements (a value, and the error of the first query); a reader token sees no buttons; the API docs page (`/docs`) renders every
//! operation of `/openapi.json` with its roles and schemas. Skipped, saying why, only when
//! `node` or `chromium` is not installed. Set `CONVOY_UI_SCREENSHOTS=docs/images` to refresh the README's
//! screenshots.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use convoy_node::client::ApiClient;
use convoy_node::sim::{Behaviour, Fleet, FleetPlan};
use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, put_ok, resource_with_v1, wait_deployment, wait_running,
};
use convoy_tests::{eventually, Cluster, ClusterOptions};
use serde_json::json;

const ADMIN: &str = "cvy_feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface";
/// The whole browser script must finish within this.
const SCRIPT_PATIENCE: Duration = Duration::from_secs(180);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The first of `names` found on `PATH`.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// The browser script's process, read line by line.
struct Script {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Script {
    /// Waits for a line starting with `prefix`; fails with everything the script said.
    fn expect(&mut self, prefix: &str, patience: Duration) -> anyhow::Result<String> {
        let deadline = std::time::Instant::now() + patience;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return Ok(rest.trim().to_string());
                    }
                }
                Err(_) => bail!(
                    "the browser script never said {prefix:?}; it said:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    fn say(&mut self, line: &str) -> anyhow::Result<()> {
        let stdin = self.child.stdin.as_mut().context("script stdin")?;
        writeln!(stdin, "{line}")?;
        Ok(())
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fake Prometheus on a loopback port: its first query is answered 503 (an error measurement), every
/// later one with one series of value 0.002. Answers its address.
async fn fake_prometheus() -> anyhow::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?.to_string();
    let queries = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let queries = queries.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let (status, body) = if queries.fetch_add(1, Ordering::SeqCst) == 0 {
                    (
                        "503 Service Unavailable",
                        r#"{"status":"error","error":"warming up"}"#.to_string(),
                    )
                } else {
                    ("200 OK", r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1800000000,"0.002"]}]}}"#.to_string())
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(body.as_bytes()).await;
            });
        }
    });
    Ok(addr)
}

async fn token(api: &convoy_tests::RawClient, name: &str, role: &str) -> anyhow::Result<String> {
    let made = post_ok(api, "/v1/tokens", json!({"name": name, "role": role})).await?;
    Ok(made["secret"].as_str().context("secret")?.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_follows_steers_and_survives_a_leader_kill_in_a_real_browser(
) -> anyhow::Result<()> {
    let Some(node) = on_path(&["node", "nodejs"]) else {
        eprintln!("SKIPPED: node is not installed (apt-get install nodejs npm); the dashboard was not tested in a browser");
        return Ok(());
    };
    let Some(chromium) = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| on_path(&["chromium", "chromium-browser"]))
    else {
        eprintln!("SKIPPED: chromium is not installed (apt-get install chromium); the dashboard was not tested in a browser");
        return Ok(());
    };
    let ui = repo().join("ui");
    if !ui.join("node_modules/playwright-core").is_dir() {
        let npm = on_path(&["npm"])
            .context("npm is needed to install playwright-core (apt-get install npm)")?;
        let status = Command::new(npm)
            .arg("ci")
            .arg("--no-audit")
            .arg("--no-fund")
            .current_dir(&ui)
            .status()?;
        anyhow::ensure!(status.success(), "npm ci in ui/ failed");
    }

    let prometheus = fake_prometheus().await?;
    let cluster = Cluster::start_with(ClusterOptions {
        bootstrap_token: Some(ADMIN.into()),
        extra: format!(
            "analysis_provider = [{{ name = \"prom\", prometheus = \"http://{prometheus}\", timeout = \"2s\" }}]\n"
        ),
        ..ClusterOptions::for_tests(3)
    })
    .await?;
    let leader = cluster.wait_leader(Duration::from_secs(20)).await?;
    let api = cluster.server(leader).client();
    eventually(Duration::from_secs(20), || async {
        let (status, _) = api.get("/v1/whoami").await.ok()?;
        (status == 200).then_some(())
    })
    .await
    .context("the bootstrap token")?;
    let ops = token(&api, "ops", "operator").await?;
    let viewer = token(&api, "viewer", "reader").await?;

    // A fleet of 30 simulated nodes on v1, then a rolling deployment of v2, two at a time, slow enough to watch.
    resource_with_v1(&api, "app").await?;
    let nodes = consumer(&api, "web", 30).await?;
    // More nodes than the consumer's show answers at once (1,000): the page says how many it leaves out.
    consumer(&api, "wide", 1_005).await?;
    let fleet_client = ApiClient::new(&cluster.addresses())?
        .with_token(Some(ADMIN))
        .with_patience(Duration::ZERO);
    let fleet = Fleet::spawn_with(
        Arc::new(fleet_client),
        nodes.clone(),
        Behaviour {
            download: Duration::from_millis(100),
            install: Duration::from_millis(1500),
            fail_rate: 0.0,
        },
        Duration::from_millis(100),
        Some(("app".into(), 1)),
        FleetPlan::default(),
    );
    put_ok(&api, "/v1/consumers/web/subscriptions/app", json!({})).await?;
    wait_running(&api, &nodes, "app", 1, Duration::from_secs(20)).await?;
    publish(&api, "app", json!({"label": "second"})).await?;
    let started = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 2,
               "strategy": {"rolling": {"install_window": 2, "download_window": 4}},
               "pulse_interval_ms": 600000}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?.to_string();
    // A coordinated deployment waits for its first pulse (DEPLOYMENTS.md §7).
    post_ok(&api, &format!("/v1/deployments/{id}/pulse"), json!({})).await?;
    // A second one, left awaiting its first pulse: the page pulses it, then its 8 s pass without another.
    resource_with_v1(&api, "tool").await?;
    put_ok(&api, "/v1/consumers/web/subscriptions/tool", json!({})).await?;
    wait_running(&api, &nodes, "tool", 1, Duration::from_secs(20)).await?;
    publish(&api, "tool", json!({"label": "second"})).await?;
    let coordinated = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "tool", "version": 2,
               "strategy": {"rolling": {"install_window": 1, "download_window": 1}},
               "pulse_interval_ms": 8000}),
    )
    .await?;
    let coordinated = coordinated["id"].as_str().context("id")?.to_string();
    // A third, on two nodes in batches of one, each promoted after two good measurements of its metric.
    resource_with_v1(&api, "svc").await?;
    put_ok(&api, "/v1/consumers/web/subscriptions/svc", json!({})).await?;
    wait_running(&api, &nodes, "svc", 1, Duration::from_secs(20)).await?;
    publish(&api, "svc", json!({"label": "second"})).await?;
    let analyzed = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "svc", "version": 2, "nodes": "0-1",
               "strategy": {"batch": {"sizes": [1, 1]}},
               "analysis": {"provider": "prom", "mode": "per_batch", "metrics": [
                   {"name": "error_ratio", "query": "sum(rate(errors[1m]))", "success": "result < 0.01",
                    "interval_ms": 1000, "count": 2}]}}),
    )
    .await?;
    let analyzed = analyzed["id"].as_str().context("id")?.to_string();

    let shots = match std::env::var_os("CONVOY_UI_SCREENSHOTS") {
        Some(dir) => repo().join(dir),
        None => cluster.dir().join("screenshots"),
    };
    std::fs::create_dir_all(&shots)?;
    let servers: Vec<String> = (1..=3).map(|i| cluster.server(i).url()).collect();
    let mut child = Command::new(node)
        .arg(ui.join("tests/dashboard.mjs"))
        .env("CHROMIUM", &chromium)
        .env("CONVOY_LEADER_URL", cluster.server(leader).url())
        .env("CONVOY_LEADER_ID", leader.to_string())
        .env("CONVOY_SERVERS", servers.join(","))
        .env("CONVOY_OPS_TOKEN", &ops)
        .env("CONVOY_READER_TOKEN", &viewer)
        .env("CONVOY_DEPLOYMENT", &id)
        .env("CONVOY_COORDINATED", &coordinated)
        .env("CONVOY_ANALYZED", &analyzed)
        .env("CONVOY_SCREENSHOTS", &shots)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting node")?;
    let (tx, lines) = mpsc::channel();
    let stdout = child.stdout.take().context("stdout")?;
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut script = Script {
        child,
        lines,
        seen: Vec::new(),
    };

    // 1. The page shows the deployment progressing, 2. and pauses it with the operator's token.
    let progressed = script.expect("PROGRESS ", SCRIPT_PATIENCE)?;
    eprintln!("the page saw: {progressed}");
    script.expect("PAUSED", SCRIPT_PATIENCE)?;
    let paused = wait_deployment(&api, &id, Duration::from_secs(10), |v| {
        v["status"] == "ROLL_FORWARD_PAUSED"
    })
    .await?;
    let pause = paused["events"]
        .as_array()
        .and_then(|events| {
            events
                .iter()
                .rev()
                .find(|e| e["status"] == "ROLL_FORWARD_PAUSED")
        })
        .with_context(|| format!("no pause event in {paused}"))?;
    assert_eq!(
        pause["by"], "ops",
        "the pause must be recorded as the page's token: {pause}"
    );
    assert_eq!(paused["paused_by"], "user", "{paused}");

    // 3. Kill the leader that served the page; the page moves to another member and resumes from there.
    let mut cluster = cluster;
    cluster.server_mut(leader).kill();
    script.say("killed")?;
    script.expect("RESUMED", SCRIPT_PATIENCE)?;
    let survivor = cluster.client_except(leader);
    let resumed = wait_deployment(&survivor, &id, Duration::from_secs(60), |v| {
        v["status"] == "ROLLING_FORWARD" || v["status"] == "ROLLED_FORWARD"
    })
    .await?;
    let resume = resumed["events"].as_array().and_then(|events| {
        events
            .iter()
            .rev()
            .find(|e| e["by"] == "ops" && e["status"] == "ROLLING_FORWARD")
    });
    assert!(
        resume.is_some(),
        "the resume from the page must be recorded as ops: {resumed}"
    );

    // 4. Buttons follow the state: awaiting a pulse, no resume; the page's pulse unblocks it; the pulse line
    //    says "overdue by" once the deadline passed; times read in UTC with the local time on hover.
    script.expect("COORDINATED", SCRIPT_PATIENCE)?;
    let pulsed = get_ok(&survivor, &format!("/v1/deployments/{coordinated}")).await?;
    assert!(
        pulsed["last_pulse_at"].is_u64(),
        "the page's pulse never reached the cluster: {pulsed}"
    );

    // 5. The analysed deployment shows its measurements.
    let measured = script.expect("ANALYSIS", SCRIPT_PATIENCE)?;
    eprintln!("the analysis on the page: {measured}");

    // 6. A reader token sees the deployment and no buttons.
    script.expect("READER_NO_BUTTONS", SCRIPT_PATIENCE)?;
    // 7. The API docs page renders every operation of /openapi.json.
    let docs = script.expect("DOCS", SCRIPT_PATIENCE)?;
    eprintln!("docs page: {docs}");
    script.expect("DONE", SCRIPT_PATIENCE)?;
    let status = script.child.wait()?;
    eprintln!("the browser script said:\n{}", script.seen.join("\n"));
    assert!(
        status.success(),
        "the browser script failed: {status}\n{}",
        script.seen.join("\n")
    );
    for page in ["deployments.png", "deployment.png", "cluster.png"] {
        let shot = shots.join(page);
        assert!(
            std::fs::metadata(&shot)
                .map(|m| m.len() > 1000)
                .unwrap_or(false),
            "no screenshot {}",
            shot.display()
        );
    }
    fleet.stop().await;
    Ok(())
}
