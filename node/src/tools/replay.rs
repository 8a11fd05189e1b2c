//! `convoy replay DATA_DIR`: the deterministic core made visible. Reads a stopped server's snapshot
//! and log offline, re-applies every committed entry through the pure domain, prints the digest of
//! the state it reaches (what `GET /v1/cluster/digest` answers at that index on every server), and
//! with `--deployment` every decision about one deployment with the log entry that made it.

use std::path::PathBuf;

use anyhow::Context;
use convoy_actors::domain::{ClusterState, Command, DeploymentId, EventView};
use convoy_raft::replay::{replay, Step};

use crate::machine::Machine;

/// `convoy replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The data dir of a stopped server (a running one holds its lock).
    pub data_dir: PathBuf,
    /// Print the decisions about this deployment (`d-7`), each with the entry that made it.
    #[arg(long)]
    pub deployment: Option<String>,
    /// Fail (exit 1) unless the final digest is this sha256, e.g. another server's
    /// `GET /v1/cluster/digest` at the same index.
    #[arg(long)]
    pub expect: Option<String>,
}

/// Runs the replay and prints what it found.
pub fn run(args: ReplayArgs) -> anyhow::Result<()> {
    let watched = args
        .deployment
        .as_deref()
        .map(str::parse::<DeploymentId>)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--deployment: {e}"))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut seen = 0usize;
    let replayed = rt
        .block_on(replay::<Machine>(&args.data_dir, |step| {
            if let Some(id) = watched {
                seen = print_decisions(id, &step, seen);
            }
        }))
        .with_context(|| format!("replaying {}", args.data_dir.display()))?;
    match replayed.snapshot_index {
        Some(i) => println!(
            "snapshot at index {i} (sha256 {})",
            &replayed.snapshot_digest[..16]
        ),
        None => println!("no snapshot: replayed the log from its start"),
    }
    println!(
        "re-applied {} commands{} up to index {}",
        replayed.commands,
        match replayed.undecodable {
            0 => String::new(),
            n => format!(" ({n} did not decode and were skipped, as the server skipped them)"),
        },
        replayed.last_index.map_or("-".into(), |i| i.to_string())
    );
    println!("digest {}", replayed.digest);
    if let (Some(id), 0) = (watched, seen) {
        println!(
            "{id}: no decisions in the replayed entries (created before the snapshot, or unknown)"
        );
    }
    if let Some(expect) = args.expect {
        anyhow::ensure!(
            expect.eq_ignore_ascii_case(&replayed.digest),
            "the replayed state differs: digest {} at index {:?}, expected {expect}",
            replayed.digest,
            replayed.last_index
        );
        println!("matches the expected digest");
    }
    Ok(())
}

/// Prints the events of deployment `id` that `step` added beyond the first `seen`; returns the new count.
fn print_decisions(id: DeploymentId, step: &Step<'_, Machine>, seen: usize) -> usize {
    let state: &ClusterState = step.state.state();
    let Some(view) = state.deployment(id) else {
        return seen;
    };
    let events = &view.events;
    if events.len() <= seen {
        return events.len();
    }
    println!(
        "#{} at {} {}",
        step.index,
        step.at_ms,
        step.command.map_or("(undecodable)".into(), command_name)
    );
    for e in &events[seen..] {
        println!("    {}", describe(e));
    }
    events.len()
}

/// The command's variant and, for small commands, its fields (clipped).
fn command_name(command: &Command) -> String {
    let text = format!("{command:?}");
    if text.len() <= 120 {
        return text;
    }
    let cut = (0..=117)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}...", &text[..cut])
}

/// One event as a line: time, status or node action, who, why.
fn describe(e: &EventView) -> String {
    let mut line = format!("{}", e.at);
    if let Some(status) = &e.status {
        line.push_str(&format!(" → {status}"));
    }
    if let Some(node) = &e.node {
        line.push_str(&format!(" {node}"));
    }
    if let Some(action) = &e.action {
        let word = serde_json::to_value(action).unwrap_or_default();
        line.push_str(&format!(" {}", word.as_str().unwrap_or("?")));
    }
    line.push_str(&format!(" by {}", e.by));
    if let Some(message) = &e.message {
        line.push_str(&format!(": {message}"));
    }
    line
}
