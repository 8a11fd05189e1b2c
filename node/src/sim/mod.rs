//! `convoy sim`: a simulated fleet of N virtual agents in one process, speaking the real HTTP API
//! (`POST /v1/nodes/{id}/report`), for demos, tests and benchmarks.

pub mod metrics;
pub mod node;

use convoy_time::SharedClock;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use rand::Rng;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::client::ApiClient;
pub use node::{Behaviour, Phase, SimNode, Target, Work};

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
    #[arg(long, default_value_t = 500, value_parser = convoy_time::parse_millis)]
    pub install_ms: u64,
    /// Simulated download time in ms.
    #[arg(long, default_value_t = 200, value_parser = convoy_time::parse_millis)]
    pub download_ms: u64,
    /// How often each node reports, in ms.
    #[arg(long, default_value_t = 250, value_parser = convoy_time::parse_millis)]
    pub interval_ms: u64,
    /// Nodes start already running this version, as `resource=version`.
    #[arg(long)]
    pub running: Option<String>,
    /// PEM CA to trust for `https://` servers.
    #[arg(long, env = "CONVOY_CA_FILE")]
    pub ca_file: Option<std::path::PathBuf>,
    /// File holding the API token the nodes report with (an `agent` token covering their ids, or an
    /// operator's to create the consumer too).
    #[arg(long, env = "CONVOY_TOKEN_FILE")]
    pub token_file: Option<std::path::PathBuf>,
    /// Serve each node's error ratio on this address (`GET /metrics`, `convoy_sim_error_ratio{node,
    /// resource, version}`) for Prometheus to scrape and metric analysis to judge.
    #[arg(long)]
    pub metrics_addr: Option<String>,
    /// With --metrics-addr: nodes running this version, as `resource=version`, report --bad-error-ratio.
    #[arg(long)]
    pub bad_version: Option<String>,
    /// With --metrics-addr: the error ratio of nodes on the bad version.
    #[arg(long, default_value_t = 0.2)]
    pub bad_error_ratio: f64,
    /// With --metrics-addr: the error ratio of every other node.
    #[arg(long, default_value_t = 0.001)]
    pub error_ratio: f64,
}

/// Counters a fleet keeps while it runs.
#[derive(Debug, Default)]
pub struct FleetStats {
    /// Reports the server answered with targets, summed over every node of the fleet.
    pub reports: AtomicU64,
    /// Reports refused or failed.
    pub errors: AtomicU64,
}

/// One piece of work as the fleet saw it: from the answer that allowed it to the step that ended it.
#[derive(Clone, Debug)]
pub struct Span {
    /// Id of the simulated node that did the work.
    pub node: String,
    /// The resource worked on.
    pub resource: String,
    /// The version worked on.
    pub version: u64,
    /// What kind of work.
    pub phase: Phase,
    /// When it started (wall-clock ms, comparable with the leader's event times).
    pub start: u64,
    /// When it ended; `None` while running.
    pub end: Option<u64>,
}

/// What a fleet simulates beyond its nodes' speed: chosen failures, switch-back time, spans.
#[derive(Clone, Debug, Default)]
pub struct FleetPlan {
    /// Installs that fail: (node id, version).
    pub failing: BTreeSet<(String, u64)>,
    /// Time to switch back to a version installed before (default: at once).
    pub switch_back: Duration,
    /// Keep every [`Span`] (tests; a long-running fleet keeps none).
    pub record_spans: bool,
    /// Keep what each node runs here (for `--metrics-addr`); `None`: not kept.
    pub currents: Option<metrics::Currents>,
}

/// A running simulated fleet; stops when dropped or on [`Fleet::stop`].
pub struct Fleet {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    /// Reports answered and reports refused or failed, summed over the fleet's nodes, live.
    pub stats: Arc<FleetStats>,
    spans: Arc<Mutex<Vec<Span>>>,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
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
        Self::spawn_with(
            client,
            nodes,
            behaviour,
            interval,
            running,
            FleetPlan::default(),
        )
    }

    /// [`Fleet::spawn`] with chosen failures, a switch-back time and span recording.
    pub fn spawn_with(
        client: Arc<ApiClient>,
        nodes: Vec<String>,
        behaviour: Behaviour,
        interval: Duration,
        running: Option<(String, u64)>,
        plan: FleetPlan,
    ) -> Fleet {
        let (stop, rx) = watch::channel(false);
        let stats = Arc::new(FleetStats::default());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let record = plan.record_spans.then(|| spans.clone());
        let tasks = nodes
            .into_iter()
            .enumerate()
            .map(|(i, id)| {
                let sim = match &running {
                    Some((resource, version)) => SimNode::running(resource, *version),
                    None => SimNode::default(),
                };
                let failing = plan
                    .failing
                    .iter()
                    .filter(|(node, _)| *node == id)
                    .map(|(_, v)| *v);
                let sim = sim.with_switch_back(plan.switch_back).failing(failing);
                // Spread the nodes' first reports over one interval.
                let offset = interval.mul_f64((i % 64) as f64 / 64.0);
                let node = NodeTask {
                    client: client.clone(),
                    id,
                    behaviour,
                    interval,
                    stats: stats.clone(),
                    spans: record.clone(),
                    clock: convoy_time::system(),
                    currents: plan.currents.clone(),
                };
                tokio::spawn(node.run(sim, offset, rx.clone()))
            })
            .collect();
        Fleet {
            stop,
            tasks,
            stats,
            spans,
        }
    }

    /// Every span so far (empty unless the plan records them).
    pub fn spans(&self) -> Vec<Span> {
        self.spans.lock().unwrap().clone()
    }

    /// The most spans of `phase` on `version` that were ever running at the same instant.
    pub fn max_concurrent(&self, phase: Phase, version: u64) -> usize {
        max_overlap(
            self.spans()
                .into_iter()
                .filter(|s| s.phase == phase && s.version == version)
                .map(|s| (s.start, s.end)),
        )
    }

    /// The nodes in the order their `phase` spans on `version` started.
    pub fn order(&self, phase: Phase, version: u64) -> Vec<String> {
        let mut spans: Vec<Span> = self
            .spans()
            .into_iter()
            .filter(|s| s.phase == phase && s.version == version)
            .collect();
        spans.sort_by_key(|s| s.start);
        spans.into_iter().map(|s| s.node).collect()
    }

    /// Stops every node and waits for them.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        for task in std::mem::take(&mut self.tasks) {
            let _ = task.await;
        }
    }
}

