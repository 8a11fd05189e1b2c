//! Clap definitions of the client commands: `resource`, `consumer`, `group`, `node`, `cluster` (`deploy`
//! and the policy flags: `deploy_args.rs`, re-exported here).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use convoy_actors::domain::{Dependency, FailedNodes, Member};

pub use super::deploy_args::{
    CompletionArgs, DeployCommand, GateArg, OnTimeoutArg, PacingArgs, StartArgs, StatusArg,
    StrategyArgs, StrategyKind,
};
pub use super::list_args::ListArgs;
use super::parse::{parse_dependency, parse_key_value, parse_member, parse_resource_version};

/// Flags every client command takes (they may appear anywhere after the command name).
#[derive(Debug, Clone, Args)]
pub struct GlobalOpts {
    /// Servers to talk to, comma-separated; the next one is tried when one is down (default: the
    /// current context's, else 127.0.0.1:8081).
    #[arg(
        long,
        env = "CONVOY_SERVER",
        global = true,
        value_name = "HOST:PORT[,HOST:PORT...]"
    )]
    pub server: Option<String>,
    /// The context of the CLI's config file to use (default: its current one; see `convoy login`).
    #[arg(long, env = "CONVOY_CONTEXT", global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// Output: aligned tables for people (`wide`: with more columns), or the server's answer as JSON or
    /// YAML for scripts.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Table, global = true)]
    pub output: Output,
    /// API token secret sent as `Authorization: Bearer` (prefer CONVOY_TOKEN or --token-file: a flag shows in `ps`).
    #[arg(
        long,
        env = "CONVOY_TOKEN",
        global = true,
        hide_env_values = true,
        value_name = "SECRET"
    )]
    pub token: Option<String>,
    /// File holding the API token secret (used when --token and CONVOY_TOKEN are not set).
    #[arg(long, env = "CONVOY_TOKEN_FILE", global = true, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// PEM CA to trust for `https://` servers (besides the system's roots).
    #[arg(long, env = "CONVOY_CA_FILE", global = true, value_name = "PATH")]
    pub ca_file: Option<PathBuf>,
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Aligned columns for people (the default).
    Table,
    /// Aligned columns, with more of them where a list has more to show.
    Wide,
    /// The server's JSON, pretty-printed.
    Json,
    /// The server's answer as YAML.
    Yaml,
}

impl Output {
    /// Whether people read it (a table, wide or not) rather than scripts (JSON, YAML).
    pub fn is_table(self) -> bool {
        matches!(self, Output::Table | Output::Wide)
    }
}

/// `convoy resource ...`
#[derive(Debug, Subcommand)]
pub enum ResourceCommand {
    /// Create a resource.
    Create {
        /// Name of the new resource: 1-200 bytes of letters, digits, '-', '_' and '.'.
        name: String,
    },
    /// Publish a new version of a resource.
    Publish(PublishArgs),
    /// List resources: how many versions each has, the newest and its label.
    List(ListArgs),
    /// Show a resource and its versions.
    Show {
        /// Name of the resource to show.
        name: String,
    },
    /// Retract (yank) a version: no consumer selects it any more; its active deployments stop.
    Retract {
        /// Name of the resource the version belongs to.
        name: String,
        /// The number of the version to retract.
        version: u64,
        /// Why (recorded on the version and in deployment events).
        #[arg(long, short)]
        message: Option<String>,
    },
    /// Undo a retraction: the version may be selected again.
    Unretract {
        /// Name of the resource the version belongs to.
        name: String,
        /// The number of the retracted version.
        version: u64,
    },
}

