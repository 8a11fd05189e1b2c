//! What the agent is doing per resource (its phase, and where its app logs), the snapshot the worker hands the reporter,
//! and `DIR/status.json`, where an operator reads both with the outcome of the last report.
//!
//! The phase is not sent to the server: `POST /v1/nodes/{id}/report` refuses unknown fields and
//! the domain's report has no place for it, so it lives in the agent's logs and this file.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::app_log::LogPaths;
use super::state::tmp_path;

/// What the agent is doing with a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Nothing installed and nothing under way.
    Idle,
    /// Fetching a version's artifact.
    Downloading,
    /// Running the install command (or switching `current`).
    Installing,
    /// Installed, waiting for its first passed health check.
    Watching,
    /// Its process is down and waits for its restart (backoff).
    Restarting,
    /// Installed, done and checked on.
    Running,
    /// The last version tried failed.
    Failed,
}

/// A resource's phase and the version it concerns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResourcePhase {
    /// What is going on.
    pub phase: Phase,
    /// The version it concerns, if any.
    pub version: Option<u64>,
    /// Restarts of its process counted by the health rules (see `--max-restarts`).
    #[serde(skip_serializing_if = "is_zero")]
    pub restarts: u32,
    /// Where its process (`--run-command`) writes its stdout and stderr.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logs: Option<LogPaths>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What the worker publishes after each change: the report to send and the phases.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Snapshot {
    /// The body of `POST /v1/nodes/{id}/report`.
    pub body: serde_json::Value,
    /// Per resource.
    pub phases: BTreeMap<String, ResourcePhase>,
}

/// The content of `DIR/status.json`.
#[derive(Debug, Serialize)]
pub struct Status<'a> {
    /// This node.
    pub node: &'a str,
    /// Per resource.
    pub phases: &'a BTreeMap<String, ResourcePhase>,
    /// Wall-clock ms of the last report attempt.
    pub last_report_ms: u64,
    /// Why the last report failed; `None` when it was taken.
    pub last_report_error: Option<String>,
    /// Reports taken since the agent started.
    pub reports_ok: u64,
    /// Reports that failed since the agent started.
    pub reports_failed: u64,
}

/// Writes `status` to `path` through a temp file and a rename (no fsync: it is rewritten every report).
pub fn write_status(path: &Path, status: &Status<'_>) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(status).map_err(std::io::Error::other)?;
    let tmp = tmp_path(path);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// `phases` as one short log field: `web=installing@3 db=running@7`.
pub fn describe(phases: &BTreeMap<String, ResourcePhase>) -> String {
    let phase = |p: Phase| {
        serde_json::to_value(p)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    };
    phases
        .iter()
        .map(|(name, p)| match p.version {
            Some(v) => format!("{name}={}@{v}", phase(p.phase)),
            None => format!("{name}={}", phase(p.phase)),
        })
        .collect::<Vec<_>>()
        .join(" ")
}
