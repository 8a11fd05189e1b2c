//! One seeded chaos run: start a local cluster with fault injection, run the workload while the
//! schedule's faults strike, heal, let the servers converge, then collect the final states and check.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use convoy_actors::domain::{DeploymentView, GroupDeploymentView, ResourceView};
use serde_json::Value;
use tokio::sync::watch;

use super::check::{self, Violation};
use super::check_fleet;
use super::check_limits;
use super::faults::{schedule, FaultKind, Injector};
use super::fleet_ops;
use super::history::{FaultRecord, History};
use super::workload::{self, Current, Shared};
use crate::netns::{NetLab, MAX_SERVERS};
use convoy_node::client::ApiClient;
use convoy_node::local::{wait_leader, Cluster, ClusterOptions, Placement};

/// What a node's reactivation may take to show in a linearizable read: the commit of its report's
/// change, plus the leader's liveness tick.
const LIVENESS_GRACE_MS: u64 = 2_000;

/// What one seed did and found.
#[derive(Debug)]
pub struct SeedReport {
    /// The seed that draws the fault schedule and the workload's random choices.
    pub seed: u64,
    /// Every fault injected, with when it began and when it was healed.
    pub faults: Vec<FaultRecord>,
    /// Writes the cluster acknowledged, each checked against every server's final state.
    pub acked: usize,
    /// Operations the workload attempted (writes, pulses, steering), answered or not.
    pub operations: u64,
    /// Distinct deployments the workload started (or found active), read again at the end.
    pub deployments: usize,
    /// Group deployments started.
    pub groups: usize,
    /// Deployment reads that got an answer, checked against the final states and the pulses.
    pub observations: usize,
    /// Node targets sampled during deployments.
    pub targets: usize,
    /// Fleet samples: node targets outside deployments, liveness reads, and bans (retracted or
    /// held-back versions) they were checked against.
    pub fleet: (usize, usize, usize),
    /// Broken rules the checks found; empty when the seed passes.
    pub violations: Vec<Violation>,
    /// Per leader kill: ms to the first acknowledged write sent after it, and to the next
    /// deployment progress (an event stamped after it).
    pub recoveries: Vec<(Option<u64>, Option<u64>)>,
    /// States the servers' replayed logs went through, each judged by `check_state`.
    pub replayed_states: usize,
}

/// How a run is shaped.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// How long the workload and the faults last.
    pub duration: Duration,
    /// Fault kinds to draw from.
    pub kinds: Vec<FaultKind>,
    /// Simulated nodes in the fleet's consumer (`--nodes`).
    pub nodes: usize,
    /// Print each fault as it strikes.
    pub verbose: bool,
    /// Each server in its own network namespace; partitions with nftables.
    pub netns: bool,
}

