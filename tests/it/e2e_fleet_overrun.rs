//! Issue 24 §2, `overrun: "pause"`, through real servers and real seconds: an allow window open 5 s of every
//! 15 s (a cron with seconds) holds a rollout of 9 nodes, 3 at a time, each downloading for 3 s. When the
//! window closes on a wave still downloading, those nodes are taken back (event `recalled`, by the system,
//! naming the window), the deployment is paused by the window and goes on by itself at the next opening;
//! every install event is stamped inside an opening and all 9 nodes finish.

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, resource_with_v1, wait_running, wait_status,
};
use convoy_tests::{Cluster, FleetConfig};
use serde_json::json;

const PERIOD_MS: u64 = 15_000;
const OPEN_MS: u64 = 5_000;

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
                   "duration": "5s", "applies_to": {"consumers": ["ovr"]}, "overrun": "pause"}),
        )
        .await?;
        // Start while the window is closed, so the first wave is admitted when it opens.
        for _ in 0..400 {
            let w = get_ok(&api, "/v1/windows/short").await?;
            if w["open"] == false {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
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
