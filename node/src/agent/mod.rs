//! `convoy agent`: the real agent of a fleet machine. It reports to the cluster, and for each target
//! it may act on it downloads, installs, health-checks and runs the version, reporting honestly.
//!
//! Layout: `plan` is the pure core (targets + held state → actions); `executor` and `runs` carry
//! the actions out; `fetch`, `install`, `health` and `process` are the I/O pieces; `state` is what
//! survives a restart; this file is the loop (report → targets → act) with failover and signals.

mod config;
mod executor;
mod fetch;
mod health;
mod install;
mod plan;
mod process;
mod runs;
mod state;

#[cfg(test)]
mod executor_test;
#[cfg(test)]
mod loop_test;
#[cfg(test)]
mod plan_test;
#[cfg(test)]
mod process_test;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use convoy_actors::domain::Target;
use tokio::signal::unix::{signal, SignalKind};

use crate::client::{ApiClient, ClientError};
use executor::{AgentConfig, Executor, ResourceDoc};
use process::TeardownTimes;

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
    #[arg(long, env = "CONVOY_INTERVAL_MS", default_value_t = 1000)]
    pub interval_ms: u64,
    /// Installs a version via `sh -c` (env CONVOY_RESOURCE, CONVOY_VERSION, CONVOY_ARTIFACT,
    /// CONVOY_STATE_DIR) instead of switching the `current` symlink.
    #[arg(long, env = "CONVOY_INSTALL_COMMAND")]
    pub install_command: Option<String>,
    /// Runs the installed version via `sh -c` (same env plus CONVOY_HEALTH_PORT); torn down with
    /// POST /quitquitquit, POST /abortabortabort, SIGTERM, SIGKILL when replaced or on shutdown.
    #[arg(long, env = "CONVOY_RUN_COMMAND")]
    pub run_command: Option<String>,
    /// How long a new version may fail its health check before it is reported failed, in ms.
    #[arg(long, env = "CONVOY_HEALTH_GRACE_MS", default_value_t = 30_000)]
    pub health_grace_ms: u64,
    /// Timeout of one health check, in ms.
    #[arg(long, env = "CONVOY_HEALTH_TIMEOUT_MS", default_value_t = 2_000)]
    pub health_timeout_ms: u64,
    /// Wait after /quitquitquit before /abortabortabort, in ms.
    #[arg(long, env = "CONVOY_GRACEFUL_MS", default_value_t = 5_000)]
    pub graceful_ms: u64,
    /// Timeout of the install command, in ms.
    #[arg(long, env = "CONVOY_INSTALL_TIMEOUT_MS", default_value_t = 600_000)]
    pub install_timeout_ms: u64,
    /// Wait before a failed version that is still targeted is tried again, in ms.
    #[arg(long, env = "CONVOY_RETRY_MS", default_value_t = 10_000)]
    pub retry_ms: u64,
    /// File holding this agent's API token (an `agent` token whose nodes glob matches --node-id).
    #[arg(long, env = "CONVOY_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
}

impl AgentArgs {
    fn config(&self) -> AgentConfig {
        AgentConfig {
            install_command: self
                .install_command
                .clone()
                .filter(|c| !c.trim().is_empty()),
            run_command: self.run_command.clone().filter(|c| !c.trim().is_empty()),
            health_grace: Duration::from_millis(self.health_grace_ms),
            health_timeout: Duration::from_millis(self.health_timeout_ms.max(1)),
            install_timeout: Duration::from_millis(self.install_timeout_ms.max(1)),
            retry: Duration::from_millis(self.retry_ms),
            teardown: TeardownTimes::with_graceful(Duration::from_millis(self.graceful_ms)),
            ..AgentConfig::new(self.state_dir.clone())
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
    let token = args
        .token_file
        .as_deref()
        .map(crate::api::auth::secret::read_file)
        .transpose()?;
    let client = ApiClient::new(&args.server)?
        .with_patience(Duration::from_secs(10))
        .with_token(token.as_deref());
    let mut executor = Executor::open(args.config())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let interval = Duration::from_millis(args.interval_ms.max(10));
    tracing::info!(node = %args.node_id, servers = ?client.servers(), dir = %args.state_dir.display(), "agent started");
    let mut failures = 0u32;
    loop {
        let pause = tokio::select! {
            outcome = once(&client, &mut executor, &args.node_id) => pause_after(outcome, interval, &mut failures),
            _ = term.recv() => break,
            _ = int.recv() => break,
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    tracing::info!("agent stopping");
    executor.shutdown().await;
    Ok(())
}

/// What one round changed, or why it could not talk to the cluster.
type Round = Result<bool, ClientError>;

/// The wait before the next round: soon after progress, the interval normally, and a growing
/// backoff (up to 30 s) while no server can be reached.
fn pause_after(outcome: Round, interval: Duration, failures: &mut u32) -> Duration {
    match outcome {
        Ok(changed) => {
            *failures = 0;
            if changed {
                Duration::from_millis(50).min(interval)
            } else {
                interval
            }
        }
        Err(e @ ClientError::Unreachable { .. }) => {
            *failures += 1;
            let backoff = interval
                .saturating_mul(1 << (*failures).min(5))
                .min(Duration::from_secs(30));
            tracing::warn!(error = %e, retry_in_ms = backoff.as_millis() as u64, "no server reachable");
            backoff.max(interval)
        }
        Err(e) => {
            *failures = 0;
            tracing::warn!(error = %e, "report refused");
            interval
        }
    }
}

/// One round: report, read the targets, fetch the versions needed, act. `Ok(true)` when the
/// report changed (so the next one goes out soon).
async fn once(client: &ApiClient, executor: &mut Executor, node: &str) -> Round {
    let before = executor.report_body();
    let answer: serde_json::Value = client
        .post(&format!("/v1/nodes/{node}/report"), &before)
        .await?;
    let targets = parse_targets(&answer);
    let actions = executor.plan(&targets);
    let mut views = BTreeMap::new();
    for name in plan::needs_views(&actions) {
        if !plan::valid_name(&name) {
            continue;
        }
        match client
            .get::<ResourceDoc>(&format!("/v1/resources/{name}"))
            .await
        {
            Ok(doc) => {
                views.insert(name, doc);
            }
            Err(e) => {
                tracing::warn!(resource = %name, error = %e, "cannot read the resource's versions")
            }
        }
    }
    executor.step(&targets, &views).await;
    Ok(executor.report_body() != before)
}

/// The `targets` of a report answer; malformed entries are logged and skipped, never fatal.
fn parse_targets(answer: &serde_json::Value) -> BTreeMap<String, Target> {
    let Some(map) = answer.get("targets").and_then(|t| t.as_object()) else {
        tracing::warn!(%answer, "report answer without targets");
        return BTreeMap::new();
    };
    map.iter()
        .filter_map(|(name, t)| match serde_json::from_value::<Target>(t.clone()) {
            Ok(t) => Some((name.clone(), t)),
            Err(e) => {
                tracing::warn!(resource = %name, target = %t, error = %e, "ignoring a malformed target");
                None
            }
        })
        .collect()
}
