//! `convoy agent`: the real agent of a fleet machine. It reports to the cluster, and for each target
//! it may act on it downloads, installs, health-checks and runs the version, reporting honestly.
//!
//! Layout: `plan` is the pure core (targets + held state → actions) and `health_policy` the pure
//! health rules; `executor`, `checks` and `runs` carry them out; `fetch`, `install`, `health` and
//! `process` are the I/O pieces (`proc_stat` reads `/proc`, `app_log` keeps the apps' log files);
//! `state` is what survives a restart, the processes it runs included; `metrics` is `/metrics`. Two loops run side by side:
//! the `reporter` (its own task: report every interval, hand on the targets) and the worker in
//! this file (act on the latest targets, supervise, check health), so a long download or install
//! never stops the reports.

mod app_log;
mod checks;
mod config;
mod executor;
mod fetch;
mod health;
mod health_policy;
mod install;
mod metrics;
mod plan;
mod proc_stat;
mod process;
mod reporter;
mod runs;
mod state;
mod status;
mod uninstall;

#[cfg(test)]
mod docs_test;
#[cfg(test)]
mod executor_test;
#[cfg(test)]
mod fetch_test;
#[cfg(test)]
mod health_policy_test;
#[cfg(test)]
mod loop_test;
#[cfg(test)]
mod plan_test;
#[cfg(test)]
mod process_test;
#[cfg(test)]
mod supervise_test;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use convoy_actors::domain::Target;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

use crate::client::{ApiClient, ClientError};
use executor::{AgentConfig, Executor, ResourceDoc};
use health_policy::{HealthRules, RestartPolicy};
use process::TeardownTimes;
use reporter::Targets;