/// `convoy resource publish`.
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// Name of the resource to publish a version of (it must exist).
    pub name: String,
    /// Human label of the version (e.g. a git tag).
    #[arg(long)]
    pub label: Option<String>,
    /// Artifact URL (http:// or file://).
    #[arg(long)]
    pub url: Option<String>,
    /// Expected SHA-256 of the artifact, hex.
    #[arg(long, requires = "url")]
    pub sha256: Option<String>,
    /// Artifact size in bytes.
    #[arg(long, requires = "url")]
    pub size: Option<u64>,
    /// Publish the artifact without a sha256 (agents install whatever the URL serves).
    #[arg(long, requires = "url", conflicts_with = "sha256")]
    pub unchecked: bool,
    /// Port whose `GET /health` must answer `ok` once installed.
    #[arg(long)]
    pub health_port: Option<u16>,
    /// A dependency `RESOURCE@VERSION` (repeatable).
    #[arg(long = "depends-on", value_name = "RES@VER", value_parser = parse_dependency)]
    pub depends_on: Vec<Dependency>,
    /// Free metadata `KEY=VALUE` (repeatable).
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_key_value)]
    pub metadata: Vec<(String, String)>,
    /// Show which consumers would take the version and how (at once on weak subscriptions, through a
    /// deployment on strong ones), publishing nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `convoy consumer ...`
#[derive(Debug, Subcommand)]
pub enum ConsumerCommand {
    /// Create a consumer with its nodes.
    Create {
        /// Name of the new consumer: 1-200 bytes of letters, digits, '-', '_' and '.'.
        name: String,
        /// Node ids, comma-separated, in ordinal order.
        #[arg(long, value_delimiter = ',', value_name = "NODE,...")]
        nodes: Vec<String>,
    },
    /// Add nodes to a consumer (and/or remove some).
    AddNodes {
        /// Name of the consumer whose nodes change.
        name: String,
        /// Node ids to add.
        nodes: Vec<String>,
        /// Node ids to remove (repeatable or comma-separated).
        #[arg(long, value_delimiter = ',', value_name = "NODE")]
        remove: Vec<String>,
    },
    /// Subscribe a consumer to a resource, or change the subscription's policy.
    Subscribe(SubscribeArgs),
    /// Lift the hold on a version a deployment rolled back, so it may be selected again.
    ClearHold {
        /// Name of the consumer that holds the version back.
        consumer: String,
        /// Name of the resource the held version belongs to.
        resource: String,
        /// The held version.
        version: u64,
    },
    /// Delete a subscription: the consumer's nodes uninstall the resource (unless another of their
    /// consumers subscribes to it).
    Unsubscribe {
        /// Name of the subscribed consumer.
        consumer: String,
        /// Name of the resource it stops subscribing to.
        resource: String,
    },
    /// Delete a consumer: its nodes uninstall what no other consumer of theirs subscribes to.
    Delete {
        /// Name of the consumer to delete.
        name: String,
    },
    /// Show a consumer, its nodes and subscriptions.
    Show {
        /// Name of the consumer to show.
        name: String,
    },
    /// List consumers: how many nodes each has and the resources it subscribes to.
    List(ListArgs),
    /// Show, set (`--max-unavailable`, `--min-available`) or remove (`--delete`) a consumer's disruption
    /// budget: how many of its nodes every deployment together may take down at once.
    Budget(BudgetArgs),
}

/// Consistency mode of a subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Every node on its own, at once.
    Weak,
    /// Nodes converge through deployments.
    Strong,
}