/// Runs seed `seed` with its data dirs and logs under `dir`.
pub async fn run_seed(seed: u64, config: &RunConfig, dir: &Path) -> anyhow::Result<SeedReport> {
    let netlab = if config.netns {
        Some(Arc::new(NetLab::create(MAX_SERVERS)?))
    } else {
        None
    };
    let options = ClusterOptions {
        fault_injection: true,
        node_timeout_ms: Some(fleet_ops::NODE_TIMEOUT_MS),
        snapshot_every: 500,
        snapshot_max_every: Some(500),
        placement: netlab.clone().map(|lab| lab as Arc<dyn Placement>),
        ..ClusterOptions::default()
    }
    .with_auth();
    let cluster = Cluster::spawn_in(dir, options).context("starting the cluster")?;
    cluster.wait_token_known(Duration::from_secs(30)).await?;
    let servers = cluster.http_addrs();
    let api = Arc::new(cluster.api_client().with_patience(Duration::from_secs(3)));
    let cluster = Arc::new(Mutex::new(cluster));
    wait_leader(&api, None, Duration::from_secs(30)).await?;
    let fleet = workload::setup_fleet(api.clone(), config.nodes).await?;
    let group_fleets = workload::setup_group_fleets(api.clone(), 4).await?;
    let multi = fleet_ops::setup(&api, 3).await?;
    let history = Arc::new(History::default());
    let shared = Arc::new(Shared {
        history: history.clone(),
        current: Mutex::new(Current::default()),
        deployments: Mutex::new(Vec::new()),
        groups: Mutex::new(Vec::new()),
        servers: servers.clone(),
        bad: Mutex::default(),
    });
    let (stop, rx) = watch::channel(false);
    let tasks = vec![
        tokio::spawn(workload::writer(
            shared.clone(),
            api.clone(),
            seed,
            rx.clone(),
        )),
        tokio::spawn(workload::deployer(
            shared.clone(),
            api.clone(),
            seed,
            rx.clone(),
        )),
        tokio::spawn(workload::pulser(
            shared.clone(),
            api.clone(),
            seed,
            rx.clone(),
        )),
        tokio::spawn(workload::observer(
            shared.clone(),
            api.clone(),
            seed,
            rx.clone(),
        )),
        tokio::spawn(workload::grouper(shared.clone(), api.clone(), rx.clone())),
        tokio::spawn(fleet_ops::reporters(
            shared.clone(),
            api.clone(),
            multi.clone(),
            rx.clone(),
        )),
        tokio::spawn(fleet_ops::operator(
            shared.clone(),
            api.clone(),
            seed,
            rx.clone(),
        )),
        tokio::spawn(fleet_ops::sampler(
            shared.clone(),
            api.clone(),
            multi,
            seed,
            rx.clone(),
        )),
    ];

    let mut injector = Injector {
        cluster: cluster.clone(),
        netlab,
        history: history.clone(),
        next_id: 4,
    };
    let started = Instant::now();
    for fault in schedule(seed, config.duration, &config.kinds) {
        if let Some(wait) = fault.at.checked_sub(started.elapsed()) {
            tokio::time::sleep(wait).await;
        }
        if let Err(e) = injector.run(&fault).await {
            tracing::warn!(seed, ?fault, "fault not injected cleanly: {e:#}");
        }
        if config.verbose {
            if let Some(f) = history.faults.lock().unwrap().last() {
                println!(
                    "  seed {seed} {:>6.1}s {} (held {} ms)",
                    fault.at.as_secs_f64(),
                    f.what,
                    f.healed_ms.saturating_sub(f.at_ms)
                );
            }
        }
    }
    if let Some(rest) = config.duration.checked_sub(started.elapsed()) {
        tokio::time::sleep(rest).await;
    }
    let _ = stop.send(true);
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(15), task).await;
    }
    fleet.stop().await;
    for f in group_fleets {
        f.stop().await;
    }
    injector.heal_all().await?;
    wait_leader(&api, None, Duration::from_secs(30)).await?;

    let mut violations = Vec::new();
    let servers = cluster.lock().unwrap().http_addrs();
    violations.extend(converge_and_compare(&api, &servers).await);
    violations.extend(super::mistakes::no_panics(&cluster.lock().unwrap()));
    violations.extend(super::mistakes::from_faults(
        &history.faults.lock().unwrap(),
    ));
    let acked = history.acked.lock().unwrap().clone();
    for server in &servers {
        let resources = final_resources(&api, server).await?;
        violations.extend(check::no_lost_writes(&acked, server, &resources));
    }
    let ids = shared.deployments.lock().unwrap().clone();
    let mut finals: Vec<DeploymentView> = Vec::new();
    for id in &ids {
        finals.push(
            api.get(&format!("/v1/deployments/{id}?consistent=true"))
                .await
                .with_context(|| format!("reading {id} at the end"))?,
        );
    }
    let groups = shared.groups.lock().unwrap().clone();
    for gid in &groups {
        let group: GroupDeploymentView = api
            .get(&format!("/v1/group-deployments/{gid}?consistent=true"))
            .await
            .with_context(|| format!("reading {gid} at the end"))?;
        let mut views = BTreeMap::new();
        for id in group.steps.iter().flatten().filter_map(|i| i.deployment) {
            let view: DeploymentView = api
                .get(&format!("/v1/deployments/{id}?consistent=true"))
                .await
                .with_context(|| format!("reading {id} of {gid}"))?;
            views.insert(id.to_string(), view.clone());
            finals.push(view);
        }
        violations.extend(check::group_order(&group, &views));
    }
    let observations = history.observations.lock().unwrap().clone();
    let pulses = history.pulses.lock().unwrap().clone();
    violations.extend(check::all(&observations, &finals, &pulses));
    violations.extend(check_limits::fleet_installs(
        &finals,
        check_limits::FLEET_INSTALLS,
    ));
    violations.extend(check::deployment_targets(&history.targets.lock().unwrap()));
    violations.extend(check_fleet::no_banned_targets(
        &history.node_targets.lock().unwrap(),
        &history.bans.lock().unwrap(),
    ));
    violations.extend(check_fleet::reporting_nodes_stay_active(
        &history.liveness.lock().unwrap(),
        &history.reports.lock().unwrap(),
        fleet_ops::NODE_TIMEOUT_MS,
        LIVENESS_GRACE_MS,
    ));
    let faults = history.faults.lock().unwrap().clone();
    let recoveries = recoveries(&faults, &acked, &finals);
    let servers_ran = {
        let mut cluster = cluster.lock().unwrap();
        let servers_ran = cluster.running();
        cluster.stop();
        servers_ran
    };
    // Every state the servers' logs went through, judged by the simulator's state checkers.
    let replayed = super::replayed::check(dir, &servers_ran).await;
    violations.extend(replayed.violations);
    let operations = *history.operations.lock().unwrap();
    let targets = history.targets.lock().unwrap().len();
    let fleet = (
        history.node_targets.lock().unwrap().len(),
        history.liveness.lock().unwrap().len(),
        history.bans.lock().unwrap().len(),
    );
    Ok(SeedReport {
        seed,
        faults,
        acked: acked.len(),
        operations,
        deployments: ids.len(),
        groups: groups.len(),
        observations: observations.len(),
        targets,
        fleet,
        violations,
        recoveries,
        replayed_states: replayed.states,
    })
}