/// `convoy agent` flags (each also a `CONVOY_*` environment variable).
#[derive(Debug, Clone, clap::Args)]
pub struct AgentArgs {
    /// This node's stable id (e.g. its hostname).
    #[arg(long, env = "CONVOY_NODE_ID")]
    pub node_id: String,
    /// Servers of the cluster, `host:port[,host:port...]`; the next is tried when one is down.
    #[arg(long, env = "CONVOY_SERVER")]
    pub server: String,
    /// Where versions (`resources/<name>/<version>/`), `current` links and `state.json` live.
    #[arg(long, env = "CONVOY_STATE_DIR")]
    pub state_dir: PathBuf,
    /// Time between reports, in ms.
    #[arg(long, env = "CONVOY_INTERVAL_MS", default_value_t = 1000, value_parser = convoy_time::parse_millis)]
    pub interval_ms: u64,
    /// Installs a version via `sh -c` (env CONVOY_RESOURCE, CONVOY_VERSION, CONVOY_ARTIFACT,
    /// CONVOY_STATE_DIR) instead of switching the `current` symlink.
    #[arg(long, env = "CONVOY_INSTALL_COMMAND")]
    pub install_command: Option<String>,
    /// Runs the installed version via `sh -c` (same env plus CONVOY_HEALTH_PORT); torn down with
    /// POST /quitquitquit, POST /abortabortabort, SIGTERM, SIGKILL when replaced or on shutdown.
    #[arg(long, env = "CONVOY_RUN_COMMAND")]
    pub run_command: Option<String>,
    /// Time between two health checks of a version, in ms (Aurora's interval_secs).
    #[arg(long, env = "CONVOY_HEALTH_INTERVAL_MS", default_value_t = 1_000, value_parser = convoy_time::parse_millis)]
    pub health_interval_ms: u64,
    /// After a (re)start, failed health checks do not count for this long, in ms (Aurora's
    /// initial_interval_secs).
    #[arg(long, env = "CONVOY_HEALTH_GRACE_MS", default_value_t = 30_000, value_parser = convoy_time::parse_millis)]
    pub health_grace_ms: u64,
    /// Timeout of one health check, in ms.
    #[arg(long, env = "CONVOY_HEALTH_TIMEOUT_MS", default_value_t = 2_000, value_parser = convoy_time::parse_millis)]
    pub health_timeout_ms: u64,
    /// Failed checks in a row tolerated after the grace; one more makes the version unhealthy.
    #[arg(long, env = "CONVOY_MAX_CONSECUTIVE_FAILURES", default_value_t = 3)]
    pub max_consecutive_failures: u32,
    /// What an exited run command gets: `on-failure` restarts it after a non-zero exit (an exit with
    /// status 0 is finished: done, not restarted), `always` after every exit, `never` not at all (a
    /// non-zero exit fails the version).
    #[arg(long, env = "CONVOY_RESTART_POLICY", value_enum, default_value_t = RestartPolicy::OnFailure)]
    pub restart_policy: RestartPolicy,
    /// Restarts of an unhealthy or exited process before the version is reported failed.
    #[arg(long, env = "CONVOY_MAX_RESTARTS", default_value_t = 5)]
    pub max_restarts: u32,
    /// Wait before the first restart, in ms; doubled for each further one.
    #[arg(long, env = "CONVOY_RESTART_BACKOFF_MS", default_value_t = 1_000, value_parser = convoy_time::parse_millis)]
    pub restart_backoff_ms: u64,
    /// The longest wait before a restart, in ms.
    #[arg(long, env = "CONVOY_RESTART_BACKOFF_MAX_MS", default_value_t = 60_000, value_parser = convoy_time::parse_millis)]
    pub restart_backoff_max_ms: u64,
    /// The longest a `.healthchecksnooze` file suspends health checks, in ms.
    #[arg(long, env = "CONVOY_SNOOZE_MAX_MS", default_value_t = 3_600_000, value_parser = convoy_time::parse_millis)]
    pub snooze_max_ms: u64,
    /// A download that receives no byte for this long fails, in ms.
    #[arg(long, env = "CONVOY_DOWNLOAD_STALL_MS", default_value_t = 30_000, value_parser = convoy_time::parse_millis)]
    pub download_stall_ms: u64,
    /// Attempts of a download that fails on the way (stall, connection, HTTP status) before the
    /// version is reported failed.
    #[arg(long, env = "CONVOY_DOWNLOAD_ATTEMPTS", default_value_t = 3)]
    pub download_attempts: u32,
    /// Wait after /quitquitquit before /abortabortabort, in ms.
    #[arg(long, env = "CONVOY_GRACEFUL_MS", default_value_t = 5_000, value_parser = convoy_time::parse_millis)]
    pub graceful_ms: u64,
    /// Timeout of the install command, in ms.
    #[arg(long, env = "CONVOY_INSTALL_TIMEOUT_MS", default_value_t = 600_000, value_parser = convoy_time::parse_millis)]
    pub install_timeout_ms: u64,
    /// Wait before a failed version that is still targeted is tried again, in ms.
    #[arg(long, env = "CONVOY_RETRY_MS", default_value_t = 10_000, value_parser = convoy_time::parse_millis)]
    pub retry_ms: u64,
    /// File holding this agent's API token (an `agent` token whose nodes glob matches --node-id).
    #[arg(long, env = "CONVOY_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// PEM CA to trust for `https://` servers.
    #[arg(long, env = "CONVOY_CA_FILE")]
    pub ca_file: Option<PathBuf>,
    /// Resources this node does not want (repeatable or comma-separated): reported
    /// `interested: false`, so the server stops targeting them and has them uninstalled.
    #[arg(
        long,
        env = "CONVOY_UNINTERESTED",
        value_delimiter = ',',
        value_name = "RESOURCE"
    )]
    pub uninterested: Vec<String>,
    /// `file://` artifacts are read only under this directory (none: `file://` is refused).
    #[arg(long, env = "CONVOY_ARTIFACT_ROOT")]
    pub artifact_root: Option<PathBuf>,
    /// Allow plain `http://` artifact URLs (`https://` always is).
    #[arg(long, env = "CONVOY_ALLOW_HTTP")]
    pub allow_http: bool,
    /// Serve Prometheus metrics at `GET /metrics` on this address (off when unset; no token is
    /// asked, so keep it on loopback or a private network).
    #[arg(long, env = "CONVOY_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// An app's log file (`DIR/logs/<resource>.stdout.log`, `.stderr.log`) past this size is
    /// rotated, in bytes.
    #[arg(long, env = "CONVOY_APP_LOG_MAX_BYTES", default_value_t = app_log::DEFAULT_MAX_BYTES)]
    pub app_log_max_bytes: u64,
    /// Rotated files kept of each app log (`.1` the newest); 0 keeps none.
    #[arg(long, env = "CONVOY_APP_LOG_FILES", default_value_t = app_log::DEFAULT_KEPT)]
    pub app_log_files: u32,
}

/// `path` made absolute against the working directory (a relative path would be read from the
/// version dir a command runs in).
fn absolute(flag: &str, path: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(path)
        .map_err(|e| anyhow::anyhow!("{flag} {}: cannot make it absolute: {e}", path.display()))
}

impl AgentArgs {
    /// The flags with every path made absolute, so none is read relative to another directory.
    fn with_absolute_paths(mut self) -> anyhow::Result<Self> {
        self.state_dir = absolute("--state-dir", &self.state_dir)?;
        for (flag, path) in [
            ("--token-file", &mut self.token_file),
            ("--ca-file", &mut self.ca_file),
            ("--artifact-root", &mut self.artifact_root),
        ] {
            if let Some(p) = path.as_mut() {
                *p = absolute(flag, p)?;
            }
        }
        Ok(self)
    }