/// The most intervals `[start, end]` open at one instant (`None`: still open). An interval ending
/// in the millisecond another starts does not overlap it.
pub fn max_overlap(intervals: impl IntoIterator<Item = (u64, Option<u64>)>) -> usize {
    let mut edges: Vec<(u64, i32)> = Vec::new();
    for (start, end) in intervals {
        edges.push((start, 1));
        edges.push((end.unwrap_or(u64::MAX), -1));
    }
    // At equal instants the end sorts first.
    edges.sort();
    let (mut open, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        open += d;
        most = most.max(open);
    }
    most as usize
}

#[derive(Debug, Deserialize)]
struct ReportAnswer {
    targets: BTreeMap<String, Target>,
}

/// One simulated node's reporting loop and what it shares with the fleet.
struct NodeTask {
    client: Arc<ApiClient>,
    id: String,
    behaviour: Behaviour,
    interval: Duration,
    stats: Arc<FleetStats>,
    spans: Option<Arc<Mutex<Vec<Span>>>>,
    /// What spans are timed by (wall-clock ms, comparable with the leader's event times).
    clock: SharedClock,
    /// Where the node's current versions are kept for the metrics exporter, if anywhere.
    currents: Option<metrics::Currents>,
}

impl NodeTask {
    /// Finishes due work, reports, acts on the answer at once, then sleeps until the next report
    /// or until its work is due, whichever comes first.
    async fn run(self, mut sim: SimNode, offset: Duration, mut stop: watch::Receiver<bool>) {
        let start = Instant::now();
        tokio::time::sleep(offset).await;
        loop {
            let roll: f64 = rand::thread_rng().gen();
            let done = sim.finish_due(start.elapsed(), &self.behaviour, roll);
            self.record(done);
            let body = json!({"active": true, "resources": sim.report()});
            match self
                .client
                .post::<_, ReportAnswer>(&format!("/v1/nodes/{}/report", self.id), &body)
                .await
            {
                Ok(answer) => {
                    self.stats.reports.fetch_add(1, Ordering::Relaxed);
                    let work = sim.take_targets(&answer.targets, start.elapsed(), &self.behaviour);
                    self.record(work);
                    self.keep_currents(&sim);
                }
                Err(e) => {
                    self.stats.errors.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(node = %self.id, error = %e, "report failed");
                }
            }
            let pause = match sim.next_due() {
                Some(due) => due.saturating_sub(start.elapsed()).min(self.interval),
                None => self.interval,
            };
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = stop.changed() => return,
            }
        }
    }

    /// Writes what the node runs into the fleet's currents (only with a metrics exporter).
    fn keep_currents(&self, sim: &SimNode) {
        let Some(currents) = &self.currents else {
            return;
        };
        let now: BTreeMap<String, u64> = sim
            .report()
            .iter()
            .filter_map(|(r, rep)| rep.current.map(|v| (r.clone(), v)))
            .collect();
        currents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(self.id.clone(), now);
    }

    fn record(&self, work: Vec<Work>) {
        let Some(spans) = &self.spans else {
            return;
        };
        if work.is_empty() {
            return;
        }
        let now = self.clock.wall_ms();
        let mut spans = spans.lock().unwrap();
        for w in work {
            if w.ended {
                let open = spans.iter_mut().rev().find(|s| {
                    s.node == self.id
                        && s.resource == w.resource
                        && s.version == w.version
                        && s.phase == w.phase
                        && s.end.is_none()
                });
                if let Some(span) = open {
                    span.end = Some(now);
                }
            } else {
                spans.push(Span {
                    node: self.id.clone(),
                    resource: w.resource,
                    version: w.version,
                    phase: w.phase,
                    start: now,
                    end: None,
                });
            }
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
        let client = Arc::new(
            ApiClient::new(&args.server)?
                .with_token_file(args.token_file.as_deref())?
                .with_tls(args.ca_file.as_deref(), None)?,
        );
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
        let mut plan = FleetPlan::default();
        if let Some(addr) = &args.metrics_addr {
            let currents = metrics::Currents::default();
            let model = metrics::ErrorModel {
                base: args.error_ratio,
                bad: args.bad_version.as_deref().map(parse_running).transpose()?,
                bad_ratio: args.bad_error_ratio,
            };
            let bound = metrics::serve(addr, currents.clone(), model).await?;
            eprintln!("error ratios at http://{bound}/metrics (convoy_sim_error_ratio)");
            plan.currents = Some(currents);
        }
        let fleet = Fleet::spawn_with(
            client,
            nodes,
            behaviour,
            Duration::from_millis(args.interval_ms),
            running,
            plan,
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
