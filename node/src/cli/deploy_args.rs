//! Clap definitions of `convoy deploy ...` and of the policy flags it shares with `consumer subscribe`
//! (strategy, completion).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use convoy_actors::domain::FailedNodes;

/// The strategy kinds on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyKind {
    /// Every node at once.
    AllAtOnce,
    /// Install and download windows moving in order.
    Rolling,
    /// Batches, the next when the previous has finished.
    Batch,
}

/// Strategy flags, shared by `consumer subscribe` and `deploy start`.
#[derive(Debug, Clone, Default, Args)]
pub struct StrategyArgs {
    /// Strategy (implied by --install-window or --batch-sizes).
    #[arg(long, value_enum)]
    pub strategy: Option<StrategyKind>,
    /// Rolling: nodes installing at once.
    #[arg(long, value_name = "N")]
    pub install_window: Option<u32>,
    /// Rolling: nodes downloading (prefetching) at once (default: the install window).
    #[arg(long, value_name = "N")]
    pub download_window: Option<u32>,
    /// Batch: sizes, comma-separated; the last one repeats.
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    pub batch_sizes: Vec<u32>,
    /// Batch: pause after each batch.
    #[arg(long)]
    pub autopause: bool,
    /// All at once: judge failures as they come instead of once every node is done.
    #[arg(long)]
    pub fail_fast: bool,
}

/// Completion flags, shared by `consumer subscribe` and `deploy start`.
#[derive(Debug, Clone, Default, Args)]
pub struct CompletionArgs {
    /// Successful nodes that complete it: a fraction (≤ 1) or a count (> 1).
    #[arg(long, value_name = "Q")]
    pub quorum: Option<f64>,
    /// End the deployment after this long (see --on-timeout).
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_millis)]
    pub timeout_ms: Option<u64>,
    /// At the timeout: `finish` (nodes not done are left as they are; rolled forward unless failures
    /// exceed the tolerance, a quorum is unmet or nothing succeeded) or `fail` (rolled forward only if
    /// the quorum, default every node, is met).
    #[arg(long, value_enum, value_name = "finish|fail")]
    pub on_timeout: Option<OnTimeoutArg>,
}

/// Pacing flags of `deploy start` (DEPLOYMENTS.md §14); each overrides the file's `pacing` key of its name.
#[derive(Debug, Clone, Default, Args)]
pub struct PacingArgs {
    /// Wait this long between batches (rolling: waves of the install window).
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_millis)]
    pub bake_ms: Option<u64>,
    /// A node must succeed this long after its install started (default 10m past min_healthy).
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_millis)]
    pub healthy_deadline_ms: Option<u64>,
    /// A node admitted to install must hold the version within this long.
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_millis)]
    pub download_deadline_ms: Option<u64>,
    /// Some node must succeed at least this often, or the deployment fails.
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_millis)]
    pub progress_deadline_ms: Option<u64>,
    /// Confirmation gates, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "GATE,...")]
    pub confirm: Vec<GateArg>,
}

/// `--confirm` values (the names of the API's gates, so each starts with "before").
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GateArg {
    /// Before the first node is admitted.
    BeforeStart,
    /// Before every batch or wave after the first.
    BeforeEachBatch,
    /// Once, after the first batch or wave.
    BeforePromotion,
}

/// `--on-timeout` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnTimeoutArg {
    /// Finish: nodes not done are recorded timed out and left as they are.
    Finish,
    /// Fail unless the quorum (default every node) is met.
    Fail,
}

