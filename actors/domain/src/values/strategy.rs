//! Strategies, completion conditions and deployment settings, with their validation (DEPLOYMENTS.md §5, §9).

use crate::analysis::spec::{Analysis, AnalysisInvalid};
use crate::values::invalid::Invalid;
use crate::values::threshold::FailedNodes;
use serde::{Deserialize, Serialize};

/// Install window of the default strategy (no strategy on the start nor on the subscription).
pub const DEFAULT_INSTALL_WINDOW: u32 = 1;
/// Download (prefetch) window of the default strategy.
pub const DEFAULT_DOWNLOAD_WINDOW: u32 = 2;

/// The safe default strategy: rolling, one node installing at a time, two prefetching.
pub fn default_strategy() -> Strategy {
    Strategy::Rolling {
        install_window: DEFAULT_INSTALL_WINDOW,
        download_window: DEFAULT_DOWNLOAD_WINDOW,
    }
}

/// How nodes are admitted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Every node at once; judged when every node is done, unless `fail_fast`.
    AllAtOnce {
        /// Judge at once, as failures come (the first failure beyond `max_failed_nodes` fails it while
        /// the other nodes still install), instead of when every node is done.
        #[serde(default)]
        fail_fast: bool,
    },
    /// At most `install_window` installing and `download_window` prefetching, in the fixed order.
    Rolling {
        /// Install window (≥ 1).
        install_window: u32,
        /// Download (prefetch) window (≥ 1).
        download_window: u32,
    },
    /// Batches of `sizes` (the last repeating); the next starts when the previous has finished.
    Batch {
        /// Batch sizes (each ≥ 1, at least one).
        sizes: Vec<u32>,
        /// Pause (`paused_by = auto`) after each batch.
        #[serde(default)]
        autopause: bool,
    },
}

impl Default for Strategy {
    /// The safe default: rolling, install window 1, download window 2 ([`default_strategy`]).
    fn default() -> Self {
        default_strategy()
    }
}

impl Strategy {
    /// Refuses zero windows and empty or zero batch sizes.
    pub fn validate(&self) -> Result<(), Invalid> {
        match self {
            Strategy::AllAtOnce { .. } => Ok(()),
            Strategy::Rolling {
                install_window,
                download_window,
            } => {
                if *install_window == 0 {
                    return Err(Invalid::new(
                        "install_window",
                        0,
                        "a window must be at least 1",
                    ));
                }
                if *download_window == 0 {
                    return Err(Invalid::new(
                        "download_window",
                        0,
                        "a window must be at least 1",
                    ));
                }
                Ok(())
            }
            Strategy::Batch { sizes, .. } => {
                if sizes.is_empty() {
                    return Err(Invalid::new(
                        "batch.sizes",
                        "[]",
                        "give at least one batch size",
                    ));
                }
                if sizes.contains(&0) {
                    return Err(Invalid::new(
                        "batch.sizes",
                        format!("{sizes:?}"),
                        "batch sizes must be at least 1",
                    ));
                }
                Ok(())
            }
        }
    }

    /// How this strategy admits nodes and which failure rule it adds: the one place each variant says so.
    /// The match is exhaustive on purpose: a new variant does not compile until it answers here (and in the
    /// other exhaustive matches: `validate`, the plan's steps, the summary's windows, the CLI's rendering).
    pub fn admission(&self) -> Admission<'_> {
        match self {
            Strategy::AllAtOnce { fail_fast } => Admission {
                plan: Plan::Windows {
                    install: u32::MAX,
                    download: 0,
                    rollback: u32::MAX,
                },
                window_rule: None,
                fetch_limit: None,
                judge_when_done: !fail_fast,
            },
            Strategy::Rolling {
                install_window,
                download_window,
            } => Admission {
                plan: Plan::Windows {
                    install: *install_window,
                    download: *download_window,
                    rollback: *install_window,
                },
                window_rule: Some(*install_window),
                fetch_limit: Some(*download_window),
                judge_when_done: false,
            },
            Strategy::Batch { sizes, autopause } => Admission {
                plan: Plan::Batches {
                    sizes,
                    autopause: *autopause,
                },
                window_rule: None,
                fetch_limit: None,
                judge_when_done: false,
            },
        }
    }

    /// The size of batch `index` (the last size repeats).
    pub fn batch_size(sizes: &[u32], index: usize) -> u32 {
        sizes.get(index).or(sizes.last()).copied().unwrap_or(1)
    }
}

