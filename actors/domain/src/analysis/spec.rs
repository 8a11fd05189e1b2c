//! The `analysis` spec: which provider, which metrics with their queries, conditions, timing and limits, and
//! what a failing or inconclusive verdict does; every field bounded and validated with the field and value named.

use crate::analysis::condition::Condition;
use serde::{Deserialize, Serialize};

/// Most metrics in one analysis.
pub const MAX_METRICS: usize = 8;
/// Longest metric or provider name, in bytes.
pub const MAX_METRIC_NAME: usize = 64;
/// Longest query template, in bytes.
pub const MAX_QUERY: usize = 2048;
/// Shortest measurement interval (1 s).
pub const MIN_INTERVAL_MS: u64 = 1_000;
/// Longest measurement interval or initial delay (1 day).
pub const MAX_INTERVAL_MS: u64 = 86_400_000;
/// Most measurements a metric may ask for per phase.
pub const MAX_COUNT: u32 = 10_000;
/// Highest failure, inconclusive or consecutive-error limit.
pub const MAX_LIMIT: u32 = 1_000;

/// A refused analysis setting: the field as the API spells it, the value given (clipped), and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field} = {value} is invalid: {reason}")]
pub struct AnalysisInvalid {
    /// The field (`analysis.metrics[0].interval_ms`).
    pub field: String,
    /// The value given, clipped to 100 bytes.
    pub value: String,
    /// Why it is refused.
    pub reason: String,
}

impl AnalysisInvalid {
    /// `analysis.provider` names no provider the server knows; `why` says which it knows.
    pub fn unknown_provider(provider: &str, why: &str) -> Self {
        AnalysisInvalid::new("analysis.provider".into(), format!("{provider:?}"), why)
    }

    fn new(field: String, value: impl std::fmt::Display, reason: &str) -> Self {
        let value = value.to_string();
        let value = if value.len() > 100 {
            let mut end = 100;
            while !value.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}... ({} bytes)", &value[..end], value.len())
        } else {
            value
        };
        AnalysisInvalid {
            field,
            value,
            reason: reason.into(),
        }
    }
}

/// When the analysis measures and what it gates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnalysisMode {
    /// After each batch (or rolling wave of `install_window` nodes) finished: the next is admitted (or the
    /// deployment completes) only once this phase's analysis passed.
    #[default]
    PerBatch,
    /// Measured throughout rolling forward; a failure stops the deployment at once.
    Background,
}

/// What a failed analysis does; default: the deployment's `rollback_on_failure` (roll back, else fail).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnFailure {
    /// Roll the touched nodes back.
    Rollback,
    /// Pause (`paused_by = analysis`).
    Pause,
    /// FAILED, nodes left where they are.
    Fail,
}

/// What an inconclusive analysis does: pause (`paused_by = analysis`), the only choice today.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnInconclusive {
    /// Pause with `paused_by = analysis`; a person resumes it, which measures the phase again.
    #[default]
    Pause,
}

/// How an empty result or NaN counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnOdd {
    /// Counts as inconclusive (the default: no traffic proves nothing).
    #[default]
    Inconclusive,
    /// Counts as a failure.
    Failure,
}

fn default_consecutive_error_limit() -> u32 {
    4
}

fn default_interval_ms() -> u64 {
    60_000
}

/// One metric: a query measured every `interval_ms`, judged by its conditions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    /// Its name, unique in the analysis (letters, digits, `-`, `_`, `.`; at most 64 bytes).
    pub name: String,
    /// The PromQL query, with `{{consumer}}`, `{{resource}}`, `{{version}}`, `{{deployment}}`, `{{nodes}}`.
    pub query: String,
    /// A condition over `result` that makes a measurement successful (`result < 0.01`).
    #[serde(default)]
    pub success: Option<String>,
    /// A condition over `result` that makes a measurement a failure (`result >= 0.05`).
    #[serde(default)]
    pub failure: Option<String>,
    /// Time between measurements (1 s to 1 day; default 60 s).
    #[serde(default = "default_interval_ms")]
    pub interval_ms: u64,
    /// Measurements per phase; default: 1 for `per_batch`, unbounded for `background`.
    #[serde(default)]
    pub count: Option<u32>,
    /// Wait before the first measurement of a phase (0 to 1 day).
    #[serde(default)]
    pub initial_delay_ms: u64,
    /// Failed measurements tolerated (more fail the analysis).
    #[serde(default)]
    pub failure_limit: u32,
    /// Inconclusive measurements tolerated (more make it inconclusive).
    #[serde(default)]
    pub inconclusive_limit: u32,
    /// Consecutive errors tolerated (more make it inconclusive); default 4.
    #[serde(default = "default_consecutive_error_limit")]
    pub consecutive_error_limit: u32,
    /// How an empty result counts.
    #[serde(default)]
    pub on_empty: OnOdd,
    /// How NaN counts.
    #[serde(default)]
    pub on_nan: OnOdd,
    /// Measured and shown, but never judged.
    #[serde(default)]
    pub dry_run: bool,
}

