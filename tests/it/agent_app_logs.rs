//! Issue 29, item 2, through the real binary: the app's stdout and stderr go to log files of its own
//! in the agent's state dir (`logs/<resource>.stdout.log`, `logs/<resource>.stderr.log`), not into
//! the agent's log; and an app that exits at start fails its version with an error, and a deployment
//! event, that quotes its last stderr lines. The agent reports where (the stdout log's absolute path),
//! and `convoy node show` names it; a path longer than 1,024 bytes or not absolute is refused.

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{consumer, get_ok, post_ok, publish, resource_with_v1, wait_status};
use convoy_tests::{convoy_bin, Agent, Cluster, RawClient};
use serde_json::json;

/// Version 1 starts and talks on both streams; version 2 cannot find its config and exits.
const APP: &str = "if [ \"$CONVOY_VERSION\" = 2 ]; then echo 'loading /etc/web.toml' >&2; \
                   echo 'fatal: cannot open /etc/web.toml: No such file or directory' >&2; exit 3; fi; \
                   echo \"hello from v$CONVOY_VERSION\"; echo 'warming up' >&2; exec sleep 1000";

async fn deploy(
    api: &RawClient,
    version: u64,
    status: &str,
    agent: &Agent,
) -> anyhow::Result<serde_json::Value> {
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
        .with_context(|| format!("agent:\n{}", agent.output()))
}

async fn scenario(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    post_ok(api, "/v1/resources", json!({"name": "web"})).await?;
    consumer(api, "edge", 1).await?;
    let dir = tempfile::tempdir()?;
    let agent = Agent::start(
        cluster,
        "edge-0",
        dir.path(),
        &[
            "--interval-ms",
            "200",
            "--run-command",
            APP,
            "--health-interval-ms",
            "100",
            "--health-grace-ms",
            "0",
            "--max-restarts",
            "0",
            "--graceful-ms",
            "200",
        ],
    )?;
    agent.wait_active(api).await?;
    let v1 = publish(api, "web", json!({})).await?;
    deploy(api, v1, "ROLLED_FORWARD", &agent).await?;
    let logs = agent.state.join("logs");
    let read = |name: &str| std::fs::read_to_string(logs.join(name)).unwrap_or_default();
    ensure!(
        read("web.stdout.log").contains("hello from v1"),
        "stdout log: {:?}",
        read("web.stdout.log")
    );
    ensure!(
        read("web.stderr.log").contains("warming up"),
        "stderr log: {:?}",
        read("web.stderr.log")
    );
    ensure!(
        !agent.output().contains("hello from v1"),
        "the app's output went to the agent's log"
    );
    // The agent says where, in its status file.
    let status: serde_json::Value =
        serde_json::from_slice(&std::fs::read(agent.state.join("status.json"))?)?;
    let said = &status["phases"]["web"]["logs"];
    ensure!(
        said["stderr"] == logs.join("web.stderr.log").display().to_string()
            && said["stdout"] == logs.join("web.stdout.log").display().to_string(),
        "status.json: {status}"
    );

    node_show_names_the_log(cluster, api, &logs.join("web.stdout.log")).await?;

    let v2 = publish(api, "web", json!({})).await?;
    let view = deploy(api, v2, "FAILED", &agent).await?;
    let quote = "fatal: cannot open /etc/web.toml: No such file or directory";
    let node = get_ok(api, "/v1/nodes/edge-0").await?;
    let error = node["resources"]["web"]["versions"][v2.to_string()]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    ensure!(
        error.contains(quote) && error.contains("loading /etc/web.toml"),
        "the node's error does not quote the app's stderr: {error:?}"
    );
    ensure!(error.len() <= 1024, "{} bytes: {error}", error.len());
    let events = view["events"].to_string();
    ensure!(
        events.contains(quote),
        "no event quotes the stderr: {events}"
    );
    drop(agent);
    Ok(())
}