/// A strategy's answer to "who may start now", from [`Strategy::admission`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission<'a> {
    /// Windows or batches.
    pub plan: Plan<'a>,
    /// The window rule: this many failed nodes (which keep their install slots) fail the deployment
    /// whatever `max_failed_nodes` says while nodes still wait for a slot. Rolling only: its failed nodes
    /// would otherwise stall the window.
    pub window_rule: Option<u32>,
    /// At most this many nodes are told to fetch the version while they do not hold it: prefetching, and
    /// admitted to install without it (rolling: the download window). `None`: no limit.
    pub fetch_limit: Option<u32>,
    /// Failures are judged only once every node is done (all-at-once without `fail_fast`), not as they come.
    pub judge_when_done: bool,
}

/// How nodes are admitted, going forward and rolling back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan<'a> {
    /// Windows sliding over the fixed order; `u32::MAX` is no limit.
    Windows {
        /// Nodes installing, watching or failed at once, going forward.
        install: u32,
        /// Nodes prefetching ahead of the installs (0: no prefetch).
        download: u32,
        /// Nodes rolling back at once.
        rollback: u32,
    },
    /// Batches of `sizes` (the last size repeating): the next batch starts when every node of the previous
    /// one finished; a rollback re-targets the batches in reverse, one batch at a time.
    Batches {
        /// Batch sizes, each at least 1.
        sizes: &'a [u32],
        /// Pause (`paused_by = auto`) after each batch.
        autopause: bool,
    },
}

/// When a deployment completes before every node finished.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Completion {
    /// ≤ 1.0: fraction of the (non-skipped) node set; > 1: a count of successful nodes.
    #[serde(default)]
    pub quorum: Option<f64>,
    /// After this long (from creation) the deployment ends; `on_timeout` says how.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// What the timeout does with the nodes not done: `finish` (the default) or `fail`.
    #[serde(default)]
    pub on_timeout: OnTimeout,
}

/// What a completion timeout does (DEPLOYMENTS.md §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnTimeout {
    /// The nodes not done are recorded `timed_out` and left where they are; the deployment is
    /// ROLLED_FORWARD unless more nodes failed than tolerated, a quorum that was set is not met, or no
    /// node succeeded (then the failure path).
    #[default]
    Finish,
    /// The deployment is ROLLED_FORWARD only if the quorum (default: every node) is met; otherwise the
    /// failure path (roll back with `rollback_on_failure`, else FAILED).
    Fail,
}

impl Completion {
    /// Refuses non-positive quorums, fractional counts and zero timeouts.
    pub fn validate(&self) -> Result<(), Invalid> {
        if let Some(q) = self.quorum {
            if !q.is_finite() || q <= 0.0 {
                return Err(Invalid::new(
                    "completion.quorum",
                    q,
                    "a quorum must be positive",
                ));
            }
            if q > 1.0 && q.fract() != 0.0 {
                return Err(Invalid::new(
                    "completion.quorum",
                    q,
                    "above 1 a quorum is a whole count of nodes",
                ));
            }
        }
        if self.timeout_ms == Some(0) {
            return Err(Invalid::new(
                "completion.timeout_ms",
                0,
                "a timeout must be positive",
            ));
        }
        Ok(())
    }

    /// Successful nodes needed out of `considered` (the node set minus skipped nodes).
    pub fn needed(&self, considered: u32) -> u32 {
        match self.quorum {
            None => considered,
            Some(q) if q <= 1.0 => (q * f64::from(considered)).ceil() as u32,
            Some(q) => q as u32,
        }
    }
}

