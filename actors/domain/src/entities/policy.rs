//! A subscription's deployment policy (every setting of DEPLOYMENTS.md §5 but the node set), how a
//! deployment's settings are resolved from it (start → subscription → safe defaults), and field-by-field
//! changes to it (`PATCH`).

use crate::analysis::spec::Analysis;
use crate::entities::brake::Brake;
use crate::errors::DomainError;
use crate::values::strategy::{default_strategy, MAX_START_JITTER_MS};
use crate::values::strategy::{Completion, Pacing, Settings, Strategy};
use crate::values::threshold::FailedNodes;
use serde::{Deserialize, Serialize};

/// The settings of the deployments of a subscription; `None` = not set here (the next level decides).
/// Replicated (bincode): no field is skipped when encoding.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Strategy; default rolling(install 1, download 2).
    #[serde(default)]
    pub strategy: Option<Strategy>,
    /// Watch time; default 0.
    #[serde(default)]
    pub min_healthy_ms: Option<u64>,
    /// Retries per node; default 0.
    #[serde(default)]
    pub max_failures_per_node: Option<u32>,
    /// Failed nodes tolerated; default: rolling, the window rule; others 0.
    #[serde(default)]
    pub max_failed_nodes: Option<FailedNodes>,
    /// Roll back on failure; default true.
    #[serde(default)]
    pub rollback_on_failure: Option<bool>,
    /// Makes its deployments coordinated; default unset.
    #[serde(default)]
    pub pulse_interval_ms: Option<u64>,
    /// Completion conditions; default all nodes, no timeout.
    #[serde(default)]
    pub completion: Option<Completion>,
    /// Bake time, deadlines and confirmation gates (replaced as a whole); default none but a healthy
    /// deadline of 10 minutes past `min_healthy`.
    #[serde(default)]
    pub pacing: Option<Pacing>,
    /// Metric analysis (DEPLOYMENTS.md "Analysis"); default none.
    #[serde(default)]
    pub analysis: Option<Analysis>,
    /// A weak subscription's brake (DEPLOYMENTS.md §4); unset: on, at 20% within 10 minutes. Not a
    /// deployment setting: its deployments ignore it.
    #[serde(default)]
    pub brake: Option<Brake>,
    /// A weak subscription's start jitter (ms, at most a day; DEPLOYMENTS.md §4): each node's move to a newly
    /// selected version waits an offset in `[0, start_jitter_ms)`; unset or 0: none. Not a deployment
    /// setting: a deployment's is its start's own.
    #[serde(default)]
    pub start_jitter_ms: Option<u64>,
}

impl Policy {
    /// Field by field: this policy's value where set, else `fallback`'s.
    pub fn or(self, fallback: &Policy) -> Policy {
        Policy {
            strategy: self.strategy.or_else(|| fallback.strategy.clone()),
            min_healthy_ms: self.min_healthy_ms.or(fallback.min_healthy_ms),
            max_failures_per_node: self
                .max_failures_per_node
                .or(fallback.max_failures_per_node),
            max_failed_nodes: self.max_failed_nodes.or(fallback.max_failed_nodes),
            rollback_on_failure: self.rollback_on_failure.or(fallback.rollback_on_failure),
            pulse_interval_ms: self.pulse_interval_ms.or(fallback.pulse_interval_ms),
            completion: self.completion.or_else(|| fallback.completion.clone()),
            pacing: self.pacing.or_else(|| fallback.pacing.clone()),
            analysis: self.analysis.or_else(|| fallback.analysis.clone()),
            brake: self.brake.or(fallback.brake),
            start_jitter_ms: self.start_jitter_ms.or(fallback.start_jitter_ms),
        }
    }

    /// The settings, with the defaults of DEPLOYMENTS.md §5 for what is unset.
    pub fn settings(self) -> Settings {
        Settings {
            strategy: self.strategy.unwrap_or_else(default_strategy),
            min_healthy_ms: self.min_healthy_ms.unwrap_or(0),
            max_failures_per_node: self.max_failures_per_node.unwrap_or(0),
            max_failed_nodes: self.max_failed_nodes,
            rollback_on_failure: self.rollback_on_failure.unwrap_or(true),
            pulse_interval_ms: self.pulse_interval_ms,
            completion: self.completion.unwrap_or_default(),
            pacing: self.pacing.unwrap_or_default(),
            analysis: self.analysis,
            start_jitter_ms: 0,
        }
    }