/// `convoy node show edge-0` (text, json and yaml) names `path`, which holds the app's output; a
/// report naming a path too long or relative is refused with 400 naming the limit.
async fn node_show_names_the_log(
    cluster: &Cluster,
    api: &RawClient,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    let path = path.display().to_string();
    ensure!(
        std::fs::read_to_string(&path)?.contains("hello from v1"),
        "{path} lacks the app's output"
    );
    let server = cluster.http_addrs().join(",");
    let cli = |extra: &[&str]| -> anyhow::Result<String> {
        let out = std::process::Command::new(convoy_bin())
            .args(["node", "show", "edge-0", "--server", &server])
            .args(extra)
            .env_remove("CONVOY_SERVER")
            .env_remove("CONVOY_TOKEN")
            .env_remove("CONVOY_TOKEN_FILE")
            .output()?;
        ensure!(out.status.success(), "node show {extra:?}: {out:?}");
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    // The agent reports it with its next report: wait for it to reach the state.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let node = get_ok(api, "/v1/nodes/edge-0").await?;
        if node["resources"]["web"]["log"] == path.as_str() {
            break;
        }
        ensure!(
            std::time::Instant::now() < deadline,
            "GET /v1/nodes/edge-0 does not name the log {path}: {node}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let text = cli(&[])?;
    ensure!(
        text.lines()
            .any(|l| l.contains("web") && l.contains(path.as_str())),
        "node show does not name the log {path}:\n{text}"
    );
    let doc: serde_json::Value = serde_json::from_str(&cli(&["-o", "json"])?)?;
    ensure!(doc["resources"]["web"]["log"] == path.as_str(), "{doc}");
    let yaml = cli(&["-o", "yaml"])?;
    ensure!(yaml.contains(&format!("log: {path}")), "{yaml}");

    for (log, limit) in [
        (format!("/{}", "x".repeat(1024)), "1024 bytes"),
        ("logs/web.stdout.log".to_string(), "absolute"),
    ] {
        let (status, body) = api
            .post(
                "/v1/nodes/edge-0/report",
                &json!({"resources": {"web": {"log": log}}}),
            )
            .await?;
        ensure!(
            status == 400 && body.to_string().contains(limit),
            "a report with log {:.40}: {status} {body}",
            log
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_apps_output_has_its_own_log_and_a_failed_start_quotes_its_stderr() -> anyhow::Result<()>
{
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(1).client();
    cluster.logs_on_error(scenario(&cluster, &api).await)
}

/// The leader's `convoy_reports_changes_total` (reports whose change was queued for the log).
async fn changes_queued(leader_url: &str) -> anyhow::Result<f64> {
    let text = reqwest::get(format!("{leader_url}/metrics"))
        .await?
        .text()
        .await?;
    text.lines()
        .find_map(|l| l.strip_prefix("convoy_reports_changes_total "))
        .context("no convoy_reports_changes_total")?
        .trim()
        .parse()
        .context("convoy_reports_changes_total")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_path_sent_to_a_follower_is_stored_and_its_repeats_add_nothing() -> anyhow::Result<()>
{
    let cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(20)).await?;
    let api = cluster.server(leader).client();
    let follower = cluster.client_except(leader);
    let result = async {
        resource_with_v1(&api, "web").await?;
        consumer(&api, "edge", 1).await?;
        let path = "/var/lib/convoy-agent/logs/web.stdout.log";
        let body = json!({"resources": {"web": {"current": 1, "log": path,
            "versions": {"1": {"downloaded": true, "installed": true, "done": true}}}}});
        post_ok(&follower, "/v1/nodes/edge-0/report", body.clone()).await?;
        convoy_tests::eventually(Duration::from_secs(10), || async {
            let node = get_ok(&api, "/v1/nodes/edge-0").await.ok()?;
            (node["resources"]["web"]["log"] == path).then_some(())
        })
        .await
        .context("the leader's state never named the log sent through a follower")?;
        let before = changes_queued(&cluster.server(leader).url()).await?;
        for _ in 0..3 {
            post_ok(&follower, "/v1/nodes/edge-0/report", body.clone()).await?;
        }
        let after = changes_queued(&cluster.server(leader).url()).await?;
        ensure!(
            after == before,
            "the same log path again queued {} changes for the log",
            after - before
        );
        let node = get_ok(&follower, "/v1/nodes/edge-0?consistent=true").await?;
        ensure!(node["resources"]["web"]["log"] == path, "{node}");
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
