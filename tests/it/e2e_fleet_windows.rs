//! Issue 24 §2 through real servers and real seconds: an allow window open 5 s of every 15 s (a cron with
//! seconds) holds a rolling deployment that needs longer: it is paused by the window when it closes, its
//! in-flight node finishes, and it resumes by itself at the next opening; the leader is killed while the
//! window is closed, and the new leader's timer resumes it. No node is admitted while the window is closed
//! (the install events' leader-stamped times), and `convoy window next` lists the openings.

use std::process::Command;
use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, resource_with_v1, wait_running, wait_status,
};
use convoy_tests::{convoy_bin, Cluster, FleetConfig};
use serde_json::json;

const PERIOD_MS: u64 = 15_000;
const OPEN_MS: u64 = 5_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_pauses_a_rollout_that_overruns_it_and_the_next_opening_resumes_it_across_a_leader_kill(
) -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let result = async {
        let api = cluster.client_except(0);
        resource_with_v1(&api, "wa").await?;
        publish(&api, "wa", json!({"label": "v2"})).await?;
        let nodes = consumer(&api, "win", 6).await?;
        let config = FleetConfig {
            install: Duration::from_millis(1_500),
            ..FleetConfig::new("wa")
        };
        let _fleet = config.start(&cluster.http_addrs(), &nodes, Some(1));
        wait_running(&api, &nodes, "wa", 1, Duration::from_secs(60)).await?;
        let created = post_ok(
            &api,
            "/v1/windows",
            json!({"name": "every-15s", "kind": "allow", "schedule": "0,15,30,45 * * * * *",
                   "duration": "5s", "applies_to": {"consumers": ["win"]}}),
        )
        .await?;
        ensure!(
            created["next"].as_array().is_some_and(|n| n.len() == 5),
            "{created}"
        );
        let out = Command::new(convoy_bin())
            .args([
                "window",
                "next",
                "every-15s",
                "--server",
                &cluster.http_addrs().join(","),
            ])
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        ensure!(out.status.success() && text.starts_with("OPENS"), "{text}");

        let started = post_ok(
            &api,
            "/v1/deployments",
            json!({"consumer": "win", "resource": "wa", "version": 2,
                   "strategy": {"rolling": {"install_window": 1, "download_window": 1}}}),
        )
        .await?;
        let id = started["id"].as_str().context("id")?.to_string();
        // Wait until the window closes on it, then kill the leader while it is held.
        let mut held = false;
        for _ in 0..800 {
            let s = get_ok(&api, &format!("/v1/deployments/{id}/summary")).await?;
            if s["paused_by"] == "window" {
                held = true;
                break;
            }
            ensure!(
                s["status"] != "ROLLED_FORWARD",
                "finished without being held: {s}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        ensure!(held, "never paused by the window");
        let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
        cluster.server_mut(leader).kill();
        let api = cluster.client_except(leader);
        let view = wait_status(&api, &id, "ROLLED_FORWARD", Duration::from_secs(120)).await?;
        let events = view["events"].as_array().context("events")?;
        let mut installs = 0;
        for e in events.iter().filter(|e| e["action"] == "install") {
            let at = e["at"].as_u64().context("at")?;
            ensure!(at % PERIOD_MS < OPEN_MS, "admitted outside the window: {e}");
            installs += 1;
        }
        ensure!(installs == 6, "{installs} installs: {view}");
        let paused = events
            .iter()
            .filter(|e| e["status"] == "ROLL_FORWARD_PAUSED" && e["by"] == "system")
            .count();
        ensure!(paused >= 1, "no pause by the window: {view}");
        cluster.restart(leader)?;
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
