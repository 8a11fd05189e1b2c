//! `convoy replay` on a stopped server's data dir: restoring its snapshot and re-applying its log
//! through the pure domain reaches the digest every server of the cluster reports at that index, and
//! prints one deployment's decisions with the entries that made them.

use std::process::Command;
use std::time::{Duration, Instant};

use convoy_tests::scenario::{consumer, post_ok, resource_with_v1};
use convoy_tests::{convoy_bin, Cluster, ClusterOptions};
use serde_json::{json, Value};

/// A three-server cluster that snapshots every 20 entries, holding `app` v1, a 4-node consumer `web`,
/// `fillers` more resources (a snapshot and a log tail after it) and one deployment paused with `pause`'s
/// body, then aborted; answers the cluster and the deployment's id.
async fn paused_then_aborted(fillers: usize, pause: Value) -> anyhow::Result<(Cluster, String)> {
    let cluster = Cluster::start_with(ClusterOptions {
        snapshot_every: 20,
        snapshot_max_every: Some(20),
        ..ClusterOptions::for_tests(3)
    })
    .await?;
    let leader = cluster.wait_leader(Duration::from_secs(15)).await?;
    let api = cluster.server(leader).client();
    resource_with_v1(&api, "app").await?;
    consumer(&api, "web", 4).await?;
    for k in 0..fillers {
        post_ok(&api, "/v1/resources", json!({"name": format!("r-{k}")})).await?;
    }
    let started = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 1, "pulse_interval_ms": 60000}),
    )
    .await?;
    let id = started["id"].as_str().unwrap().to_string();
    post_ok(&api, &format!("/v1/deployments/{id}/pause"), pause).await?;
    post_ok(&api, &format!("/v1/deployments/{id}/abort"), json!({})).await?;
    Ok((cluster, id))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaying_a_stopped_servers_log_reaches_the_clusters_digest() -> anyhow::Result<()> {
    let (mut cluster, id) = paused_then_aborted(45, json!({"message": "looking"})).await?;

    // Every server at one index with one digest; then stop server 3 cleanly.
    let deadline = Instant::now() + Duration::from_secs(20);
    let (index, sha) = loop {
        let mut seen = Vec::new();
        for s in cluster.servers.values() {
            let (_, d) = s.client().get("/v1/cluster/digest").await?;
            seen.push((
                d["last_applied"].as_u64(),
                d["sha256"].as_str().map(String::from),
            ));
        }
        if seen.iter().all(|x| *x == seen[0]) {
            break (seen[0].0.unwrap(), seen[0].1.clone().unwrap());
        }
        anyhow::ensure!(Instant::now() < deadline, "servers never agreed: {seen:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(cluster.server_mut(3).terminate(), "server 3 stops cleanly");
    let data_dir = cluster.dir().join("data/3");

    let out = Command::new(convoy_bin())
        .arg("replay")
        .arg(&data_dir)
        .args(["--deployment", &id, "--expect", &sha])
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("snapshot at index"),
        "a snapshot was restored: {stdout}"
    );
    // The replay reaches the index the servers agreed on, or a little past it: stopping server 3 may
    // commit entries that change no state (a new leader's blank entry after a hand-over), so the
    // digest, not the index, is what must match.
    let reached: u64 = stdout
        .split("up to index ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `up to index` line: {stdout}"));
    assert!(
        reached >= index,
        "replayed up to {reached}, agreed at {index}: {stdout}"
    );
    assert!(stdout.contains(&format!("digest {sha}")), "{stdout}");
    assert!(stdout.contains("matches the expected digest"), "{stdout}");
    // The deployment's decisions, each under the entry that made it.
    let pause = stdout
        .lines()
        .position(|l| l.contains("→ ROLL_FORWARD_PAUSED"))
        .unwrap_or_else(|| panic!("no pause decision: {stdout}"));
    assert!(stdout.lines().nth(pause).unwrap().contains("looking"));
    assert!(
        stdout
            .lines()
            .take(pause)
            .any(|l| l.starts_with('#') && l.contains("Pause")),
        "the pause is under its Pause entry: {stdout}"
    );
    assert!(stdout.contains("→ ABORTED"), "{stdout}");

    // Another digest is a failure, named.
    let wrong = Command::new(convoy_bin())
        .arg("replay")
        .arg(&data_dir)
        .args(["--expect", &"0".repeat(64)])
        .output()?;
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("differs"));

    // A running server's data dir is refused, not read under its feet.
    let running = Command::new(convoy_bin())
        .arg("replay")
        .arg(cluster.dir().join("data/1"))
        .output()?;
    assert!(
        !running.status.success(),
        "replayed a running server's data dir"
    );
    Ok(())
}

/// The chaos harness judges the states a stopped cluster's logs went through with the simulator's state
/// checkers (`convoy_lab::chaos::replayed`): a real cluster's paused and aborted deployment
/// passes, and a data dir that does not replay is a violation, not a silent skip.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chaos_harness_judges_every_replayed_state() -> anyhow::Result<()> {
    let (mut cluster, _) = paused_then_aborted(25, json!({})).await?;
    for s in [1, 2, 3] {
        cluster.server_mut(s).terminate();
    }

    let judged = convoy_lab::chaos::replayed::check(cluster.dir(), &[1, 2, 3]).await;
    let rules: Vec<_> = judged.violations.iter().map(|v| v.rule).collect();
    assert!(rules.is_empty(), "{:?}", judged.violations);
    // More than the three final states: the entries after each server's snapshot were judged one by one.
    assert!(judged.states > 3, "judged only {} states", judged.states);

    let missing = convoy_lab::chaos::replayed::check(cluster.dir(), &[9]).await;
    assert_eq!(
        missing
            .violations
            .iter()
            .map(|v| v.rule)
            .collect::<Vec<_>>(),
        ["replay-failed"],
        "{:?}",
        missing.violations
    );
    Ok(())
}