/// A deployment's settings, fixed at creation (DEPLOYMENTS.md §5).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Settings {
    /// How nodes are admitted: all at once, rolling install and download windows, or batches.
    pub strategy: Strategy,
    /// Watch time after a healthy install before a node succeeds.
    pub min_healthy_ms: u64,
    /// Retries a node may use before it counts as failed.
    pub max_failures_per_node: u32,
    /// Failed nodes tolerated; `None` = 0, whatever the strategy.
    pub max_failed_nodes: Option<FailedNodes>,
    /// Roll back on failure instead of stopping.
    pub rollback_on_failure: bool,
    /// Coordinated when set.
    pub pulse_interval_ms: Option<u64>,
    /// When it may end before every node finished: a quorum of successes, a timeout from creation
    /// (default: every node, no timeout).
    pub completion: Completion,
    /// Bake time between batches or waves, node and progress deadlines, confirmation gates
    /// (DEPLOYMENTS.md §14).
    #[serde(default)]
    pub pacing: Pacing,
    /// Metric analysis against a provider of the servers' config (DEPLOYMENTS.md "Analysis"); none by default.
    #[serde(default)]
    pub analysis: Option<Analysis>,
    /// Each node's first admission waits a deterministic offset in `[0, start_jitter_ms)` from the start
    /// (DEPLOYMENTS.md §16); 0: none. Set by the start only.
    #[serde(default)]
    pub start_jitter_ms: u64,
}

impl Settings {
    /// Refuses meaningless values.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.strategy.validate()?;
        self.completion.validate()?;
        if let Some(m) = self.max_failed_nodes {
            m.validate()?;
        }
        if let Some(a) = &self.analysis {
            a.validate()?;
        }
        if self.start_jitter_ms > MAX_START_JITTER_MS {
            return Err(Invalid::new(
                "start_jitter_ms",
                self.start_jitter_ms,
                "a start jitter is at most one day (86400000 ms)",
            ));
        }
        if self.pulse_interval_ms == Some(0) {
            return Err(Invalid::new(
                "pulse_interval_ms",
                0,
                "a pulse interval must be positive",
            ));
        }
        self.pacing.validate(&self.strategy, self.min_healthy_ms)
    }

    /// A node's healthy deadline: the one set, else [`DEFAULT_HEALTHY_DEADLINE_MS`] past the watch
    /// (`min_healthy`), so that a long watch is never cut short by the default.
    pub fn healthy_deadline_ms(&self) -> u64 {
        self.pacing
            .healthy_deadline_ms
            .unwrap_or_else(|| DEFAULT_HEALTHY_DEADLINE_MS.saturating_add(self.min_healthy_ms))
    }

    /// Nodes are admitted in waves (rolling): a wave of `install_window` nodes forms only once the previous
    /// one finished, so that a bake or a gate can stand between waves.
    pub fn waves(&self) -> bool {
        matches!(self.strategy, Strategy::Rolling { .. }) && self.pacing.between_groups()
    }

    /// Failed nodes tolerated before the deployment fails, for a deployment of `nodes` nodes: none unless
    /// `max_failed_nodes` says so (Aurora's `max_total_failures`), whatever the strategy.
    pub fn failed_nodes_tolerated(&self, nodes: u32) -> u32 {
        self.max_failed_nodes.map_or(0, |n| n.of(nodes))
    }
}

impl From<AnalysisInvalid> for Invalid {
    fn from(e: AnalysisInvalid) -> Self {
        Invalid {
            field: e.field,
            value: e.value,
            reason: e.reason,
        }
    }
}

/// A node's healthy deadline when none is set: 10 minutes (past its `min_healthy` watch).
pub const DEFAULT_HEALTHY_DEADLINE_MS: u64 = 600_000;

/// Where a deployment waits for `POST /v1/deployments/{id}/confirm` (DEPLOYMENTS.md §14).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// Before the first node is admitted.
    BeforeStart,
    /// Before every batch (rolling: every wave) after the first.
    BeforeEachBatch,
    /// Once, before the second batch or wave: after the first (the canary) finished.
    BeforePromotion,
}

