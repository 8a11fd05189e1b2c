//! The chaos workload: a writer of resources and versions, a deployer that starts, pauses, resumes,
//! rolls back and aborts deployments over a simulated fleet, group deployments across two strong
//! consumers, a pulser that sometimes falls silent, and an observer reading deployments from random
//! servers — all recording into the history.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use convoy_actors::domain::{DeploymentView, NodeView};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use tokio::sync::watch;

use super::history::{now_ms, Acked, History, Observation, Pulse, TargetSample};
use convoy_node::client::{ApiClient, ClientError};
use convoy_node::sim::node::Behaviour;
use convoy_node::sim::{node_ids, Fleet};

/// The servers' request timeout: a failed request may still be applied this long after.
pub const REQUEST_TIMEOUT_MS: u64 = 10_000;

/// The deployment being driven, shared with the pulser and the observer.
#[derive(Clone, Debug, Default)]
pub struct Current {
    /// Its id.
    pub id: Option<String>,
    /// It has a pulse interval.
    pub coordinated: bool,
}

/// State shared by the workload tasks.
pub struct Shared {
    /// Where everything is recorded.
    pub history: Arc<History>,
    /// The deployment being driven.
    pub current: Mutex<Current>,
    /// Every deployment started.
    pub deployments: Mutex<Vec<String>>,
    /// Every group deployment started.
    pub groups: Mutex<Vec<String>>,
    /// Every server's HTTP address.
    pub servers: Vec<String>,
    /// The versions of `mr` its self-reporting nodes fail to install (`fleet_ops::hold_back`).
    pub bad: Mutex<std::collections::BTreeSet<u64>>,
}

fn stopped(stop: &watch::Receiver<bool>) -> bool {
    *stop.borrow()
}

async fn pause_for(stop: &mut watch::Receiver<bool>, d: Duration) {
    let _ = tokio::time::timeout(d, stop.wait_for(|s| *s)).await;
}

/// Creates resources `w-<seed>-<k>` and publishes versions of them until stopped.
pub async fn writer(
    shared: Arc<Shared>,
    api: Arc<ApiClient>,
    seed: u64,
    mut stop: watch::Receiver<bool>,
) {
    let mut k = 0u64;
    let mut last: Option<String> = None;
    while !stopped(&stop) {
        shared.history.operation();
        let sent_ms = now_ms();
        if let (Some(name), true) = (&last, k % 3 == 2) {
            let path = format!("/v1/resources/{name}/versions");
            if let Ok(answer) = api
                .post::<_, Value>(&path, &json!({"label": format!("w{k}")}))
                .await
            {
                if let Some(version) = answer["version"].as_u64() {
                    shared.history.ack(Acked::Version {
                        resource: name.clone(),
                        version,
                        sent_ms,
                        acked_ms: now_ms(),
                    });
                }
            }
        } else {
            let name = format!("w-{seed}-{k}");
            let created = api
                .post::<_, Value>("/v1/resources", &json!({"name": name}))
                .await;
            let exists = matches!(&created, Err(ClientError::Api { status: 409, .. }));
            if created.is_ok() || exists {
                shared.history.ack(Acked::Resource {
                    name: name.clone(),
                    sent_ms,
                    acked_ms: now_ms(),
                });
                last = Some(name);
            }
        }
        k += 1;
        pause_for(&mut stop, Duration::from_millis(40)).await;
    }
}

/// Creates `resource` at version 1 and consumer `consumer` of `nodes` simulated nodes running it.
async fn fleet_at_v1(
    api: &Arc<ApiClient>,
    consumer: &str,
    resource: &str,
    nodes: usize,
    behaviour: Behaviour,
) -> anyhow::Result<(Vec<String>, Fleet)> {
    api.post::<_, Value>("/v1/resources", &json!({"name": resource}))
        .await
        .with_context(|| format!("creating {resource}"))?;
    api.post::<_, Value>(&format!("/v1/resources/{resource}/versions"), &json!({}))
        .await
        .with_context(|| format!("publishing {resource} v1"))?;
    let ids = node_ids(consumer, nodes);
    api.post::<_, Value>("/v1/consumers", &json!({"name": consumer, "nodes": ids}))
        .await
        .with_context(|| format!("creating consumer {consumer}"))?;
    let fleet = Fleet::spawn(
        api.clone(),
        ids.clone(),
        behaviour,
        Duration::from_millis(200),
        Some((resource.to_string(), 1)),
    );
    Ok((ids, fleet))
}

