//! `deploy start -f deploy.toml`: a deployment described in TOML with the keys of `POST /v1/deployments`.
//!
//! Every key is checked against the API's names before decoding, so a typo such as `install_windw` is
//! refused with the dotted key instead of being silently ignored.

use std::path::Path;

use super::body::StartRequest;
use super::error::CliError;

const TOP: &[&str] = &[
    "consumer",
    "resource",
    "version",
    "strategy",
    "nodes",
    "min_healthy_ms",
    "max_failures_per_node",
    "max_failed_nodes",
    "rollback_on_failure",
    "pulse_interval_ms",
    "completion",
    "pacing",
    "message",
];
const STRATEGIES: &[&str] = &["all_at_once", "rolling", "batch"];
const ROLLING: &[&str] = &["install_window", "download_window"];
const BATCH: &[&str] = &["sizes", "autopause"];
const COMPLETION: &[&str] = &["quorum", "timeout_ms", "on_timeout"];
const ALL_AT_ONCE: &[&str] = &["fail_fast"];
const PACING: &[&str] = &[
    "bake_ms",
    "healthy_deadline_ms",
    "download_deadline_ms",
    "progress_deadline_ms",
    "confirm",
];

/// Reads and parses a deployment file.
pub fn load(path: &Path) -> Result<StartRequest, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::FileRead {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    parse(&path.display().to_string(), &text)
}

/// Parses the text of a deployment file named `path` (used in messages).
pub fn parse(path: &str, text: &str) -> Result<StartRequest, CliError> {
    let invalid = |reason: String| CliError::FileInvalid {
        path: path.to_string(),
        reason,
    };
    let table: toml::Table = toml::from_str(text).map_err(|e| invalid(located(text, &e)))?;
    check_keys(path, &table)?;
    toml::from_str(text).map_err(|e| invalid(located(text, &e)))
}

/// The error's message and, when it has a place, the line it is on (which names the key).
fn located(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let start = span.start.min(text.len());
            let line = text[..start].matches('\n').count() + 1;
            let content = text.lines().nth(line - 1).unwrap_or("").trim();
            format!("{} at line {line}: {content}", e.message())
        }
        None => e.message().to_string(),
    }
}

fn check_keys(path: &str, table: &toml::Table) -> Result<(), CliError> {
    allow(path, "", table, TOP)?;
    if let Some(strategy) = table.get("strategy") {
        let Some(strategy) = strategy.as_table() else {
            return Err(CliError::FileInvalid {
                path: path.to_string(),
                reason: "strategy must be a table, e.g. [strategy.rolling] install_window = 2"
                    .into(),
            });
        };
        allow(path, "strategy.", strategy, STRATEGIES)?;
        if strategy.len() != 1 {
            return Err(CliError::FileInvalid {
                path: path.to_string(),
                reason: format!(
                    "strategy must name exactly one of {}, found {}",
                    STRATEGIES.join(", "),
                    strategy.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            });
        }
        for (name, known) in [
            ("all_at_once", ALL_AT_ONCE),
            ("rolling", ROLLING),
            ("batch", BATCH),
        ] {
            if let Some(toml::Value::Table(inner)) = strategy.get(name) {
                allow(path, &format!("strategy.{name}."), inner, known)?;
            }
        }
    }
    if let Some(toml::Value::Table(completion)) = table.get("completion") {
        allow(path, "completion.", completion, COMPLETION)?;
    }
    if let Some(toml::Value::Table(pacing)) = table.get("pacing") {
        allow(path, "pacing.", pacing, PACING)?;
    }
    Ok(())
}

fn allow(path: &str, prefix: &str, table: &toml::Table, known: &[&str]) -> Result<(), CliError> {
    match table.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(CliError::UnknownKey {
            path: path.to_string(),
            key: format!("{prefix}{key}"),
            known: if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            },
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
#[path = "deploy_file_test.rs"]
mod tests;