impl Gate {
    /// The gate stands before group `index` (0: the first batch or wave).
    pub fn stands_before(self, index: u32) -> bool {
        match self {
            Gate::BeforeStart => index == 0,
            Gate::BeforeEachBatch => index >= 1,
            Gate::BeforePromotion => index == 1,
        }
    }
}

/// Most gates a deployment lists (there are three kinds).
pub const MAX_GATES: usize = 3;

/// The longest start jitter accepted (one day).
pub const MAX_START_JITTER_MS: u64 = 24 * 60 * 60 * 1000;

/// A deployment's pace and bounds: bake time between batches or rolling waves, per node and per deployment
/// deadlines, and confirmation gates (DEPLOYMENTS.md §14). Every field is optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Pacing {
    /// Wait this long after a batch (rolling: a wave of `install_window` nodes) finished before the next
    /// one starts; frozen while paused or awaiting a pulse.
    #[serde(default)]
    pub bake_ms: Option<u64>,
    /// A node must be done and healthy (its `min_healthy` watch over) this long after its install started
    /// (not its download); past it the node counts one failed attempt. Default: 10 minutes past
    /// `min_healthy`.
    #[serde(default)]
    pub healthy_deadline_ms: Option<u64>,
    /// A node must hold the version this long after it was told to fetch it; past it the node counts one
    /// failed attempt. Default: none.
    #[serde(default)]
    pub download_deadline_ms: Option<u64>,
    /// Some node must succeed at least this often (from the start, the last success or a resume; frozen
    /// while paused or awaiting a pulse); past it the deployment takes the failure path. Default: none.
    #[serde(default)]
    pub progress_deadline_ms: Option<u64>,
    /// Where the deployment waits for a confirmation.
    #[serde(default)]
    pub confirm: Vec<Gate>,
}

impl Pacing {
    /// Refuses zero durations, a deadline no longer than the `min_healthy` watch it must contain (the
    /// agent's health-check grace is the agent's own setting and not known here: DEPLOYMENTS.md §14), more
    /// gates than kinds, and waits between batches of a strategy that has one batch.
    pub fn validate(&self, strategy: &Strategy, min_healthy_ms: u64) -> Result<(), Invalid> {
        let fields = [
            ("pacing.bake_ms", self.bake_ms),
            ("pacing.healthy_deadline_ms", self.healthy_deadline_ms),
            ("pacing.download_deadline_ms", self.download_deadline_ms),
            ("pacing.progress_deadline_ms", self.progress_deadline_ms),
        ];
        for (field, value) in fields {
            if value == Some(0) {
                return Err(Invalid::new(field, 0, "a duration must be positive"));
            }
        }
        let deadlines = [
            ("pacing.healthy_deadline_ms", self.healthy_deadline_ms),
            ("pacing.progress_deadline_ms", self.progress_deadline_ms),
        ];
        for (field, value) in deadlines {
            if let Some(ms) = value.filter(|ms| *ms <= min_healthy_ms) {
                return Err(Invalid::new(
                    field,
                    ms,
                    &format!(
                        "the deadline must be longer than min_healthy_ms = {min_healthy_ms} (the watch a node must pass within it)"
                    ),
                ));
            }
        }
        if self.confirm.len() > MAX_GATES {
            return Err(Invalid::new(
                "pacing.confirm",
                self.confirm.len(),
                "list each gate at most once",
            ));
        }
        if matches!(strategy, Strategy::AllAtOnce { .. }) && self.between_groups() {
            return Err(Invalid::new(
                "pacing",
                "all_at_once",
                "all_at_once has a single batch: bake_ms, before_each_batch and before_promotion need batch or rolling",
            ));
        }
        Ok(())
    }

    /// Something waits between batches or waves: a bake, or a gate after the first.
    pub fn between_groups(&self) -> bool {
        self.bake_ms.is_some()
            || self
                .confirm
                .iter()
                .any(|g| matches!(g, Gate::BeforeEachBatch | Gate::BeforePromotion))
    }

    /// A gate stands before group `index`.
    pub fn gate_before(&self, index: u32) -> bool {
        self.confirm.iter().any(|g| g.stands_before(index))
    }
}

#[cfg(test)]
#[path = "strategy_test.rs"]
mod tests;