/// `convoy deploy ...`
#[derive(Debug, Subcommand)]
pub enum DeployCommand {
    /// Start a deployment (from flags, or from a file with -f).
    Start(Box<StartArgs>),
    /// Show a deployment: settings, nodes and events. By id or by CONSUMER/RESOURCE (its latest).
    #[command(visible_alias = "status")]
    Info {
        /// Deployment id (d-N), or CONSUMER/RESOURCE: the pair's latest deployment, active or ended.
        #[arg(value_name = "ID|CONSUMER/RESOURCE")]
        id: DeploymentRef,
    },
    /// List deployments, manual and automatic: status and node counts, narrowed by the flags.
    List {
        /// Only this consumer's.
        #[arg(long)]
        consumer: Option<String>,
        /// Only this resource's.
        #[arg(long)]
        resource: Option<String>,
        /// Only active or only terminal ones.
        #[arg(long, value_enum)]
        status: Option<StatusArg>,
        #[command(flatten)]
        list: super::list_args::ListArgs,
    },
    /// Pause a deployment (paused_by = user), by id or by CONSUMER/RESOURCE.
    Pause(PauseArgs),
    /// Let a deployment waiting at a confirmation gate go on, by id or by CONSUMER/RESOURCE.
    Confirm(ActionArgs),
    /// Resume a paused deployment, by id or by CONSUMER/RESOURCE.
    Resume(ActionArgs),
    /// Abort a deployment; nodes keep what they have. By id or by CONSUMER/RESOURCE.
    Abort(ActionArgs),
    /// Roll a deployment back, by id or by CONSUMER/RESOURCE.
    Rollback(ActionArgs),
    /// Start a deployment back to each node's version before deployment ID, with its policy.
    Undo(UndoArgs),
    /// Send one pulse to a coordinated deployment, by id or by CONSUMER/RESOURCE (exit 1 when the
    /// answer is STOP).
    Pulse {
        /// Deployment id (d-N), or CONSUMER/RESOURCE: the pair's active deployment.
        #[arg(value_name = "ID|CONSUMER/RESOURCE")]
        id: DeploymentRef,
    },
    /// Show what `deploy start` with these flags would do (version and why, node order in batches or
    /// waves, skipped nodes and why), changing nothing.
    Plan(Box<StartArgs>),
    /// List every decision about one node of a deployment, with its reason. By id or by
    /// CONSUMER/RESOURCE (its latest).
    Why {
        /// Deployment id (d-N), or CONSUMER/RESOURCE: the pair's latest deployment, active or ended.
        #[arg(value_name = "ID|CONSUMER/RESOURCE")]
        id: DeploymentRef,
        /// Id of the node, as the deployment's consumer lists it.
        node: String,
    },
    /// Follow a deployment until it ends; exit 1 unless it rolled forward. By id or by
    /// CONSUMER/RESOURCE (its latest).
    Watch {
        /// Deployment id (d-N), or CONSUMER/RESOURCE: the pair's latest deployment, active or ended.
        #[arg(value_name = "ID|CONSUMER/RESOURCE")]
        id: DeploymentRef,
        /// Give up (exit 1) after this long: `90s`, `5m`, `1h`, `1500ms`.
        #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_duration)]
        timeout: Option<std::time::Duration>,
    },
}

/// `--status` of `deploy list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatusArg {
    /// Still running: rolling, paused or awaiting a pulse.
    Active,
    /// Ended: rolled forward, rolled back, aborted, failed or errored.
    Terminal,
}

/// `deploy pause`: the action's arguments and `--hard`.
#[derive(Debug, Args)]
pub struct PauseArgs {
    /// Deployment and message.
    #[command(flatten)]
    pub action: ActionArgs,
    /// Also take back install permission from the nodes admitted but not yet installing.
    #[arg(long)]
    pub hard: bool,
}

/// `deploy pause|resume|confirm|abort|rollback`.
#[derive(Debug, Args)]
pub struct ActionArgs {
    /// Deployment id (d-N), or CONSUMER/RESOURCE: the pair's active deployment.
    #[arg(value_name = "ID|CONSUMER/RESOURCE")]
    pub id: DeploymentRef,
    /// Why, recorded in the deployment's events.
    #[arg(long, short = 'm')]
    pub message: Option<String>,
}

/// `deploy undo`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// Deployment id (d-N).
    pub id: String,
    /// Why, recorded in the new deployment's events.
    #[arg(long, short = 'm')]
    pub message: Option<String>,
}

/// The deployment a verb acts on: by id, or by job key (the consumer and the resource whose active
/// deployment it is), for a monitoring service that knows the pair and not the id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeploymentRef {
    /// `d-17` (or `17`), as given.
    Id(String),
    /// `web/app`: the active deployment of resource `app` on consumer `web`.
    Pair {
        /// The consumer's name.
        consumer: String,
        /// The resource's name.
        resource: String,
    },
}

impl std::str::FromStr for DeploymentRef {
    type Err = String;

    /// `CONSUMER/RESOURCE` (one `/`, both sides non-empty) is a pair; anything without `/` an id.
    fn from_str(raw: &str) -> Result<Self, String> {
        let Some((consumer, resource)) = raw.split_once('/') else {
            return Ok(DeploymentRef::Id(raw.to_string()));
        };
        if consumer.is_empty() || resource.is_empty() || resource.contains('/') {
            return Err(
                "expected a deployment id (d-17) or CONSUMER/RESOURCE (web/app)".to_string(),
            );
        }
        Ok(DeploymentRef::Pair {
            consumer: consumer.to_string(),
            resource: resource.to_string(),
        })
    }
}