/// Creates `app` with version 1 and a consumer of `nodes` simulated nodes running it, and waits until
/// every node has reported.
pub async fn setup_fleet(api: Arc<ApiClient>, nodes: usize) -> anyhow::Result<Fleet> {
    // Before any deployment: every deployment of the cluster then admits within it (checked:
    // `check_limits::fleet_installs`).
    api.put::<_, Value>(
        "/v1/cluster/limits",
        &json!({"max_concurrent_installs": super::check_limits::FLEET_INSTALLS}),
    )
    .await
    .context("setting the fleet-wide limits")?;
    let behaviour = Behaviour {
        download: Duration::from_millis(100),
        install: Duration::from_millis(300),
        fail_rate: 0.03,
    };
    let (ids, fleet) = fleet_at_v1(&api, "fleet", "app", nodes, behaviour).await?;
    // Every deployment of `fleet` then admits within it (checked: `check::budget`).
    api.put::<_, Value>(
        "/v1/consumers/fleet/budget",
        &json!({"max_unavailable": super::check::FLEET_BUDGET}),
    )
    .await
    .context("setting fleet's disruption budget")?;
    for id in &ids {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let node: Result<Value, _> = api.get(&format!("/v1/nodes/{id}")).await;
            if node.is_ok_and(|n| n["resources"]["app"]["current"].as_u64().is_some()) {
                break;
            }
            anyhow::ensure!(
                std::time::Instant::now() < deadline,
                "node {id} never reported"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(fleet)
}

fn random_spec(rng: &mut StdRng, version: u64) -> Value {
    let strategy = match rng.gen_range(0..3) {
        0 => {
            json!({"rolling": {"install_window": rng.gen_range(1..4), "download_window": rng.gen_range(1..4)}})
        }
        1 => json!({"batch": {"sizes": [rng.gen_range(1..4), rng.gen_range(2..6)]}}),
        _ => json!({"all_at_once": {}}),
    };
    let mut spec = json!({"consumer": "fleet", "resource": "app", "version": version,
        "strategy": strategy, "rollback_on_failure": rng.gen_bool(0.7)});
    if rng.gen_bool(0.5) {
        spec["pulse_interval_ms"] = json!(1_500);
    }
    spec
}

/// Publishes versions of `app` and drives a deployment of each, steering it at random.
pub async fn deployer(
    shared: Arc<Shared>,
    api: Arc<ApiClient>,
    seed: u64,
    mut stop: watch::Receiver<bool>,
) {
    let mut rng = StdRng::seed_from_u64(seed ^ 0xdeb1);
    while !stopped(&stop) {
        shared.history.operation();
        let sent_ms = now_ms();
        let Ok(published) = api
            .post::<_, Value>("/v1/resources/app/versions", &json!({}))
            .await
        else {
            pause_for(&mut stop, Duration::from_millis(300)).await;
            continue;
        };
        let Some(version) = published["version"].as_u64() else {
            continue;
        };
        shared.history.ack(Acked::Version {
            resource: "app".into(),
            version,
            sent_ms,
            acked_ms: now_ms(),
        });
        let spec = random_spec(&mut rng, version);
        let id = match api.post::<_, Value>("/v1/deployments", &spec).await {
            Ok(started) => started["id"].as_str().map(String::from),
            Err(_) => None,
        };
        let id = match id {
            Some(id) => Some(id),
            None => active_deployment(&api).await,
        };
        let Some(id) = id else {
            pause_for(&mut stop, Duration::from_millis(300)).await;
            continue;
        };
        if !shared.deployments.lock().unwrap().contains(&id) {
            shared.deployments.lock().unwrap().push(id.clone());
        }
        let coordinated = match api.get::<Value>(&format!("/v1/deployments/{id}")).await {
            Ok(view) => view["settings"]["pulse_interval_ms"].is_u64(),
            Err(_) => spec.get("pulse_interval_ms").is_some(),
        };
        *shared.current.lock().unwrap() = Current {
            id: Some(id.clone()),
            coordinated,
        };
        steer(&shared, &api, &id, &mut rng, &mut stop).await;
    }
}

/// The fleet's active deployment, if any: a start that failed in flight may still have created one
/// (or an earlier one is still running), and it must be driven to its end too.
async fn active_deployment(api: &ApiClient) -> Option<String> {
    let list: Value = api
        .get("/v1/deployments?consumer=fleet&status=active")
        .await
        .ok()?;
    list.as_array()?.first()?["id"].as_str().map(String::from)
}

/// Steers deployment `id` at random until it ends (aborting it after 25 s).
async fn steer(
    shared: &Shared,
    api: &ApiClient,
    id: &str,
    rng: &mut StdRng,
    stop: &mut watch::Receiver<bool>,
) {
    let deadline = std::time::Instant::now() + Duration::from_secs(25);
    while !stopped(stop) {
        pause_for(stop, Duration::from_millis(rng.gen_range(400..1_000))).await;
        let Ok(view) = api.get::<Value>(&format!("/v1/deployments/{id}")).await else {
            continue;
        };
        let status = view["status"].as_str().unwrap_or("");
        if !(status.starts_with("ROLL_") || status.starts_with("ROLLING_")) {
            return;
        }
        let op = if std::time::Instant::now() > deadline {
            Some("abort")
        } else if status.ends_with("_PAUSED") && view["paused_by"] == "user" {
            rng.gen_bool(0.5).then_some("resume")
        } else {
            match rng.gen_range(0..100) {
                0..=7 => Some("pause"),
                8..=10 => Some("rollback"),
                11..=12 => Some("abort"),
                _ => None,
            }
        };
        if let Some(op) = op {
            shared.history.operation();
            let _ = api
                .post::<_, Value>(&format!("/v1/deployments/{id}/{op}"), &json!({}))
                .await;
        }
    }
}

/// Pulses the current coordinated deployment every 300 ms, now and then falling silent for 2.5 s.
pub async fn pulser(
    shared: Arc<Shared>,
    api: Arc<ApiClient>,
    seed: u64,
    mut stop: watch::Receiver<bool>,
) {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x9017);
    while !stopped(&stop) {
        pause_for(&mut stop, Duration::from_millis(300)).await;
        if rng.gen_bool(0.03) {
            pause_for(&mut stop, Duration::from_millis(2_500)).await;
        }
        let current = shared.current.lock().unwrap().clone();
        let (Some(id), true) = (current.id, current.coordinated) else {
            continue;
        };
        shared.history.operation();
        let sent_ms = now_ms();
        let answer = api
            .post::<_, Value>(&format!("/v1/deployments/{id}/pulse"), &json!({}))
            .await;
        let latest_ms = match answer {
            Ok(_) => now_ms(),
            Err(_) => now_ms() + REQUEST_TIMEOUT_MS,
        };
        shared.history.pulse(Pulse {
            deployment: id,
            sent_ms,
            latest_ms,
        });
    }
}

/// Reads the current deployment from a random server every 100 ms, mostly linearizably.
pub async fn observer(
    shared: Arc<Shared>,
    api: Arc<ApiClient>,
    seed: u64,
    mut stop: watch::Receiver<bool>,
) {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x0b5e);
    let clients: Vec<(String, ApiClient)> = shared
        .servers
        .iter()
        .filter_map(|s| {
            api.of(s)
                .ok()
                .map(|c| (s.clone(), c.with_patience(Duration::ZERO)))
        })
        .collect();
    while !stopped(&stop) {
        pause_for(&mut stop, Duration::from_millis(100)).await;
        let Some(id) = shared.current.lock().unwrap().id.clone() else {
            continue;
        };
        let (server, client) = &clients[rng.gen_range(0..clients.len())];
        let consistent = rng.gen_bool(0.7);
        let path = if consistent {
            format!("/v1/deployments/{id}?consistent=true")
        } else {
            format!("/v1/deployments/{id}")
        };
        let start_ms = now_ms();
        let read =
            tokio::time::timeout(Duration::from_secs(3), client.get::<DeploymentView>(&path)).await;
        if let Ok(Ok(view)) = read {
            if view.status.is_active() && !view.nodes.is_empty() && rng.gen_bool(0.3) {
                let node = &view.nodes[rng.gen_range(0..view.nodes.len())];
                sample_target(&shared, client, &view, &node.id, node.from_version).await;
            }
            shared.history.observe(Observation {
                start_ms,
                end_ms: now_ms(),
                consistent,
                server: server.clone(),
                view,
            });
        }
    }
}

