//! `convoy sim`: a simulated fleet of N virtual agents in one process, speaking the real HTTP API
//! (`POST /v1/nodes/{id}/report`), for demos, tests and benchmarks.

pub mod node;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use rand::Rng;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::client::ApiClient;
use node::{Behaviour, SimNode, Target};

/// `convoy sim` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// Servers, comma-separated; the next is tried when one is down.
    #[arg(long, env = "CONVOY_SERVER", default_value = "127.0.0.1:8081")]
    pub server: String,
    /// How many virtual nodes.
    #[arg(long, default_value_t = 10)]
    pub nodes: usize,
    /// The consumer they form (created with these nodes if it does not exist).
    #[arg(long)]
    pub consumer: String,
    /// Node ids are `<prefix>-<n>`; default: the consumer's name.
    #[arg(long)]
    pub prefix: Option<String>,
    /// Probability that an install fails.
    #[arg(long, default_value_t = 0.0)]
    pub fail_rate: f64,
    /// Simulated install time in ms.
    #[arg(long, default_value_t = 500)]
    pub install_ms: u64,
    /// Simulated download time in ms.
    #[arg(long, default_value_t = 200)]
    pub download_ms: u64,
    /// How often each node reports, in ms.
    #[arg(long, default_value_t = 250)]
    pub interval_ms: u64,
    /// Nodes start already running this version, as `resource=version`.
    #[arg(long)]
    pub running: Option<String>,
}

/// Counters a fleet keeps while it runs.
#[derive(Debug, Default)]
pub struct FleetStats {
    /// Reports answered.
    pub reports: AtomicU64,
    /// Reports refused or failed.
    pub errors: AtomicU64,
}

/// A running simulated fleet; stops when dropped or on [`Fleet::stop`].
pub struct Fleet {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    /// Counters.
    pub stats: Arc<FleetStats>,
}

impl Fleet {
    /// Starts one task per node id, reporting every `interval`.
    pub fn spawn(
        client: Arc<ApiClient>,
        nodes: Vec<String>,
        behaviour: Behaviour,
        interval: Duration,
        running: Option<(String, u64)>,
    ) -> Fleet {
        let (stop, rx) = watch::channel(false);
        let stats = Arc::new(FleetStats::default());
        let tasks = nodes
            .into_iter()
            .enumerate()
            .map(|(i, id)| {
                let sim = match &running {
                    Some((resource, version)) => SimNode::running(resource, *version),
                    None => SimNode::default(),
                };
                // Spread the nodes' first reports over one interval.
                let offset = interval.mul_f64((i % 64) as f64 / 64.0);
                tokio::spawn(run_node(
                    client.clone(),
                    id,
                    sim,
                    behaviour,
                    interval,
                    offset,
                    rx.clone(),
                    stats.clone(),
                ))
            })
            .collect();
        Fleet { stop, tasks, stats }
    }

    /// Stops every node and waits for them.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

#[derive(Debug, Deserialize)]
struct ReportAnswer {
    targets: BTreeMap<String, Target>,
}

#[allow(clippy::too_many_arguments)]
async fn run_node(
    client: Arc<ApiClient>,
    id: String,
    mut sim: SimNode,
    behaviour: Behaviour,
    interval: Duration,
    offset: Duration,
    mut stop: watch::Receiver<bool>,
    stats: Arc<FleetStats>,
) {
    let start = Instant::now();
    let mut targets = BTreeMap::new();
    tokio::time::sleep(offset).await;
    loop {
        let roll: f64 = rand::thread_rng().gen();
        sim.step(&targets, start.elapsed(), &behaviour, roll);
        let body = json!({"active": true, "resources": sim.report()});
        match client
            .post::<_, ReportAnswer>(&format!("/v1/nodes/{id}/report"), &body)
            .await
        {
            Ok(answer) => {
                targets = answer.targets;
                stats.reports.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                stats.errors.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(node = %id, error = %e, "report failed");
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = stop.changed() => return,
        }
    }
}

/// Parses `resource=version`.
pub fn parse_running(spec: &str) -> anyhow::Result<(String, u64)> {
    let (resource, version) = spec
        .split_once('=')
        .with_context(|| format!("--running {spec:?}: expected resource=version"))?;
    let version = version
        .parse()
        .with_context(|| format!("--running {spec:?}: version must be a number"))?;
    Ok((resource.to_string(), version))
}

/// Node ids `<prefix>-0 .. <prefix>-(n-1)`.
pub fn node_ids(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i}")).collect()
}

/// Runs `convoy sim` until Ctrl-C.
pub fn run(args: SimArgs) -> anyhow::Result<()> {
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        let client = Arc::new(ApiClient::new(&args.server)?);
        let prefix = args.prefix.clone().unwrap_or_else(|| args.consumer.clone());
        let nodes = node_ids(&prefix, args.nodes);
        let running = args.running.as_deref().map(parse_running).transpose()?;
        let exists = client
            .get::<serde_json::Value>(&format!("/v1/consumers/{}", args.consumer))
            .await
            .is_ok();
        if !exists {
            client
                .post::<_, serde_json::Value>(
                    "/v1/consumers",
                    &json!({"name": args.consumer, "nodes": nodes}),
                )
                .await
                .with_context(|| format!("creating consumer {}", args.consumer))?;
            eprintln!(
                "created consumer {} with {} nodes",
                args.consumer,
                nodes.len()
            );
        }
        let behaviour = Behaviour {
            download: Duration::from_millis(args.download_ms),
            install: Duration::from_millis(args.install_ms),
            fail_rate: args.fail_rate,
        };
        let fleet = Fleet::spawn(
            client,
            nodes,
            behaviour,
            Duration::from_millis(args.interval_ms),
            running,
        );
        eprintln!(
            "simulating {} nodes of {}; Ctrl-C to stop",
            args.nodes, args.consumer
        );
        let stats = fleet.stats.clone();
        let mut ticker = tokio::time::interval(Duration::from_secs(5));
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => break,
                _ = ticker.tick() => eprintln!(
                    "reports: {} ok, {} failed",
                    stats.reports.load(Ordering::Relaxed),
                    stats.errors.load(Ordering::Relaxed)
                ),
            }
        }
        fleet.stop().await;
        Ok(())
    })
}
