//! `deploy resume` of a deployment a maintenance window holds (issue 41 §6): a resume lifts a person's
//! pause, never a window's hold, so after it the command names each window still holding the deployment
//! and until when, and fails (status 1) instead of exiting 0 with nothing moving.

use convoy_actors::domain::windows::WindowView;
use convoy_actors::domain::WindowKind;
use serde_json::Value;

use super::body::encode;
use super::error::CliError;
use super::zoned::in_zone;
use crate::client::ApiClient;

/// The windows still holding `deployment` (a `POST .../resume` answer), each as `held_by` describes it;
/// `None` when no window holds it.
pub async fn still_held(
    client: &ApiClient,
    deployment: &Value,
) -> Result<Option<CliError>, CliError> {
    let names: Vec<&str> = deployment["waits"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|w| w["reason"] == "window")
        .filter_map(|w| w["name"].as_str())
        .flat_map(|n| n.split(", "))
        .collect();
    if names.is_empty() {
        return Ok(None);
    }
    let mut windows = Vec::new();
    for name in &names {
        let w: Value = client.get(&format!("/v1/windows/{}", encode(name))).await?;
        windows.push(match serde_json::from_value::<WindowView>(w) {
            Ok(w) => held_by(&w),
            Err(_) => format!("window {name}"),
        });
    }
    Ok(Some(CliError::HeldByWindow {
        id: deployment["id"].as_str().unwrap_or("?").to_string(),
        windows: windows.join("; "),
        first: names[0].to_string(),
    }))
}

/// `window nights (allow, closed until 2026-01-05 22:00:00 CET)`: a window holding a deployment, and
/// when it stops holding it as far as its schedule says.
pub fn held_by(w: &WindowView) -> String {
    let until = match (w.kind, w.open) {
        // An allow window holds while it is closed: until it next opens.
        (WindowKind::Allow, _) => w
            .next
            .first()
            .map(|o| format!("closed until {}", in_zone(o.opens_at, &w.time_zone)))
            .unwrap_or_else(|| "closed, with no opening ahead".into()),
        // A deny window holds while it is open: its current opening's end is not listed, its length is.
        (WindowKind::Deny, true) => format!(
            "open now, for up to {} from its last opening",
            humantime::format_duration(std::time::Duration::from_millis(w.duration_ms))
        ),
        (WindowKind::Deny, false) => w
            .next
            .first()
            .map(|o| format!("opening at {}", in_zone(o.opens_at, &w.time_zone)))
            .unwrap_or_else(|| "closed".into()),
    };
    let kind = match w.kind {
        WindowKind::Allow => "allow",
        WindowKind::Deny => "deny",
    };
    format!("window {} ({kind}, {until})", w.name)
}

#[cfg(test)]
#[path = "held_test.rs"]
mod tests;
