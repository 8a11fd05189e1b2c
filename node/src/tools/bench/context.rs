//! What every `convoy bench` scenario shares: the scenarios, the flags, and the context (`Ctx`: flags,
//! results, HTTP client, token, directories) each scenario runs with.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use super::load;
use super::report::{self, Results};
use crate::measure::parse_duration;

/// How the simulated agents reach the servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Agents {
    /// One HTTP request per node report, as `convoy agent` sends them.
    PerNode,
    /// Relays send many nodes' reports per request (`POST /v1/nodes/reports`).
    Relay,
}

/// What can be measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// (a) replicated writes/s and commit latency at each client count.
    Throughput,
    /// (b) node-report changes committed per second, report-to-applied latency.
    Ingest,
    /// (c) rolling deployments of the `--rollout-nodes` sizes with instant agents.
    Rollout,
    /// (d) SIGKILL of the leader → first committed write, → next deployment progress.
    Failover,
    /// (e) pulse deadline → AWAITING_PULSE event.
    Pulse,
    /// (f) RSS per server, state and snapshot size and build time with 100k nodes.
    Scale,
    /// (f) restart time with `--log-entries` entries kept in the log.
    Restart,
    /// (g) `--state-nodes` fleet nodes: snapshot size, follower restart, wiped-follower catch-up
    /// through the streamed snapshot. Not in the default set (it fills a 1M-node state).
    LargeState,
    /// (i) In process: the apply lock's hold per chunk and per snapshot capture while snapshots are
    /// built, with `--pause-objects` plain resources; and RSS per resource. Not in the default set.
    ApplyPauseResources,
    /// (i) The same with `--pause-objects` fleet nodes; and RSS per node. Not in the default set.
    ApplyPauseNodes,
    /// (j) Other writes' p99 while one agent token floods reports at the API's limit, against the quiet
    /// p99. Not in the default set.
    ReportFlood,
    /// (k) Writes' p50 and p99 quiet, then with every object a token can create at its maximum count
    /// (`--crowded-scale` of it) while readers list everything in a loop; the elections meanwhile. Not in
    /// the default set.
    Crowded,
}

/// The scenarios `convoy bench` runs when `--scenario` is not given.
pub const DEFAULT_SCENARIOS: &str = "throughput,ingest,rollout,failover,pulse,scale,restart";

/// `convoy bench` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Scenarios to run, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = DEFAULT_SCENARIOS)]
    pub scenario: Vec<Scenario>,
    /// Everything else.
    #[command(flatten)]
    pub options: BenchOptions,
}

