//! `convoy cluster limits`: show or set the fleet-wide limits on installs and downloads at once (issue 24
//! §3, `GET`/`PUT /v1/cluster/limits`).

use convoy_actors::domain::limits::LimitsAnswer;
use convoy_actors::domain::FleetLimits;
use serde_json::Value;

use super::args::{LimitsArgs, Output};
use super::error::CliError;
use crate::client::ApiClient;

const PATH: &str = "/v1/cluster/limits";

/// The limits to set: the flags given over the limits in force (`--unlimited`: none).
pub fn merged(args: &LimitsArgs, current: FleetLimits) -> Option<FleetLimits> {
    if args.unlimited {
        return Some(FleetLimits::default());
    }
    if args.installs.is_none() && args.downloads.is_none() {
        return None;
    }
    Some(FleetLimits {
        max_concurrent_installs: args.installs.or(current.max_concurrent_installs),
        max_concurrent_downloads: args.downloads.or(current.max_concurrent_downloads),
    })
}

/// Runs `convoy cluster limits`.
pub async fn run(client: &ApiClient, output: Output, args: LimitsArgs) -> Result<(), CliError> {
    let mut v: Value = client.get(PATH).await?;
    if let Ok(now) = serde_json::from_value::<LimitsAnswer>(v.clone()) {
        let current = FleetLimits {
            max_concurrent_installs: now.in_force.max_concurrent_installs,
            max_concurrent_downloads: now.in_force.max_concurrent_downloads,
        };
        if let Some(limits) = merged(&args, current) {
            v = client.put(PATH, &limits).await?;
        }
    }
    match (output, serde_json::from_value::<LimitsAnswer>(v.clone())) {
        (Output::Table, Ok(answer)) => out!("{}", render(&answer)),
        _ => outln!(
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string())
        ),
    }
    Ok(())
}

fn shown(v: Option<u32>) -> String {
    v.map_or("no limit".to_string(), |n| n.to_string())
}

/// The limits as text: each with its use, where they came from, and this server's config.
pub fn render(a: &LimitsAnswer) -> String {
    let l = &a.in_force;
    let source = match l.source {
        Some(s) => serde_json::to_value(s)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        None => "never set".to_string(),
    };
    let mut out = format!(
        "installs:  {} installing, max_concurrent_installs {}\n\
         downloads: {} downloading, max_concurrent_downloads {}\n\
         set by:    {source}\n",
        l.installing,
        shown(l.max_concurrent_installs),
        l.downloading,
        shown(l.max_concurrent_downloads),
    );
    if a.config_differs {
        out.push_str(&format!(
            "this server's config differs: max_concurrent_installs {}, max_concurrent_downloads {}\n",
            shown(a.this_server_config.max_concurrent_installs),
            shown(a.this_server_config.max_concurrent_downloads),
        ));
    }
    out
}

#[cfg(test)]
#[path = "limits_test.rs"]
mod tests;
