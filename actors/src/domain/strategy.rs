//! Strategies, completion conditions and deployment settings, with their validation (DEPLOYMENTS.md §5, §9).

use super::errors::DomainError;
use super::threshold::FailedNodes;
use serde::{Deserialize, Serialize};

/// How nodes are admitted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Every node at once.
    AllAtOnce {},
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
    /// The safe default: rolling, install window 1, download window 2 (see `policy`).
    fn default() -> Self {
        super::policy::default_strategy()
    }
}

impl Strategy {
    /// Refuses zero windows and empty or zero batch sizes.
    pub fn validate(&self) -> Result<(), DomainError> {
        match self {
            Strategy::AllAtOnce {} => Ok(()),
            Strategy::Rolling {
                install_window,
                download_window,
            } => {
                if *install_window == 0 {
                    return Err(DomainError::invalid(
                        "install_window",
                        0,
                        "a window must be at least 1",
                    ));
                }
                if *download_window == 0 {
                    return Err(DomainError::invalid(
                        "download_window",
                        0,
                        "a window must be at least 1",
                    ));
                }
                Ok(())
            }
            Strategy::Batch { sizes, .. } => {
                if sizes.is_empty() {
                    return Err(DomainError::invalid(
                        "batch.sizes",
                        "[]",
                        "give at least one batch size",
                    ));
                }
                if sizes.contains(&0) {
                    return Err(DomainError::invalid(
                        "batch.sizes",
                        format!("{sizes:?}"),
                        "batch sizes must be at least 1",
                    ));
                }
                Ok(())
            }
        }
    }

    /// The size of batch `index` (the last size repeats).
    pub fn batch_size(sizes: &[u32], index: usize) -> u32 {
        sizes.get(index).or(sizes.last()).copied().unwrap_or(1)
    }
}

/// When a deployment completes before every node finished.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Completion {
    /// ≤ 1.0: fraction of the (non-skipped) node set; > 1: a count of successful nodes.
    #[serde(default)]
    pub quorum: Option<f64>,
    /// After this long the deployment ends: ROLLED_FORWARD if the quorum (default: all) is met, FAILED otherwise.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl Completion {
    /// Refuses non-positive quorums, fractional counts and zero timeouts.
    pub fn validate(&self) -> Result<(), DomainError> {
        if let Some(q) = self.quorum {
            if !q.is_finite() || q <= 0.0 {
                return Err(DomainError::invalid(
                    "completion.quorum",
                    q,
                    "a quorum must be positive",
                ));
            }
            if q > 1.0 && q.fract() != 0.0 {
                return Err(DomainError::invalid(
                    "completion.quorum",
                    q,
                    "above 1 a quorum is a whole count of nodes",
                ));
            }
        }
        if self.timeout_ms == Some(0) {
            return Err(DomainError::invalid(
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
    /// Strategy.
    pub strategy: Strategy,
    /// Watch time after a healthy install before a node succeeds.
    pub min_healthy_ms: u64,
    /// Retries a node may use before it counts as failed.
    pub max_failures_per_node: u32,
    /// Failed nodes tolerated; `None` = rolling: only the window rule; others: 0.
    pub max_failed_nodes: Option<FailedNodes>,
    /// Roll back on failure instead of stopping.
    pub rollback_on_failure: bool,
    /// Coordinated when set.
    pub pulse_interval_ms: Option<u64>,
    /// Completion conditions.
    pub completion: Completion,
}

impl Settings {
    /// Refuses meaningless values.
    pub fn validate(&self) -> Result<(), DomainError> {
        self.strategy.validate()?;
        self.completion.validate()?;
        if let Some(m) = self.max_failed_nodes {
            m.validate()?;
        }
        if self.pulse_interval_ms == Some(0) {
            return Err(DomainError::invalid(
                "pulse_interval_ms",
                0,
                "a pulse interval must be positive",
            ));
        }
        Ok(())
    }

    /// Failed nodes tolerated before the deployment fails, for a deployment of `nodes` nodes.
    pub fn failed_nodes_tolerated(&self, nodes: u32) -> u32 {
        match (&self.strategy, self.max_failed_nodes) {
            (_, Some(n)) => n.of(nodes),
            (Strategy::Rolling { .. }, None) => u32::MAX,
            (_, None) => 0,
        }
    }
}

#[cfg(test)]
#[path = "strategy_test.rs"]
mod tests;
