//! Issue 24 §3 through real servers: the servers' config sets `max_concurrent_installs = 2`, which the
//! leader proposes into the replicated state; three deployments on two consumers, each with an install window
//! of 3, never have more than 2 nodes installing at once across the cluster (seen from the simulated nodes'
//! install spans and from `GET /v1/cluster/limits`), one of them says it waits for the fleet limit without
//! being paused, and all finish across a leader kill. Then `PUT /v1/cluster/limits` sets 3: every server
//! shows that its config differs, and a new leader does not put its config back.

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::fleet::max_overlap;
use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, put_ok, resource_with_v1, wait_running, wait_status,
};
use convoy_tests::{eventually, Cluster, ClusterOptions, FleetConfig, Phase};
use serde_json::json;

const LONG: Duration = Duration::from_secs(90);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installs_across_deployments_stay_within_the_configured_fleet_limit_across_a_leader_kill(
) -> anyhow::Result<()> {
    let options = ClusterOptions {
        extra: "max_concurrent_installs = 2\n".into(),
        ..ClusterOptions::for_tests(3)
    };
    let mut cluster = Cluster::start_with(options).await?;
    let result = async {
        let api = cluster.client_except(0);
        for r in ["la", "lb"] {
            resource_with_v1(&api, r).await?;
        }
        publish(&api, "la", json!({"label": "v2"})).await?;
        let mut nodes = consumer(&api, "lw", 3).await?;
        nodes.extend(consumer(&api, "lx", 3).await?);
        // The leader proposes its config: the limit is replicated, from the config.
        eventually(Duration::from_secs(20), || async {
            let l = get_ok(&api, "/v1/cluster/limits").await.ok()?;
            (l["in_force"]["max_concurrent_installs"] == 2
                && l["in_force"]["source"] == "config"
                && l["config_differs"] == false)
                .then_some(())
        })
        .await
        .context("the configured limit never became the replicated one")?;
        let config = FleetConfig {
            install: Duration::from_millis(800),
            ..FleetConfig::new("la")
        };
        let fleet = config.start(&cluster.http_addrs(), &nodes, Some(1));
        wait_running(&api, &nodes, "la", 1, LONG).await?;

        let wide = json!({"rolling": {"install_window": 3, "download_window": 1}});
        let mut ids = Vec::new();
        for (c, r, v) in [("lw", "la", 2), ("lx", "la", 2), ("lw", "lb", 1)] {
            let started = post_ok(
                &api,
                "/v1/deployments",
                json!({"consumer": c, "resource": r, "version": v, "strategy": wide}),
            )
            .await?;
            ids.push(started["id"].as_str().context("id")?.to_string());
        }
        let mut waited = false;
        let mut most = 0;
        let mut killed = None;
        let mut api = api;
        for _ in 0..1_200 {
            if let Ok(l) = get_ok(&api, "/v1/cluster/limits").await {
                most = most.max(l["in_force"]["installing"].as_u64().unwrap_or(0));
            }
            let mut done = 0;
            for id in &ids {
                let Ok(s) = get_ok(&api, &format!("/v1/deployments/{id}/summary")).await else {
                    continue;
                };
                ensure!(s.get("paused_by").is_none(), "a limit paused {id}: {s}");
                waited |= s["waiting_for"] == "fleet_limit";
                done += usize::from(s["status"] == "ROLLED_FORWARD");
                let succeeded = s["counts"]["succeeded"].as_u64().unwrap_or(0);
                if killed.is_none() && succeeded >= 1 {
                    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
                    cluster.server_mut(leader).kill();
                    api = cluster.client_except(leader);
                    killed = Some(leader);
                }
            }
            if done == ids.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        for id in &ids {
            wait_status(&api, id, "ROLLED_FORWARD", LONG).await?;
        }
        ensure!(killed.is_some(), "the leader was never killed mid-rollout");
        ensure!(
            most <= 2,
            "GET /v1/cluster/limits counted {most} installing"
        );
        ensure!(
            waited,
            "no deployment ever said it waited for the fleet limit"
        );
        let spans: Vec<_> = fleet
            .spans()
            .into_iter()
            .filter(|s| s.phase == Phase::Install)
            .collect();
        ensure!(spans.len() >= 9, "{} installs, not 9", spans.len());
        let overlap = max_overlap(spans.iter().map(|s| (s.start, s.end)));
        ensure!(
            overlap <= 2,
            "{overlap} nodes installed at once under a fleet limit of 2"
        );

        // Set by the API: every server says its config differs, and a new leader leaves it.
        let killed = killed.context("killed")?;
        cluster.restart(killed)?;
        let set = put_ok(
            &api,
            "/v1/cluster/limits",
            json!({"max_concurrent_installs": 3}),
        )
        .await?;
        ensure!(
            set["in_force"]["source"] == "api" && set["config_differs"] == true,
            "{set}"
        );
        let leader = cluster.wait_leader(Duration::from_secs(20)).await?;
        cluster.server_mut(leader).kill();
        let api = cluster.client_except(leader);
        cluster.wait_leader(Duration::from_secs(20)).await?;
        // Give the new leader time to propose its config, were it to (it must not).
        tokio::time::sleep(Duration::from_secs(2)).await;
        let l = eventually(Duration::from_secs(20), || async {
            get_ok(&api, "/v1/cluster/limits?consistent=true")
                .await
                .ok()
        })
        .await?;
        ensure!(
            l["in_force"]["max_concurrent_installs"] == 3
                && l["in_force"]["source"] == "api"
                && l["this_server_config"]["max_concurrent_installs"] == 2
                && l["config_differs"] == true,
            "{l}"
        );
        cluster.restart(leader)?;
        Ok(())
    }
    .await;
    cluster.logs_on_error(result)
}