/// Reads `node` and, if that same read still lists `view`'s deployment as active on it, records the
/// version it is targeted at.
async fn sample_target(
    shared: &Shared,
    client: &ApiClient,
    view: &DeploymentView,
    node: &str,
    from_version: Option<u64>,
) {
    let Ok(Ok(n)) = tokio::time::timeout(
        Duration::from_secs(3),
        client.get::<NodeView>(&format!("/v1/nodes/{node}")),
    )
    .await
    else {
        return;
    };
    let (Some(target), true) = (
        n.targets.get(&view.resource),
        n.deployments.contains(&view.id),
    ) else {
        return;
    };
    shared.history.targets.lock().unwrap().push(TargetSample {
        node: node.to_string(),
        deployment: view.id.to_string(),
        version: view.version,
        from_version,
        target: target.version,
    });
}

/// Two strong consumers for group deployments: `ga` runs resource `ga`, `gb` runs `gb`; returns their
/// simulated fleets.
pub async fn setup_group_fleets(api: Arc<ApiClient>, nodes: usize) -> anyhow::Result<Vec<Fleet>> {
    let mut fleets = Vec::new();
    for name in ["ga", "gb"] {
        let behaviour = Behaviour {
            download: Duration::from_millis(50),
            install: Duration::from_millis(150),
            fail_rate: 0.02,
        };
        fleets.push(fleet_at_v1(&api, name, name, nodes, behaviour).await?.1);
    }
    api.post::<_, Value>(
        "/v1/groups",
        &json!({"name": "pair", "members": [{"consumer": "gb", "resource": "gb"},
                                           {"consumer": "ga", "resource": "ga"}]}),
    )
    .await
    .context("creating group pair")?;
    Ok(fleets)
}