    /// Refuses what no deployment could run with (zero windows, quorums, intervals...).
    pub fn validate(&self) -> Result<(), DomainError> {
        if let Some(b) = &self.brake {
            b.validate()?;
        }
        if let Some(j) = self.start_jitter_ms.filter(|j| *j > MAX_START_JITTER_MS) {
            return Err(DomainError::invalid(
                "start_jitter_ms",
                j,
                "at most a day (86400000 ms)",
            ));
        }
        Ok(self.clone().settings().validate()?)
    }

    /// The brake of a weak subscription with this policy: the one set, else the default.
    pub fn brake(&self) -> Brake {
        self.brake.unwrap_or_default()
    }

    /// Applies `patch`: `Keep` leaves a field, `Clear` unsets it, `Set` replaces it.
    pub fn patch(&mut self, patch: PolicyPatch) {
        patch.strategy.apply(&mut self.strategy);
        patch.min_healthy_ms.apply(&mut self.min_healthy_ms);
        patch
            .max_failures_per_node
            .apply(&mut self.max_failures_per_node);
        patch.max_failed_nodes.apply(&mut self.max_failed_nodes);
        patch
            .rollback_on_failure
            .apply(&mut self.rollback_on_failure);
        patch.pulse_interval_ms.apply(&mut self.pulse_interval_ms);
        patch.completion.apply(&mut self.completion);
        patch.pacing.apply(&mut self.pacing);
        patch.analysis.apply(&mut self.analysis);
        patch.brake.apply(&mut self.brake);
        patch.start_jitter_ms.apply(&mut self.start_jitter_ms);
    }
}

/// A change to one optional field: keep it, clear it (back to the default), or set it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Change<T> {
    /// Leave the field as it is (the field was absent from the request).
    #[default]
    Keep,
    /// Unset the field (the request gave `null`).
    Clear,
    /// Set the field to this value.
    Set(T),
}

impl<T> Change<T> {
    /// From JSON's three cases: absent (`None`), `null` (`Some(None)`), a value (`Some(Some(v))`).
    pub fn from_json(field: Option<Option<T>>) -> Self {
        match field {
            None => Change::Keep,
            Some(None) => Change::Clear,
            Some(Some(v)) => Change::Set(v),
        }
    }

    /// Applies the change to `field`.
    pub fn apply(self, field: &mut Option<T>) {
        match self {
            Change::Keep => {}
            Change::Clear => *field = None,
            Change::Set(v) => *field = Some(v),
        }
    }
}

/// Field-by-field changes to a [`Policy`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicyPatch {
    /// Change to the strategy (replaced as a whole).
    pub strategy: Change<Strategy>,
    /// Change to the watch time (ms) a healthy node waits out before it succeeds.
    pub min_healthy_ms: Change<u64>,
    /// Retries per node.
    pub max_failures_per_node: Change<u32>,
    /// Failed nodes tolerated.
    pub max_failed_nodes: Change<FailedNodes>,
    /// Roll back on failure.
    pub rollback_on_failure: Change<bool>,
    /// Change to the pulse interval (ms) of later deployments; a set interval makes them
    /// coordinated.
    pub pulse_interval_ms: Change<u64>,
    /// Completion conditions (replaced as a whole).
    pub completion: Change<Completion>,
    /// Bake time, deadlines and gates (replaced as a whole).
    #[serde(default)]
    pub pacing: Change<Pacing>,
    /// Metric analysis (replaced as a whole).
    #[serde(default)]
    pub analysis: Change<Analysis>,
    /// A weak subscription's brake (replaced as a whole; cleared: the default).
    #[serde(default)]
    pub brake: Change<Brake>,
    /// A weak subscription's start jitter (ms; cleared: none).
    #[serde(default)]
    pub start_jitter_ms: Change<u64>,
}

#[cfg(test)]
#[path = "policy_test.rs"]
mod tests;
