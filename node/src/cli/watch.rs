//! `deploy watch`: polls a deployment every 500 ms and shows its progress until it reaches a terminal status.
//!
//! On a terminal it draws an `indicatif` bar (succeeded/total) under a multi-line frame; when stdout is not a
//! terminal it prints one plain line each time the progress changes. Exit: 0 on ROLLED_FORWARD, 1 otherwise.

use std::io::IsTerminal;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use convoy_actors::domain::{DeploymentView, NodePhase, Status, Strategy};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;

use super::args::Output;
use super::error::CliError;
use super::render::{deployment_line, name};
use super::table::duration;
use crate::client::{ApiClient, ClientError};

/// How often the deployment is polled.
pub const POLL: Duration = Duration::from_millis(500);
/// Node states in display order, with their letter in the grid.
pub const LETTERS: &[(NodePhase, char)] = &[
    (NodePhase::Succeeded, 'S'),
    (NodePhase::Watching, 'w'),
    (NodePhase::Installing, 'i'),
    (NodePhase::Downloaded, 'D'),
    (NodePhase::Downloading, 'd'),
    (NodePhase::Pending, '.'),
    (NodePhase::RollingBack, 'r'),
    (NodePhase::RolledBack, 'R'),
    (NodePhase::Failed, 'F'),
    (NodePhase::Skipped, 's'),
];
const GRID_WIDTH: usize = 50;

/// The exit code for a status: `None` while active, 0 for ROLLED_FORWARD, 1 for any other terminal status.
pub fn exit_code(status: Status) -> Option<i32> {
    match status {
        Status::RolledForward => Some(0),
        s if s.is_terminal() => Some(1),
        _ => None,
    }
}

/// What one poll shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// `d-3 web/api v7 ROLLING_FORWARD (paused by user)`.
    pub header: String,
    /// `succeeded 3 · installing 2 · pending 5`.
    pub counts: String,
    /// Per-node letters, in the deployment's order, wrapped at 50.
    pub grid: Vec<String>,
    /// Windows (from the settings) and their use.
    pub windows: String,
    /// The pulse countdown of a coordinated deployment.
    pub pulse: Option<String>,
    /// Succeeded nodes.
    pub succeeded: u64,
    /// Nodes in the deployment.
    pub total: u64,
}

impl Frame {
    /// The multi-line text of a terminal frame.
    pub fn text(&self) -> String {
        let mut lines = vec![self.header.clone(), self.windows.clone()];
        lines.extend(self.pulse.clone());
        lines.push(self.counts.clone());
        lines.extend(self.grid.iter().map(|g| format!("[{g}]")));
        lines.join("\n")
    }

    /// One plain line, without the pulse countdown (which changes every poll).
    pub fn line(&self) -> String {
        format!(
            "{} · {}/{} succeeded · {} · [{}]",
            self.header,
            self.succeeded,
            self.total,
            self.counts,
            self.grid.concat()
        )
    }
}

fn letter(state: NodePhase) -> char {
    LETTERS
        .iter()
        .find(|(s, _)| *s == state)
        .map_or('?', |(_, c)| *c)
}

/// Builds the frame of a deployment as seen at `now` (ms since the epoch); `raw` is its JSON.
pub fn frame(d: &DeploymentView, raw: &Value, now: u64) -> Frame {
    let count = |state: NodePhase| d.nodes.iter().filter(|n| n.state == state).count();
    let counts: Vec<String> = LETTERS
        .iter()
        .filter(|(s, _)| count(*s) > 0)
        .map(|(s, c)| format!("{} {} ({c})", name(s), count(*s)))
        .collect();
    let letters: Vec<char> = d.nodes.iter().map(|n| letter(n.state)).collect();
    let grid = letters
        .chunks(GRID_WIDTH)
        .map(|c| c.iter().collect())
        .collect();
    let windows = match &d.settings.strategy {
        Strategy::AllAtOnce {} => "strategy all-at-once".to_string(),
        Strategy::Rolling {
            install_window,
            download_window,
        } => format!(
            "install window {}/{install_window} · download window {}/{download_window}",
            count(NodePhase::Installing) + count(NodePhase::Watching),
            count(NodePhase::Downloading) + count(NodePhase::Downloaded),
        ),
        Strategy::Batch { sizes, autopause } => {
            let sizes: Vec<String> = sizes.iter().map(u32::to_string).collect();
            format!(
                "batch sizes {}{}",
                sizes.join(","),
                if *autopause { " · autopause" } else { "" }
            )
        }
    };
    Frame {
        header: deployment_line(d),
        counts: if counts.is_empty() {
            "no nodes".into()
        } else {
            counts.join(" · ")
        },
        grid,
        windows,
        pulse: pulse_line(d, raw, now),
        succeeded: count(NodePhase::Succeeded) as u64,
        total: d.nodes.len() as u64,
    }
}