impl std::fmt::Display for DeploymentRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeploymentRef::Id(id) => f.write_str(id),
            DeploymentRef::Pair { consumer, resource } => write!(f, "{consumer}/{resource}"),
        }
    }
}

/// `convoy deploy start`.
#[derive(Debug, Default, Args)]
pub struct StartArgs {
    /// Consumer name (or `consumer` in the file).
    #[arg(required_unless_present = "file")]
    pub consumer: Option<String>,
    /// Resource name (or `resource` in the file).
    #[arg(required_unless_present = "file")]
    pub resource: Option<String>,
    /// A TOML file with the keys of `POST /v1/deployments`; flags given too override it.
    #[arg(short = 'f', long = "file", value_name = "deploy.toml")]
    pub file: Option<PathBuf>,
    /// Version to roll out (default: the selected version).
    #[arg(long)]
    pub version: Option<u64>,
    #[command(flatten)]
    pub strategy: StrategyArgs,
    /// Ordinal ranges of the consumer's nodes, e.g. `0-1,5` for a canary.
    #[arg(long, value_name = "RANGES")]
    pub nodes: Option<String>,
    /// A node succeeds after staying healthy this long.
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_millis)]
    pub min_healthy_ms: Option<u64>,
    /// Retries a node may use before it counts as failed.
    #[arg(long, value_name = "N")]
    pub max_failures_per_node: Option<u32>,
    /// Failed nodes tolerated before the deployment fails.
    #[arg(long, value_name = "N")]
    pub max_failed_nodes: Option<FailedNodes>,
    /// On failure, stop (FAILED) instead of rolling back.
    #[arg(long)]
    pub no_rollback: bool,
    /// Make it coordinated: it blocks unless pulsed at least this often.
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_millis)]
    pub pulse_interval_ms: Option<u64>,
    #[command(flatten)]
    pub completion: CompletionArgs,
    #[command(flatten)]
    pub pacing: PacingArgs,
    /// Why, recorded in the deployment's events.
    #[arg(long, short = 'm')]
    pub message: Option<String>,
    /// Follow the deployment after starting it, as `deploy watch` does.
    #[arg(long)]
    pub watch: bool,
    /// Stop watching (exit 1) after this long, as `deploy watch --timeout` does; implies --watch. The
    /// deployment goes on (its own deadline is --timeout-ms).
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_duration)]
    pub watch_timeout: Option<std::time::Duration>,
    /// Show the plan (as `deploy plan` does), starting nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Not a flag of `deploy start`: refused with the two flags it may mean.
    #[arg(long, hide = true, value_name = "DURATION", value_parser = no_timeout_flag)]
    pub timeout: Option<String>,
    /// Deploy a version held back on the consumer (a rollback held it), lifting the hold.
    #[arg(long)]
    pub force: bool,
    /// Spread the first admissions: each node's first waits a deterministic offset below this (`30s`,
    /// at most a day).
    #[arg(long, value_name = "DURATION", value_parser = jitter_flag)]
    pub start_jitter: Option<String>,
    /// `deploy plan` / `--dry-run`: the time each node is assumed to take in the finish estimate (`90s`;
    /// default: min_healthy plus a typical install of 60 s).
    #[arg(long, value_name = "DURATION", value_parser = jitter_flag)]
    pub per_node: Option<String>,
}

/// `--start-jitter`, `--per-node`: a duration convoy-time reads, sent as given.
fn jitter_flag(raw: &str) -> Result<String, String> {
    convoy_time::parse_duration(raw)
        .map(|_| raw.trim().to_string())
        .map_err(|e| e.to_string())
}

/// `deploy start --timeout X`: people mean one of two flags; say both, with their value.
fn no_timeout_flag(raw: &str) -> Result<String, String> {
    let value: String = raw.chars().take(40).collect();
    Err(format!(
        "deploy start has no --timeout: to stop watching after {value} (the deployment goes on), use \
         --watch-timeout {value}; to end the deployment itself after {value}, use --timeout-ms {value} \
         (with --on-timeout finish|fail)"
    ))
}

#[cfg(test)]
#[path = "deploy_args_test.rs"]
mod tests;