/// The flags every scenario reads (the lab's `bench` takes them too).
#[derive(Debug, Clone, clap::Args)]
pub struct BenchOptions {
    /// Merge the results into this JSON file (rows of scenarios run again are replaced).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// How long each load level runs.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Concurrent clients per throughput level.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
    pub clients: Vec<usize>,
    /// Nodes of the ingest consumer.
    #[arg(long, default_value_t = 10_000)]
    pub ingest_nodes: usize,
    /// Rolling-deployment sizes.
    #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
    pub rollout_nodes: Vec<usize>,
    /// How the rollout's simulated agents report: `per-node` (a request per report, as `convoy
    /// agent` does) and/or `relay` (many nodes per `POST /v1/nodes/reports`).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "relay,per-node"
    )]
    pub rollout_agents: Vec<Agents>,
    /// Nodes per request in the batched ingest phase (0: skip it).
    #[arg(long, default_value_t = 500)]
    pub ingest_batch: usize,
    /// Leader kills per system.
    #[arg(long, default_value_t = 50)]
    pub failovers: usize,
    /// Coordinated deployments left without pulses.
    #[arg(long, default_value_t = 50)]
    pub pulses: usize,
    /// Log entries written before the restart measurement.
    #[arg(long, default_value_t = 1_000_000)]
    pub log_entries: u64,
    /// Fleet nodes of the `large-state` scenario.
    #[arg(long, default_value_t = 1_000_000)]
    pub state_nodes: usize,
    /// Log entries a follower keeps after its large-state snapshot before a second restart
    /// (`large-state`; 0 skips that restart).
    #[arg(long, default_value_t = 1_000_000)]
    pub state_log_entries: u64,
    /// Objects of the `apply-pause-*` scenarios.
    #[arg(long, default_value_t = 1_000_000)]
    pub pause_objects: usize,
    /// The fraction of the `crowded` scenario's full counts (1,000 windows, consumers, budgets,
    /// deployments and tokens) it creates: 0.01 for 10 of each (at least 1 each).
    #[arg(long, default_value_t = 1.0, value_parser = parse_scale)]
    pub crowded_scale: f64,
    /// The servers' `RUST_LOG`; keep `convoy_raft::sm_store=info` for the snapshot build times.
    #[arg(long, default_value = "warn,convoy_raft::sm_store=info")]
    pub server_log: String,
    /// A line added to every convoy server's config file, e.g. `--server-config 'log_compaction =
    /// "universal"'` (repeatable): runs the scenarios with the servers tuned differently, to compare
    /// settings back to back.
    #[arg(long = "server-config", value_name = "KEY = VALUE")]
    pub server_config: Vec<String>,
    /// Keep each server's write-ahead log under this directory (`log_wal_dir`, a fresh directory
    /// per cluster, removed with it), e.g. on another disk, to measure what the WAL's fsyncs cost.
    #[arg(long, value_name = "DIR")]
    pub wal_root: Option<PathBuf>,
    /// Keep data dirs and logs here (default: a temp dir under /var/tmp, removed).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// A `--crowded-scale`: a number above 0, at most 1.
fn parse_scale(raw: &str) -> Result<f64, String> {
    match raw.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 1.0 => Ok(s),
        _ => Err(format!("{raw:?} is not a fraction above 0 and at most 1")),
    }
}

/// What every scenario gets.
pub struct Ctx {
    /// The flags.
    pub args: BenchOptions,
    /// The scenarios of this run (a scenario may measure another's numbers on the way).
    pub scenarios: Vec<Scenario>,
    /// Where numbers go.
    pub results: Results,
    /// A keep-alive HTTP client of convoy's servers, sending the admin token.
    pub http: reqwest::Client,
    /// The admin token every benchmark cluster bootstraps with.
    pub token: String,
    /// The 100k-node RSS and snapshot numbers were taken during `rollout`.
    pub scale_measured: bool,
    root: PathBuf,
    /// The temp dir `root` is, when `--dir` was not given; removed with the context.
    _temp: Option<tempfile::TempDir>,
}

impl Ctx {
    /// A context for running `scenarios` with `args`: its clusters go under `--dir` or a temp dir under
    /// /var/tmp.
    pub fn new(args: BenchOptions, scenarios: Vec<Scenario>) -> anyhow::Result<Self> {
        let (root, temp) = match &args.dir {
            Some(dir) => (dir.clone(), None),
            None => {
                let temp = tempfile::Builder::new()
                    .prefix("convoy-bench-")
                    .tempdir_in("/var/tmp")?;
                (temp.path().to_path_buf(), Some(temp))
            }
        };
        let token = crate::local::new_admin_token();
        Ok(Self {
            args,
            scenarios,
            results: Results::default(),
            http: load::http_client(Some(&token)),
            token,
            scale_measured: false,
            root,
            _temp: temp,
        })
    }

    /// A fresh directory for one cluster.
    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Prints the table of every result and merges it into `--out`.
    pub fn finish(&self) -> anyhow::Result<()> {
        println!("\n{}", report::markdown_table(&self.results.rows));
        if let Some(out) = &self.args.out {
            report::save(out, &self.results.rows)
                .with_context(|| format!("writing {}", out.display()))?;
            println!("saved to {}", out.display());
        }
        Ok(())
    }
}
