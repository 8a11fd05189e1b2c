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
}

/// Completion flags, shared by `consumer subscribe` and `deploy start`.
#[derive(Debug, Clone, Default, Args)]
pub struct CompletionArgs {
    /// Successful nodes that complete it: a fraction (≤ 1) or a count (> 1).
    #[arg(long, value_name = "Q")]
    pub quorum: Option<f64>,
    /// End the deployment after this long: succeeded if the quorum is met, failed otherwise.
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_millis)]
    pub timeout_ms: Option<u64>,
}

/// `convoy deploy ...`
#[derive(Debug, Subcommand)]
pub enum DeployCommand {
    /// Start a deployment (from flags, or from a file with -f).
    Start(Box<StartArgs>),
    /// Show a deployment: settings, nodes and events.
    #[command(visible_alias = "status")]
    Info {
        /// Deployment id (d-N).
        id: String,
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
    },
    /// Pause a deployment (paused_by = user).
    Pause(ActionArgs),
    /// Resume a paused deployment.
    Resume(ActionArgs),
    /// Abort a deployment; nodes keep what they have.
    Abort(ActionArgs),
    /// Roll a deployment back.
    Rollback(ActionArgs),
    /// Start a deployment back to each node's version before deployment ID, with its policy.
    Undo(ActionArgs),
    /// Send one pulse to a coordinated deployment (exit 1 when the answer is STOP).
    Pulse {
        /// Deployment id (d-N).
        id: String,
    },
    /// Show what `deploy start` with these flags would do (version and why, node order in batches or
    /// waves, skipped nodes and why), changing nothing.
    Plan(Box<StartArgs>),
    /// List every decision about one node of a deployment, with its reason.
    Why {
        /// Deployment id (d-N).
        id: String,
        /// Id of the node, as the deployment's consumer lists it.
        node: String,
    },
    /// Follow a deployment until it ends; exit 1 unless it rolled forward.
    Watch {
        /// Deployment id (d-N).
        id: String,
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

/// `deploy pause|resume|abort|rollback`.
#[derive(Debug, Args)]
pub struct ActionArgs {
    /// Deployment id (d-N).
    pub id: String,
    /// Why, recorded in the deployment's events.
    #[arg(long, short = 'm')]
    pub message: Option<String>,
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
    /// Why, recorded in the deployment's events.
    #[arg(long, short = 'm')]
    pub message: Option<String>,
    /// Follow the deployment after starting it, as `deploy watch` does.
    #[arg(long)]
    pub watch: bool,
    /// Deploy a version held back on the consumer (a rollback held it), lifting the hold.
    #[arg(long)]
    pub force: bool,
}