/// `convoy consumer subscribe`: creates the subscription, or changes only the fields given.
#[derive(Debug, Args)]
pub struct SubscribeArgs {
    /// Name of the consumer to subscribe (or whose subscription changes).
    pub consumer: String,
    /// Name of the resource it subscribes to.
    pub resource: String,
    /// Consistency mode (the server's default is weak).
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    #[command(flatten)]
    pub strategy: StrategyArgs,
    /// Pin the consumer to this version.
    #[arg(long, value_name = "VERSION")]
    pub pin: Option<u64>,
    #[command(flatten)]
    pub completion: CompletionArgs,
    /// Its deployments: a node succeeds after staying healthy this long.
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_millis)]
    pub min_healthy_ms: Option<u64>,
    /// Its deployments: retries a node may use before it counts as failed.
    #[arg(long, value_name = "N")]
    pub max_failures_per_node: Option<u32>,
    /// Its deployments: failed nodes tolerated before the deployment fails.
    #[arg(long, value_name = "N")]
    pub max_failed_nodes: Option<FailedNodes>,
    /// Its deployments: on failure, stop (FAILED) instead of rolling back.
    #[arg(long)]
    pub no_rollback: bool,
    /// Its deployments are coordinated: they block unless pulsed at least this often.
    #[arg(long, value_name = "DURATION", value_parser = convoy_time::parse_millis)]
    pub pulse_interval_ms: Option<u64>,
    /// Weak: the brake holds a version back once more nodes than this fail it within its window (a count,
    /// or a percentage of the consumer's nodes; default 20%).
    #[arg(long, value_name = "N|P%")]
    pub brake_max_failed: Option<FailedNodes>,
    /// Weak: how far back the brake counts failures (default 10m).
    #[arg(long, value_name = "DURATION", value_parser = window_ms)]
    pub brake_window: Option<u64>,
    /// Weak: turn the brake off (every node may fail a version).
    #[arg(long, conflicts_with_all = ["brake_max_failed", "brake_window"])]
    pub no_brake: bool,
    /// Unset fields of an existing subscription (back to their defaults), comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "FIELD,...")]
    pub clear: Vec<ClearField>,
}

/// `--brake-window`: a duration with its unit (`10m`), in milliseconds.
fn window_ms(raw: &str) -> Result<u64, convoy_time::DurationError> {
    let d = convoy_time::parse_duration(raw)?;
    u64::try_from(d.as_millis()).map_err(|_| convoy_time::DurationError::TooLong {
        value: raw.chars().take(100).collect(),
    })
}

/// A subscription field `consumer subscribe --clear` can unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClearField {
    /// The pin (selection takes the newest version allowed again).
    Pin,
    /// The strategy (back to rolling, install 1, download 2).
    Strategy,
    /// The completion conditions.
    Completion,
    /// The watch time.
    MinHealthyMs,
    /// The retries per node.
    MaxFailuresPerNode,
    /// The failed nodes tolerated.
    MaxFailedNodes,
    /// Stop instead of rolling back (back to rolling back).
    RollbackOnFailure,
    /// The pulse interval.
    PulseIntervalMs,
    /// The brake (back to on, at 20% within 10 minutes).
    Brake,
}

impl ClearField {
    /// Its name in the API's JSON.
    pub fn json_name(self) -> &'static str {
        match self {
            ClearField::Pin => "pin",
            ClearField::Strategy => "strategy",
            ClearField::Completion => "completion",
            ClearField::MinHealthyMs => "min_healthy_ms",
            ClearField::MaxFailuresPerNode => "max_failures_per_node",
            ClearField::MaxFailedNodes => "max_failed_nodes",
            ClearField::RollbackOnFailure => "rollback_on_failure",
            ClearField::PulseIntervalMs => "pulse_interval_ms",
            ClearField::Brake => "brake",
        }
    }
}

