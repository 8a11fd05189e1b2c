//! `convoy window list|show|next|create|delete`: maintenance windows (issue 24 §2).

use clap::{Subcommand, ValueEnum};
use convoy_actors::domain::windows::WindowView;
use serde_json::{json, Value};

use super::args::Output;
use super::body::encode;
use super::error::CliError;
use super::table::Table;
use super::zoned::in_zone;
use crate::client::ApiClient;

/// `convoy window ...`
#[derive(Debug, Subcommand)]
pub enum WindowCommand {
    /// List the windows: kind, schedule, whether each is open, its next opening.
    List,
    /// Show a window and the deployments it holds.
    Show {
        /// The window's name.
        name: String,
    },
    /// Print a window's next openings and closings (the server's zone database and clock).
    Next {
        /// The window's name.
        name: String,
    },
    /// Create a window.
    Create {
        /// Its name: 1-200 bytes of letters, digits, '-', '_' and '.'.
        name: String,
        /// `allow`: nodes are admitted only inside such a window; `deny`: never while one is open.
        #[arg(long, value_enum)]
        kind: KindArg,
        /// When it opens: a cron pattern in the zone's wall time (`"0 22 * * 1-5"`).
        #[arg(long)]
        schedule: String,
        /// How long each opening lasts (`2h`, `30m`).
        #[arg(long)]
        duration: String,
        /// An IANA time zone (`Europe/Berlin`); default UTC.
        #[arg(long)]
        time_zone: Option<String>,
        /// Only deployments on this consumer (repeatable; default: every consumer).
        #[arg(long = "consumer", value_name = "CONSUMER")]
        consumers: Vec<String>,
        /// Only deployments of this resource (repeatable; default: every resource).
        #[arg(long = "resource", value_name = "RESOURCE")]
        resources: Vec<String>,
        /// Hold rollbacks too while the window holds a deployment.
        #[arg(long)]
        hold_rollbacks: bool,
    },
    /// Delete a window: what it held goes on.
    Delete {
        /// The window's name.
        name: String,
    },
}

/// `--kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// Nodes are admitted only inside one.
    Allow,
    /// No node is admitted while one is open.
    Deny,
}

/// The JSON body of `convoy window create`.
fn create_body(command: &WindowCommand) -> Option<Value> {
    let WindowCommand::Create {
        name,
        kind,
        schedule,
        duration,
        time_zone,
        consumers,
        resources,
        hold_rollbacks,
    } = command
    else {
        return None;
    };
    let kind = match kind {
        KindArg::Allow => "allow",
        KindArg::Deny => "deny",
    };
    let mut applies_to = json!({});
    if !consumers.is_empty() {
        applies_to["consumers"] = json!(consumers);
    }
    if !resources.is_empty() {
        applies_to["resources"] = json!(resources);
    }
    Some(json!({
        "name": name, "kind": kind, "schedule": schedule, "duration": duration,
        "time_zone": time_zone.clone().unwrap_or_else(|| "UTC".into()),
        "applies_to": applies_to, "allow_rollback": !hold_rollbacks,
    }))
}

/// Carries out `convoy window ...`.
pub async fn run(
    client: &ApiClient,
    output: Output,
    command: WindowCommand,
) -> Result<(), CliError> {
    let (v, render): (Value, fn(&Value) -> Option<String>) = match &command {
        WindowCommand::List => (
            super::list::all(client, "/v1/windows", "windows").await?,
            |v| {
                serde_json::from_value::<Vec<WindowView>>(v.clone())
                    .ok()
                    .map(|l| list(&l))
            },
        ),
        WindowCommand::Show { name } => (
            client.get(&format!("/v1/windows/{}", encode(name))).await?,
            |v| {
                serde_json::from_value::<WindowView>(v.clone())
                    .ok()
                    .map(|w| show(&w))
            },
        ),
        WindowCommand::Next { name } => (
            client.get(&format!("/v1/windows/{}", encode(name))).await?,
            |v| {
                serde_json::from_value::<WindowView>(v.clone())
                    .ok()
                    .map(|w| next(&w))
            },
        ),
        WindowCommand::Create { .. } => {
            let body = create_body(&command).unwrap_or_default();
            (client.post("/v1/windows", &body).await?, |v| {
                serde_json::from_value::<WindowView>(v.clone())
                    .ok()
                    .map(|w| show(&w))
            })
        }
        WindowCommand::Delete { name } => (
            client
                .delete(&format!("/v1/windows/{}", encode(name)))
                .await?,
            |v| {
                Some(format!(
                    "deleted window {}\n",
                    v["name"].as_str().unwrap_or("?")
                ))
            },
        ),
    };
    match (output, render(&v)) {
        (Output::Table, Some(text)) => out!("{text}"),
        _ => outln!(
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string())
        ),
    }
    Ok(())
}

fn kind(w: &WindowView) -> &'static str {
    match w.kind {
        convoy_actors::domain::WindowKind::Allow => "allow",
        convoy_actors::domain::WindowKind::Deny => "deny",
    }
}

fn duration(ms: u64) -> String {
    humantime::format_duration(std::time::Duration::from_millis(ms)).to_string()
}

/// `NAME KIND SCHEDULE ZONE DURATION OPEN NEXT` per window.
pub fn list(windows: &[WindowView]) -> String {
    let mut t = Table::new(&[
        "NAME", "KIND", "SCHEDULE", "ZONE", "DURATION", "OPEN", "NEXT",
    ]);
    for w in windows {
        t.row([
            w.name.clone(),
            kind(w).to_string(),
            w.schedule.clone(),
            w.time_zone.clone(),
            duration(w.duration_ms),
            if w.open { "yes" } else { "no" }.to_string(),
            w.next
                .first()
                .map_or("-".to_string(), |o| in_zone(o.opens_at, &w.time_zone)),
        ]);
    }
    t.render()
}

/// A window, what it applies to, and the deployments it holds.
pub fn show(w: &WindowView) -> String {
    let names =
        |l: &Option<Vec<String>>, all: &str| l.as_ref().map_or(all.to_string(), |l| l.join(", "));
    let held: Vec<String> = w.holds.iter().map(|d| d.to_string()).collect();
    format!(
        "window {} ({}): \"{}\" in {}, {} each\nconsumers: {}\nresources: {}\nrollbacks: {}\nopen now: {}\nholds: {}\n{}",
        w.name,
        kind(w),
        w.schedule,
        w.time_zone,
        duration(w.duration_ms),
        names(&w.applies_to.consumers, "every consumer"),
        names(&w.applies_to.resources, "every resource"),
        if w.allow_rollback { "go on" } else { "held too" },
        if w.open { "yes" } else { "no" },
        if held.is_empty() { "-".to_string() } else { held.join(", ") },
        next(w)
    )
}

/// `OPENS CLOSES` of the next openings, in the window's zone.
pub fn next(w: &WindowView) -> String {
    let mut t = Table::new(&["OPENS", "CLOSES"]);
    for o in &w.next {
        t.row([
            in_zone(o.opens_at, &w.time_zone),
            in_zone(o.closes_at, &w.time_zone),
        ]);
    }
    t.render()
}

#[cfg(test)]
#[path = "window_test.rs"]
mod tests;