/// A deployment's metric analysis against a provider named in the servers' config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Analysis {
    /// The `[[analysis_provider]]` name in the servers' config (never an address).
    pub provider: String,
    /// `per_batch` (the default) or `background`.
    #[serde(default)]
    pub mode: AnalysisMode,
    /// The metrics measured (1 to 8).
    pub metrics: Vec<MetricSpec>,
    /// What a failed analysis does; default: the deployment's `rollback_on_failure`.
    #[serde(default)]
    pub on_failure: Option<OnFailure>,
    /// What an inconclusive analysis does (pause).
    #[serde(default)]
    pub on_inconclusive: OnInconclusive,
}

/// A safe name: 1 to 64 bytes of letters, digits, `-`, `_`, `.`.
pub fn is_metric_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_METRIC_NAME
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl MetricSpec {
    /// Measurements this metric takes per phase under `mode` (`None`: unbounded).
    pub fn count_in(&self, mode: AnalysisMode) -> Option<u32> {
        match (self.count, mode) {
            (Some(c), _) => Some(c),
            (None, AnalysisMode::PerBatch) => Some(1),
            (None, AnalysisMode::Background) => None,
        }
    }

    fn validate(&self, i: usize) -> Result<(), AnalysisInvalid> {
        let f = |name: &str| format!("analysis.metrics[{i}].{name}");
        if !is_metric_name(&self.name) {
            return Err(AnalysisInvalid::new(
                f("name"),
                format!("{:?}", self.name),
                "a metric name is 1 to 64 letters, digits, '-', '_' or '.'",
            ));
        }
        if self.query.trim().is_empty() || self.query.len() > MAX_QUERY {
            return Err(AnalysisInvalid::new(
                f("query"),
                format!("{:?}", self.query),
                "a query is 1 to 2048 bytes",
            ));
        }
        if let Some(p) = crate::analysis::template::repeated_placeholder(&self.query) {
            return Err(AnalysisInvalid::new(
                f("query"),
                format!("{:?}", self.query),
                &format!("{p} may appear once in a query (its rendering is bounded by 16 KiB)"),
            ));
        }
        for (name, cond) in [("success", &self.success), ("failure", &self.failure)] {
            if let Some(c) = cond {
                Condition::parse(c)
                    .map_err(|e| AnalysisInvalid::new(f(name), format!("{c:?}"), &e.to_string()))?;
            }
        }
        if !(MIN_INTERVAL_MS..=MAX_INTERVAL_MS).contains(&self.interval_ms) {
            return Err(AnalysisInvalid::new(
                f("interval_ms"),
                self.interval_ms,
                "an interval is 1 s to 1 day",
            ));
        }
        if self.initial_delay_ms > MAX_INTERVAL_MS {
            return Err(AnalysisInvalid::new(
                f("initial_delay_ms"),
                self.initial_delay_ms,
                "an initial delay is at most 1 day",
            ));
        }
        if let Some(c) = self.count {
            if c == 0 || c > MAX_COUNT {
                return Err(AnalysisInvalid::new(
                    f("count"),
                    c,
                    "a count is 1 to 10000 measurements",
                ));
            }
        }
        for (name, v) in [
            ("failure_limit", self.failure_limit),
            ("inconclusive_limit", self.inconclusive_limit),
            ("consecutive_error_limit", self.consecutive_error_limit),
        ] {
            if v > MAX_LIMIT {
                return Err(AnalysisInvalid::new(f(name), v, "a limit is at most 1000"));
            }
        }
        Ok(())
    }
}

impl Analysis {
    /// Refuses an unnamed provider, no or too many metrics, duplicate names, and any metric out of bounds.
    pub fn validate(&self) -> Result<(), AnalysisInvalid> {
        if !is_metric_name(&self.provider) {
            return Err(AnalysisInvalid::new(
                "analysis.provider".into(),
                format!("{:?}", self.provider),
                "a provider is named by 1 to 64 letters, digits, '-', '_' or '.'",
            ));
        }
        if self.metrics.is_empty() || self.metrics.len() > MAX_METRICS {
            return Err(AnalysisInvalid::new(
                "analysis.metrics".into(),
                self.metrics.len(),
                "an analysis has 1 to 8 metrics",
            ));
        }
        for (i, m) in self.metrics.iter().enumerate() {
            m.validate(i)?;
            if self.metrics[..i].iter().any(|o| o.name == m.name) {
                return Err(AnalysisInvalid::new(
                    format!("analysis.metrics[{i}].name"),
                    format!("{:?}", m.name),
                    "metric names are unique in an analysis",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "spec_test.rs"]
mod tests;
