//! The case studies of job update coordination (seed 000) over three real servers and a simulated
//! fleet: a coordinated rolling deployment waits for its first pulse, carries on through a SIGKILL of
//! the leader, is blocked by the new leader's re-armed countdown when pulses stop (within 100 ms of
//! the deadline, by leader-stamped times), resumes on a fresh pulse, answers STOP while a user holds
//! it, and answers STOP once finished.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use convoy_tests::fleet::now_ms;
use convoy_tests::scenario::{
    consumer, count_nodes, post_ok, publish, put_ok, resource_with_v1, status_at, wait_deployment,
    wait_running, wait_status,
};
use convoy_tests::{Cluster, FleetConfig, Phase, RawClient};
use serde_json::{json, Value};

const PULSE_MS: u64 = 1_500;
/// How long a report's answer may still be on its way after the server that wrote it changed.
const ANSWER_IN_FLIGHT_MS: u64 = 50;
const LONG: Duration = Duration::from_secs(30);

/// Pulses `id` every 300 ms through whichever server answers, while `on` is set.
fn pulser(servers: Vec<String>, id: String, on: Arc<AtomicBool>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut i = 0;
        loop {
            if on.load(Ordering::SeqCst) {
                let api = RawClient::new(&servers[i % servers.len()]);
                if api
                    .post(&format!("/v1/deployments/{id}/pulse"), &json!({}))
                    .await
                    .is_err()
                {
                    i += 1;
                    continue;
                }
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    })
}

async fn pulse(api: &RawClient, id: &str) -> anyhow::Result<Value> {
    post_ok(api, &format!("/v1/deployments/{id}/pulse"), json!({})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinated_deployment_case_studies_through_a_leader_failover() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    let nodes = consumer(&api, "web", 12).await?;
    let fleet = FleetConfig {
        install: Duration::from_millis(700),
        ..FleetConfig::new("app")
    }
    .start(&cluster.http_addrs(), &nodes, Some(1));
    wait_running(&api, &nodes, "app", 1, LONG).await?;
    let rolling = json!({"rolling": {"install_window": 2, "download_window": 2}});
    put_ok(
        &api,
        "/v1/consumers/web/subscriptions/app",
        json!({"mode": "strong", "strategy": rolling, "pin": 1}),
    )
    .await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    let started = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 2, "strategy": rolling,
               "pulse_interval_ms": PULSE_MS}),
    )
    .await?;
    let id = started["id"].as_str().unwrap().to_string();
    put_ok(
        &api,
        "/v1/consumers/web/subscriptions/app",
        json!({"mode": "strong", "strategy": rolling, "pin": 2}),
    )
    .await?;

    // Case 1: it waits for the first pulse; nothing is installed before it.
    assert_eq!(
        started["status"], "ROLL_FORWARD_AWAITING_PULSE",
        "{started}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        fleet.order(Phase::Install, 2).is_empty(),
        "installed before the first pulse"
    );
    let answer = pulse(&api, &id).await?;
    assert_eq!(answer["status"], "OK", "{answer}");
    let on = Arc::new(AtomicBool::new(true));
    let pulses = pulser(cluster.http_addrs(), id.clone(), on.clone());
    wait_deployment(&api, &id, LONG, |v| count_nodes(v, "succeeded") >= 2).await?;

    // Case 3: the leader dies mid-deployment; the new leader carries on with the pulses.
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    cluster.server_mut(leader).kill();
    let new_leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    assert_ne!(leader, new_leader);
    let api = cluster.server(new_leader).client();
    let carried = wait_deployment(&api, &id, LONG, |v| count_nodes(v, "succeeded") >= 3).await?;
    assert_eq!(carried["status"], "ROLLING_FORWARD", "{carried}");

    // Cases 2 and 4: pulses stop after the failover; the re-armed countdown blocks it at the deadline.
    on.store(false, Ordering::SeqCst);
    let blocked = wait_status(&api, &id, "ROLL_FORWARD_AWAITING_PULSE", LONG).await?;
    // Agents get their targets from whichever server they report to, from its applied state: the
    // block binds an agent once that server has applied it, and an answer already on its way
    // (a few ms on loopback) still carries the targets from before.
    for server in cluster.running() {
        let client = cluster.server(server).client();
        wait_status(&client, &id, "ROLL_FORWARD_AWAITING_PULSE", LONG).await?;
    }
    let seen_blocked = now_ms() + ANSWER_IN_FLIGHT_MS;
    assert_eq!(blocked["paused_by"], "pulse_timeout", "{blocked}");
    let last_pulse = blocked["last_pulse_at"].as_u64().expect("last_pulse_at");
    let blocked_at = blocked["events"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|e| e["status"] == "ROLL_FORWARD_AWAITING_PULSE")
        .and_then(|e| e["at"].as_u64())
        .unwrap();
    let late = blocked_at as i64 - (last_pulse + PULSE_MS) as i64;
    assert!(
        (0..=100).contains(&late),
        "blocked {late} ms after the deadline (leader-stamped)"
    );
    // While blocked, no node is allowed to start installing.
    let succeeded = count_nodes(&blocked, "succeeded");
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let late_starts = fleet
        .spans()
        .into_iter()
        .filter(|s| s.phase == Phase::Install && s.version == 2 && s.start > seen_blocked)
        .count();
    assert_eq!(
        late_starts, 0,
        "a node started installing after every server knew the deployment was blocked"
    );
    assert!(succeeded < nodes.len(), "finished before the block");

    // A fresh pulse resumes it at once.
    let answer = pulse(&api, &id).await?;
    assert_eq!(answer["status"], "OK", "{answer}");
    assert_eq!(answer["state"], "ROLLING_FORWARD", "{answer}");
    on.store(true, Ordering::SeqCst);

    // Case 5: a user pause is never lifted by a pulse, which answers STOP with the status.
    post_ok(&api, &format!("/v1/deployments/{id}/pause"), json!({})).await?;
    let answer = pulse(&api, &id).await?;
    assert_eq!(answer["status"], "STOP", "{answer}");
    assert_eq!(answer["state"], "ROLL_FORWARD_PAUSED", "{answer}");
    let held = wait_status(&api, &id, "ROLL_FORWARD_PAUSED", LONG).await?;
    assert_eq!(held["paused_by"], "user", "{held}");
    // Resumed within the interval (the pulser keeps going), it rolls on to the end.
    post_ok(&api, &format!("/v1/deployments/{id}/resume"), json!({})).await?;
    let done = wait_status(&api, &id, "ROLLED_FORWARD", LONG).await?;
    assert_eq!(count_nodes(&done, "succeeded"), nodes.len(), "{done}");
    assert!(status_at(&done, "ROLLED_FORWARD").is_some());
    pulses.abort();

    // Case 1's end: a pulse on a finished deployment answers STOP.
    let answer = pulse(&api, &id).await?;
    assert_eq!(answer["status"], "STOP", "{answer}");
    assert!(fleet.max_concurrent(Phase::Install, 2) <= 2);
    Ok(())
}