    fn config(&self) -> AgentConfig {
        let base = AgentConfig::new(self.state_dir.clone());
        AgentConfig {
            app_logs: app_log::AppLogs {
                max_bytes: self.app_log_max_bytes,
                kept: self.app_log_files,
                ..base.app_logs.clone()
            },
            install_command: self
                .install_command
                .clone()
                .filter(|c| !c.trim().is_empty()),
            run_command: self.run_command.clone().filter(|c| !c.trim().is_empty()),
            health: HealthRules {
                restart: self.restart_policy,
                interval: Duration::from_millis(self.health_interval_ms.max(10)),
                grace: Duration::from_millis(self.health_grace_ms),
                max_consecutive_failures: self.max_consecutive_failures,
                max_restarts: self.max_restarts,
                backoff: Duration::from_millis(self.restart_backoff_ms),
                backoff_max: Duration::from_millis(
                    self.restart_backoff_max_ms.max(self.restart_backoff_ms),
                ),
                snooze_max: Duration::from_millis(self.snooze_max_ms),
                ..HealthRules::default()
            },
            health_timeout: Duration::from_millis(self.health_timeout_ms.max(1)),
            download_stall: Duration::from_millis(self.download_stall_ms.max(1)),
            download_attempts: self.download_attempts.max(1),
            install_timeout: Duration::from_millis(self.install_timeout_ms.max(1)),
            retry: Duration::from_millis(self.retry_ms),
            teardown: TeardownTimes::with_graceful(Duration::from_millis(self.graceful_ms)),
            uninterested: self.uninterested.iter().cloned().collect(),
            sources: fetch::Sources {
                artifact_root: self.artifact_root.clone(),
                allow_http: self.allow_http,
            },
            ..base
        }
    }
}

/// Runs the agent until SIGTERM or SIGINT, then tears down the processes it runs.
pub fn run(args: AgentArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run_async(args))
}

async fn run_async(args: AgentArgs) -> anyhow::Result<()> {
    if args.node_id.is_empty() || args.node_id.contains(['/', '?', '#']) {
        anyhow::bail!("--node-id {:?} is not a usable node id", args.node_id);
    }
    let args = args.with_absolute_paths()?;
    let client = Arc::new(
        ApiClient::new(&args.server)?
            .with_patience(Duration::from_secs(10))
            .with_token_file(args.token_file.as_deref())?
            .with_tls(args.ca_file.as_deref(), None)?,
    );
    let config = args.config();
    let tick = config.health.interval;
    let mut executor = Executor::open(config)?;
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let interval = Duration::from_millis(args.interval_ms.max(10));
    if let Some(addr) = args.metrics_listen {
        let bound = metrics::serve(addr)?;
        tracing::info!(addr = %bound, "metrics at GET /metrics");
    }
    tracing::info!(node = %args.node_id, servers = ?client.servers(), dir = %args.state_dir.display(), "agent started");
    let (targets_tx, targets_rx) = watch::channel(None);
    let reporter = tokio::spawn(reporter::run(
        client.clone(),
        args.node_id.clone(),
        interval,
        executor.subscribe(),
        targets_tx,
        args.state_dir.join("status.json"),
        executor.clock(),
    ));
    crate::systemd::ready();
    tokio::select! {
        _ = work(&client, &mut executor, targets_rx, tick.min(interval)) => {
            tracing::error!("the reporter stopped");
        }
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    crate::systemd::stopping();
    tracing::info!("agent stopping");
    reporter.abort();
    executor.shutdown().await;
    Ok(())
}

/// The worker: acts on the latest targets as soon as they change, and at least every `tick`
/// supervises processes and checks health. Returns when the reporter is gone.
async fn work(
    client: &ApiClient,
    executor: &mut Executor,
    mut targets: watch::Receiver<Targets>,
    tick: Duration,
) {
    loop {
        let latest = targets.borrow_and_update().clone().unwrap_or_default();
        work_once(client, executor, &latest).await;
        tokio::select! {
            changed = targets.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = tokio::time::sleep(tick) => {}
        }
    }
}

/// One pass of the worker: read the published versions the planned actions need, act, supervise,
/// check health.
async fn work_once(
    client: &ApiClient,
    executor: &mut Executor,
    targets: &BTreeMap<String, Target>,
) {
    let actions = executor.plan(targets);
    let mut views = BTreeMap::new();
    for name in plan::needs_views(&actions) {
        if !plan::valid_name(&name) {
            continue;
        }
        // Every version: the show answers a page of them.
        let path = format!("/v1/resources/{name}");
        let doc = crate::client_pages::show(client, &path, "versions")
            .await
            .and_then(|v| {
                serde_json::from_value::<ResourceDoc>(v).map_err(|e| ClientError::Decode {
                    server: client.servers().join(","),
                    path: path.clone(),
                    reason: e.to_string(),
                })
            });
        match doc {
            Ok(doc) => {
                views.insert(name, doc);
            }
            Err(e) => {
                tracing::warn!(resource = %name, error = %e, "cannot read the resource's versions")
            }
        }
    }
    executor.step(targets, &views).await;
}
