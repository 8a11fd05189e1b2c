//! Issue 29, item 1, through the real binary: a `convoy agent` killed with SIGKILL (a crash, an OOM
//! kill) and started again on the same state dir neither orphans nor duplicates the app it runs
//! (`--run-command`). It re-attaches to the process it recorded (pid and start time), keeps watching
//! it, and tears it down at the next switch; killed in the middle of an install, it leaves one copy too.
//! Only the processes the test's app script started are counted: each start appends
//! `<version> <pid>` to a file of the test.

use std::path::Path;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{consumer, post_ok, publish, wait_status};
use convoy_tests::{eventually, Agent, Cluster, RawClient};
use serde_json::{json, Value};

/// The app: records its version and pid, then sleeps (as the same process, `exec`).
const APP: &str = "echo \"$CONVOY_VERSION $$\" >> \"$APPS\"; exec sleep 1000";

/// Alive and not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with(['Z', 'X'])
    })
}

/// The app's copies still running, as `(version, pid)`.
fn running(apps: &Path) -> Vec<(u64, i32)> {
    std::fs::read_to_string(apps)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (v, pid) = l.split_once(' ')?;
            Some((v.parse().ok()?, pid.trim().parse().ok()?))
        })
        .filter(|(_, pid)| alive(*pid))
        .collect()
}

/// SIGKILLs what the test's app started, whatever the outcome (the agent may be gone).
struct Reap(std::path::PathBuf);

impl Drop for Reap {
    fn drop(&mut self) {
        for (_, pid) in running(&self.0) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Reports the agent took since it started, from its status file.
fn reports_ok(agent: &Agent) -> u64 {
    std::fs::read(agent.state.join("status.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|s| s["reports_ok"].as_u64())
        .unwrap_or(0)
}

/// Waits until the agent took `n` reports: its worker went round several times meanwhile.
async fn settled(agent: &Agent, n: u64) -> anyhow::Result<()> {
    eventually(Duration::from_secs(20), || async {
        (reports_ok(agent) >= n).then_some(())
    })
    .await
    .with_context(|| format!("the agent never reported {n} times:\n{}", agent.output()))
}

async fn deploy(api: &RawClient, version: u64) -> anyhow::Result<String> {
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "edge", "resource": "web", "version": version,
               "rollback_on_failure": false}),
    )
    .await?;
    Ok(started["id"].as_str().context("id")?.to_string())
}

fn flags<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut f = vec![
        "--interval-ms",
        "200",
        "--run-command",
        APP,
        "--health-interval-ms",
        "100",
        "--health-grace-ms",
        "0",
        "--graceful-ms",
        "200",
    ];
    f.extend_from_slice(extra);
    f
}

async fn after_install(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    post_ok(api, "/v1/resources", json!({"name": "web"})).await?;
    consumer(api, "edge", 1).await?;
    let dir = tempfile::tempdir()?;
    let apps = dir.path().join("apps");
    let _reap = Reap(apps.clone());
    let env = [("APPS", apps.to_str().context("path")?)];
    let mut agent = Agent::start_with_env(cluster, "edge-0", dir.path(), &flags(&[]), &env)?;
    agent.wait_active(api).await?;
    let v1 = publish(api, "web", json!({})).await?;
    let id = deploy(api, v1).await?;
    wait_status(api, &id, "ROLLED_FORWARD", Duration::from_secs(30))
        .await
        .with_context(|| format!("agent:\n{}", agent.output()))?;
    let first = running(&apps);
    ensure!(first.len() == 1, "before the kill: {first:?}");

    // A crash of the agent leaves the app running...
    agent.kill();
    ensure!(running(&apps) == first, "the app died with the agent");
    // ... and the agent started again re-attaches to it instead of starting a second copy.
    std::fs::remove_file(agent.state.join("status.json"))?;
    let agent = Agent::start_with_env(cluster, "edge-0", dir.path(), &flags(&[]), &env)?;
    settled(&agent, 5).await?;
    let now = running(&apps);
    ensure!(
        now == first,
        "after the restart the app runs as {now:?}, before as {first:?}:\n{}",
        agent.output()
    );

    // The next switch tears the re-attached copy down: one copy, of the new version.
    let v2 = publish(api, "web", json!({})).await?;
    let id = deploy(api, v2).await?;
    wait_status(api, &id, "ROLLED_FORWARD", Duration::from_secs(30))
        .await
        .with_context(|| format!("agent:\n{}", agent.output()))?;
    let after = eventually(Duration::from_secs(10), || async {
        let now = running(&apps);
        (now.len() == 1).then_some(now)
    })
    .await
    .with_context(|| format!("copies: {:?}\n{}", running(&apps), agent.output()))?;
    ensure!(after[0].0 == v2, "after the switch: {after:?}");
    // SIGTERM: the agent tears its app down as it stops.
    drop(agent);
    ensure!(
        running(&apps).is_empty(),
        "left running: {:?}",
        running(&apps)
    );
    Ok(())
}

async fn mid_install(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    post_ok(api, "/v1/resources", json!({"name": "web"})).await?;
    consumer(api, "edge", 1).await?;
    let dir = tempfile::tempdir()?;
    let apps = dir.path().join("apps");
    let mark = dir.path().join("installing");
    let _reap = Reap(apps.clone());
    let env = [
        ("APPS", apps.to_str().context("path")?),
        ("MARK", mark.to_str().context("path")?),
    ];
    // Version 2's install takes a while and says when it began.
    let install = "if [ \"$CONVOY_VERSION\" = 2 ]; then touch \"$MARK\"; sleep 3; fi";
    let extra = ["--install-command", install];
    let mut agent = Agent::start_with_env(cluster, "edge-0", dir.path(), &flags(&extra), &env)?;
    agent.wait_active(api).await?;
    let v1 = publish(api, "web", json!({})).await?;
    let id = deploy(api, v1).await?;
    wait_status(api, &id, "ROLLED_FORWARD", Duration::from_secs(30))
        .await
        .with_context(|| format!("agent:\n{}", agent.output()))?;
    ensure!(running(&apps).len() == 1, "v1: {:?}", running(&apps));

    let v2 = publish(api, "web", json!({})).await?;
    let id = deploy(api, v2).await?;
    eventually(Duration::from_secs(20), || async {
        mark.exists().then_some(())
    })
    .await
    .with_context(|| format!("v2's install never began:\n{}", agent.output()))?;
    agent.kill();
    let agent = Agent::start_with_env(cluster, "edge-0", dir.path(), &flags(&extra), &env)?;
    wait_status(api, &id, "ROLLED_FORWARD", Duration::from_secs(30))
        .await
        .with_context(|| format!("agent:\n{}", agent.output()))?;
    let now = reports_ok(&agent);
    settled(&agent, now + 5).await?;
    let copies = running(&apps);
    ensure!(
        copies.len() == 1 && copies[0].0 == v2,
        "after a kill mid-install the app runs as {copies:?}:\n{}",
        agent.output()
    );
    drop(agent);
    ensure!(
        running(&apps).is_empty(),
        "left running: {:?}",
        running(&apps)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_agent_re_attaches_to_its_app_and_never_runs_two() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(1).client();
    cluster.logs_on_error(after_install(&cluster, &api).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_killed_mid_install_leaves_one_copy_of_the_new_version() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(1).client();
    cluster.logs_on_error(mid_install(&cluster, &api).await)
}