async fn subscribe(api: &ApiClient, name: &str, pin: Option<u64>) -> Result<Value, ClientError> {
    let mut body = json!({"mode": "strong", "strategy": {"rolling": {"install_window": 2, "download_window": 2}}});
    if let Some(pin) = pin {
        body["pin"] = json!(pin);
    }
    api.put(&format!("/v1/consumers/{name}/subscriptions/{name}"), &body)
        .await
}

/// Rolls `ga` then `gb` (whose new version needs the new `ga`) as one group deployment after
/// another: pinned while the versions are published, unpinned once the group deployment holds them.
pub async fn grouper(shared: Arc<Shared>, api: Arc<ApiClient>, mut stop: watch::Receiver<bool>) {
    let mut version = 1u64;
    while !stopped(&stop) {
        shared.history.operation();
        let pinned = subscribe(&api, "ga", Some(version)).await.is_ok()
            && subscribe(&api, "gb", Some(version)).await.is_ok();
        if !pinned {
            pause_for(&mut stop, Duration::from_millis(500)).await;
            continue;
        }
        let Ok(a) = api
            .post::<_, Value>("/v1/resources/ga/versions", &json!({}))
            .await
        else {
            continue;
        };
        let Some(va) = a["version"].as_u64() else {
            continue;
        };
        let dependency = json!({"depends_on": [{"resource": "ga", "version": va}]});
        let Ok(b) = api
            .post::<_, Value>("/v1/resources/gb/versions", &dependency)
            .await
        else {
            continue;
        };
        let Some(vb) = b["version"].as_u64() else {
            continue;
        };
        let body = json!({"group": "pair", "versions": {"ga": va, "gb": vb}});
        let Ok(started) = api.post::<_, Value>("/v1/group-deployments", &body).await else {
            continue;
        };
        let Some(gid) = started["id"].as_str().map(String::from) else {
            continue;
        };
        shared.groups.lock().unwrap().push(gid.clone());
        let _ = subscribe(&api, "ga", None).await;
        let _ = subscribe(&api, "gb", None).await;
        version = va.max(vb);
        let deadline = std::time::Instant::now() + Duration::from_secs(25);
        while !stopped(&stop) {
            pause_for(&mut stop, Duration::from_millis(500)).await;
            let status = api
                .get::<Value>(&format!("/v1/group-deployments/{gid}"))
                .await
                .map(|g| g["status"].as_str().unwrap_or("").to_string());
            if status.as_deref().is_ok_and(|s| s != "RUNNING") {
                break;
            }
            if std::time::Instant::now() > deadline {
                let _ = api
                    .post::<_, Value>(&format!("/v1/group-deployments/{gid}/abort"), &json!({}))
                    .await;
                break;
            }
        }
    }
}