/// `convoy group ...`
#[derive(Debug, Subcommand)]
pub enum GroupCommand {
    /// Create a consumer group.
    Create {
        /// Name of the new group: 1-200 bytes of letters, digits, '-', '_' and '.'.
        name: String,
        /// A member `CONSUMER:RESOURCE` (repeatable).
        #[arg(long = "member", required = true, value_name = "CONSUMER:RESOURCE", value_parser = parse_member)]
        members: Vec<Member>,
    },
    /// List consumer groups.
    List(ListArgs),
    /// Show a consumer group.
    Show {
        /// Name of the group to show.
        name: String,
    },
    /// Delete a consumer group (refused while one of its group deployments runs).
    Delete {
        /// Name of the group to delete.
        name: String,
    },
    /// Start a group deployment across the group's members in dependency order.
    Deploy {
        /// Name of the group to deploy.
        name: String,
        /// Version of a resource `RESOURCE=N` (repeatable; default: each member's selected version).
        #[arg(long = "version", value_name = "RESOURCE=N", value_parser = parse_resource_version)]
        versions: Vec<(String, u64)>,
    },
    /// Show what `group deploy` would do (steps, versions and why, each member's node plan), changing
    /// nothing.
    Plan {
        /// Name of the group whose deployment to plan.
        name: String,
        /// Version of a resource `RESOURCE=N` (repeatable; default: each member's selected version).
        #[arg(long = "version", value_name = "RESOURCE=N", value_parser = parse_resource_version)]
        versions: Vec<(String, u64)>,
    },
    /// Show a group deployment and its steps.
    Info {
        /// Group deployment id (g-N).
        id: String,
    },
    /// Abort a group deployment.
    Abort {
        /// Group deployment id (g-N).
        id: String,
    },
}

/// `convoy node ...`
#[derive(Debug, Subcommand)]
pub enum NodeCommand {
    /// List nodes: version per resource, phase, active, last report age, consumers.
    List {
        /// Only this consumer's nodes.
        #[arg(long)]
        consumer: Option<String>,
        #[command(flatten)]
        list: ListArgs,
    },
    /// Show a node: versions, deployments, targets and when it last reported.
    Show {
        /// Id of the node to show.
        id: String,
    },
}

/// `convoy cluster ...`
#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Show every member as it answers for itself: reachable, role, term, applied index and lag.
    Status,
    /// Add a server (learner, then voter).
    Add {
        /// The new server's id.
        id: u64,
        /// Its raft (internal) address.
        #[arg(long, value_name = "HOST:PORT")]
        raft_addr: String,
        /// Its HTTP API address.
        #[arg(long, value_name = "HOST:PORT")]
        http_addr: String,
    },
    /// Remove a server.
    Remove {
        /// The server's id.
        id: u64,
    },
    /// Replace a server whose data dir was lost: remove it, add it back as a learner, promote it.
    ReplaceMember {
        /// The server's id.
        id: u64,
    },
    /// Show the fleet-wide limits on installs and downloads at once, or set them (admin).
    Limits(LimitsArgs),
}

/// `convoy cluster limits [--installs N] [--downloads N] [--unlimited]`: without a flag, shows them; a flag
/// changes its limit and keeps the other.
#[derive(Debug, Args)]
pub struct LimitsArgs {
    /// At most this many nodes installing at once across every deployment.
    #[arg(long, value_name = "N", conflicts_with = "unlimited")]
    pub installs: Option<u32>,
    /// At most this many nodes downloading at once across every deployment.
    #[arg(long, value_name = "N", conflicts_with = "unlimited")]
    pub downloads: Option<u32>,
    /// Remove both limits (set by the API from then on: no server's config puts them back).
    #[arg(long)]
    pub unlimited: bool,
}

/// `convoy consumer budget NAME [--max-unavailable N | --min-available N | --delete]`: without a flag, shows it.
#[derive(Debug, Args)]
pub struct BudgetArgs {
    /// Name of the consumer whose budget is shown or changed.
    pub consumer: String,
    /// At most this many of its nodes unavailable at once: a count (1) or a percentage of its active nodes
    /// (10%, rounded down, at least 1).
    #[arg(long, value_name = "N|P%", conflicts_with_all = ["min_available", "delete"])]
    pub max_unavailable: Option<FailedNodes>,
    /// At least this many of its active nodes available at once: a count or a percentage (rounded up).
    #[arg(long, value_name = "N|P%", conflicts_with = "delete")]
    pub min_available: Option<FailedNodes>,
    /// Remove the budget.
    #[arg(long)]
    pub delete: bool,
}
