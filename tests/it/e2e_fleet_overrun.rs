//! Issue 24 §2, `overrun: "pause"`, through real servers and real seconds: an allow window open 8 s of every
//! 15 s (a cron with seconds) holds a rollout of 9 nodes, 3 at a time, each downloading for 3 s. The rollout
//! starts 5.2–5.8 s into an opening, so the window closes on its first wave still downloading: those nodes
//! are taken back (event `recalled`, by the system, naming the window), the deployment is paused by the
//! window and goes on by itself at the next opening; every install event is stamped inside an opening and
//! all 9 nodes finish.
//!
//! The start is placed on the wall clock (the servers' clock: same machine) because a loaded machine
//! stretches every wave: starting while the window was closed left the recall to how long the waves before
//! it took, and a wave taking longer than the opening never finished (a recalled node drops its download).

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, resource_with_v1, wait_running, wait_status,
};
use convoy_tests::{Cluster, FleetConfig};
use serde_json::json;

const PERIOD_MS: u64 = 15_000;
const OPEN_MS: u64 = 8_000;
/// The rollout starts this far into an opening: its first wave's 3 s downloads end after the close even if
/// admitted at once, and the admission has 2.2 s before the close.
const START_IN_OPENING_MS: std::ops::Range<u64> = 5_200..5_800;

/// Milliseconds into the window's 15 s period, by the wall clock the servers stamp events with.
fn into_period_ms() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970");
    (now.as_millis() % u128::from(PERIOD_MS)) as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_with_overrun_pause_takes_back_the_wave_it_closes_on_and_the_next_opening_resumes_it(
) -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let result = async {
        let api = cluster.client_except(0);
        resource_with_v1(&api, "ov").await?;
        publish(&api, "ov", json!({"label": "v2"})).await?;
        let nodes = consumer(&api, "ovr", 9).await?;
        let config = FleetConfig {
            download: Duration::from_millis(3_000),
            install: Duration::from_millis(300),
            ..FleetConfig::new("ov")
        };
        let _fleet = config.start(&cluster.http_addrs(), &nodes, Some(1));
        wait_running(&api, &nodes, "ov", 1, Duration::from_secs(60)).await?;
        post_ok(
            &api,
            "/v1/windows",
            json!({"name": "short", "kind": "allow", "schedule": "0,15,30,45 * * * * *",
                   "duration": "8s", "applies_to": {"consumers": ["ovr"]}, "overrun": "pause"}),
        )
        .await?;
        // Start late in an opening (at most two periods of waiting), the window seen open by the servers.
        let mut placed = false;
        for _ in 0..1_600 {
            if START_IN_OPENING_MS.contains(&into_period_ms())
                && get_ok(&api, "/v1/windows/short").await?["open"] == true
            {
                placed = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        ensure!(placed, "never {START_IN_OPENING_MS:?} ms into an opening");
        let started = post_ok(
            &api,
            "/v1/deployments",
            json!({"consumer": "ovr", "resource": "ov", "version": 2,
                   "strategy": {"rolling": {"install_window": 3, "download_window": 3}}}),
        )
        .await?;
        let id = started["id"].as_str().context("id")?.to_string();
        let view = wait_status(&api, &id, "ROLLED_FORWARD", Duration::from_secs(150)).await?;
        let events = view["events"].as_array().context("events")?;
        let recalled: Vec<_> = events
            .iter()
            .filter(|e| e["action"] == "recalled")
            .collect();
        ensure!(
            !recalled.is_empty(),
            "no node taken back when the window closed: {view}"
        );
        for e in &recalled {
            ensure!(
                e["by"] == "system"
                    && e["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("window short closed (overrun: pause)")),
                "{e}"
            );
        }
        for e in events.iter().filter(|e| e["action"] == "install") {
            let at = e["at"].as_u64().context("at")?;
            ensure!(at % PERIOD_MS < OPEN_MS, "admitted outside the window: {e}");
        }
        let succeeded = view["nodes"]
            .as_array()
            .context("nodes")?
            .iter()
            .filter(|n| n["state"] == "succeeded")
            .count();
        ensure!(succeeded == 9, "{succeeded} of 9 succeeded: {view}");
        let paused = events
            .iter()
            .filter(|e| e["status"] == "ROLL_FORWARD_PAUSED" && e["by"] == "system")
            .count();
        ensure!(paused >= 1, "never paused by the window: {view}");
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