/// Waits until every server has applied the same index (twice in a row), then compares digests.
async fn converge_and_compare(api: &ApiClient, servers: &[String]) -> Vec<Violation> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last: Vec<(String, u64, String)> = Vec::new();
    while Instant::now() < deadline {
        let mut digests = Vec::new();
        for server in servers {
            let Ok(client) = api.of(server) else {
                continue;
            };
            if let Ok(d) = client.get::<Value>("/v1/cluster/digest").await {
                digests.push((
                    server.clone(),
                    d["last_applied"].as_u64().unwrap_or(0),
                    d["sha256"].as_str().unwrap_or("").to_string(),
                ));
            }
        }
        let indexes: BTreeSet<u64> = digests.iter().map(|d| d.1).collect();
        if digests.len() == servers.len() && indexes.len() == 1 {
            return check::replicas_identical(&digests);
        }
        last = digests;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    vec![Violation {
        rule: "no-convergence",
        detail: format!("servers did not reach one applied index within 60 s: {last:?}"),
    }]
}

async fn final_resources(
    api: &ApiClient,
    server: &str,
) -> anyhow::Result<BTreeMap<String, BTreeSet<u64>>> {
    let client = api.of(server)?.with_patience(Duration::from_secs(5));
    let list: Vec<ResourceView> = client.get("/v1/resources").await?;
    Ok(list
        .into_iter()
        .map(|r| (r.name, r.versions.iter().map(|v| v.version).collect()))
        .collect())
}

fn recoveries(
    faults: &[FaultRecord],
    acked: &[super::history::Acked],
    finals: &[DeploymentView],
) -> Vec<(Option<u64>, Option<u64>)> {
    faults
        .iter()
        .filter(|f| f.leader_kill)
        .map(|f| {
            let write = acked
                .iter()
                .filter(|a| a.sent_ms() >= f.at_ms)
                .map(|a| a.acked_ms() - f.at_ms)
                .min();
            let progress = finals
                .iter()
                .flat_map(|d| d.events.iter())
                .filter(|e| e.at > f.at_ms)
                .map(|e| e.at - f.at_ms)
                .min();
            (write, progress)
        })
        .collect()
}
