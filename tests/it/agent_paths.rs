//! Issue 29, item 3, through the real binary: an agent started with relative path flags
//! (`--state-dir`, `--artifact-root`) once gave its run command an artifact path joined twice (the
//! relative state dir under the version dir it runs in), so the app never found its artifact. Every
//! path flag is now made absolute when the agent starts.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Context;
use convoy_tests::scenario::{consumer, post_ok, publish, wait_status};
use convoy_tests::{Agent, Cluster, RawClient};
use serde_json::json;

fn sha256(path: &Path) -> anyhow::Result<String> {
    let out = Command::new("sha256sum").arg(path).output()?;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .map(String::from)
        .context("sha256sum printed nothing")
}

async fn scenario(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    post_ok(api, "/v1/resources", json!({"name": "web"})).await?;
    consumer(api, "edge", 1).await?;
    let dir = tempfile::tempdir()?;
    let artifacts = dir.path().join("artifacts");
    std::fs::create_dir(&artifacts)?;
    let file = artifacts.join("web-1.tar");
    std::fs::write(&file, "release one")?;
    // The app exits (and, with no restart allowed, fails the version) unless it finds its artifact.
    let run = "test -f \"$CONVOY_ARTIFACT\" || { echo \"no artifact at $CONVOY_ARTIFACT\" >&2; exit 1; }; exec sleep 1000";
    let agent = Agent::start_relative(
        cluster,
        "edge-0",
        dir.path(),
        &[
            "--interval-ms",
            "200",
            "--artifact-root",
            "artifacts",
            "--run-command",
            run,
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
    let url = format!("file://{}", file.display());
    let v = publish(
        api,
        "web",
        json!({"artifact": {"url": url, "sha256": sha256(&file)?}}),
    )
    .await?;
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "edge", "resource": "web", "version": v,
               "min_healthy_ms": 500, "rollback_on_failure": false}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?;
    wait_status(api, id, "ROLLED_FORWARD", Duration::from_secs(30))
        .await
        .with_context(|| format!("agent:\n{}", agent.output()))?;
    anyhow::ensure!(
        dir.path().join("edge-0/resources/web/1/artifact").exists(),
        "the artifact is not under the relative state dir"
    );
    drop(agent);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relative_path_flags_work_as_absolute_ones() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(1).client();
    cluster.logs_on_error(scenario(&cluster, &api).await)
}