/// The pulse countdown: time since the last pulse against the interval.
///
/// The last pulse is `last_pulse_at` when the server's JSON has it, else the newest event by `pulse`,
/// else the deployment's creation (its first event).
pub fn pulse_line(d: &DeploymentView, raw: &Value, now: u64) -> Option<String> {
    let interval = d.settings.pulse_interval_ms?;
    let last_pulse = raw["last_pulse_at"].as_u64().or_else(|| {
        d.events
            .iter()
            .rev()
            .find(|e| name(&e.by) == "pulse")
            .map(|e| e.at)
    });
    let since = last_pulse.or_else(|| d.events.first().map(|e| e.at));
    let what = if last_pulse.is_some() {
        "last pulse"
    } else {
        "no pulse yet, created"
    };
    let ago = since.map_or_else(
        || "?".to_string(),
        |at| format!("{} ago", duration(now.saturating_sub(at))),
    );
    let state = if d.status.is_terminal() {
        "finished".to_string()
    } else if matches!(
        d.status,
        Status::RollForwardAwaitingPulse | Status::RollBackAwaitingPulse
    ) {
        "BLOCKED awaiting a pulse".to_string()
    } else if matches!(d.status, Status::RollForwardPaused | Status::RollBackPaused) {
        "held (no countdown while paused)".to_string()
    } else {
        match since.map(|at| (at + interval) as i64 - now as i64) {
            Some(left) if left >= 0 => format!("{} left", duration(left as u64)),
            Some(late) => format!("overdue by {}", duration(late.unsigned_abs())),
            None => "unknown".into(),
        }
    };
    Some(format!(
        "pulse every {}: {what} {ago}, {state}",
        duration(interval)
    ))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Follows deployment `id` until it ends. Ok on ROLLED_FORWARD; `CliError::Ended` naming the status otherwise.
pub async fn watch(client: &ApiClient, id: &str, output: Output) -> Result<(), CliError> {
    let path = format!("/v1/deployments/{}", super::body::encode(id));
    let tty = std::io::stdout().is_terminal() && output == Output::Table;
    let bar = tty.then(|| {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stdout());
        let style = ProgressStyle::with_template(
            "{msg}\n{bar:40.green/white} {pos}/{len} succeeded  {elapsed}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style.progress_chars("█▉ "));
        bar
    });
    let mut last_printed = String::new();
    let mut unreachable = 0;
    loop {
        let raw: Value = match client.get(&path).await {
            Ok(raw) => raw,
            Err(e @ ClientError::Unreachable { .. }) if unreachable < 3 => {
                unreachable += 1;
                eprintln!("warning: {e}; still trying");
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        unreachable = 0;
        let view: DeploymentView =
            serde_json::from_value(raw.clone()).map_err(|e| ClientError::Decode {
                server: client.servers().join(","),
                path: path.clone(),
                reason: e.to_string(),
            })?;
        let f = frame(&view, &raw, now_ms());
        match (&bar, output) {
            (Some(bar), _) => {
                bar.set_length(f.total);
                bar.set_position(f.succeeded);
                bar.set_message(f.text());
            }
            (None, Output::Json) => {
                let line = raw.to_string();
                if line != last_printed {
                    println!("{line}");
                    last_printed = line;
                }
            }
            (None, Output::Table) => {
                let line = f.line();
                if line != last_printed {
                    println!("{line}");
                    last_printed = line;
                }
            }
        }
        if let Some(code) = exit_code(view.status) {
            if let Some(bar) = &bar {
                bar.finish_and_clear();
                println!("{}", f.text());
            }
            return match code {
                0 => {
                    if output == Output::Table {
                        println!(
                            "deployment {} rolled forward: {}/{} nodes succeeded",
                            view.id, f.succeeded, f.total
                        );
                    }
                    Ok(())
                }
                _ => Err(CliError::Ended {
                    id: view.id.to_string(),
                    status: name(&view.status),
                }),
            };
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
#[path = "watch_test.rs"]
mod tests;
