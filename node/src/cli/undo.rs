//! `deploy undo ID`: a new deployment back to the version each node ran before deployment ID, over the
//! same nodes with the same policy; and the hint a refused rollback of a finished deployment gets.

use convoy_actors::domain::DeploymentView;
use serde_json::{json, Map, Value};

use super::args::Output;
use super::body::encode;
use super::error::CliError;
use crate::client::ClientError;

/// Ordinals as compact ranges: `[0, 1, 2, 5, 7, 8]` → `0-2,5,7-8`.
pub fn ranges(ordinals: &[u32]) -> String {
    let mut sorted = ordinals.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// The `POST /v1/deployments` body that undoes `d`: its nodes back to their one from-version, with
/// its settings. Refused when the nodes ran no version before, or different ones (one deployment
/// has one version: undo those with `deploy start --nodes` per version).
pub fn undo_body(d: &DeploymentView, message: Option<String>) -> Result<Value, CliError> {
    let mut by_version: std::collections::BTreeMap<u64, Vec<u32>> = Default::default();
    for n in &d.nodes {
        if let Some(v) = n.from_version {
            by_version.entry(v).or_default().push(n.ordinal);
        }
    }
    let id = d.id.to_string();
    let version = match by_version.len() {
        0 => {
            return Err(CliError::invalid(
                "ID",
                &id,
                "no node of it ran a version before it: there is nothing to go back to",
            ))
        }
        1 => *by_version.keys().next().expect("one version"),
        _ => {
            let found: Vec<String> = by_version
                .iter()
                .map(|(v, o)| format!("version {v} on nodes {}", ranges(o)))
                .collect();
            return Err(CliError::invalid(
                "ID",
                &id,
                format!(
                    "its nodes ran different versions before it ({}); undo each with `convoy deploy start {} {} --version V --nodes RANGES`",
                    found.join("; "),
                    d.consumer,
                    d.resource
                ),
            ));
        }
    };
    let s = &d.settings;
    let mut body = Map::new();
    body.insert("consumer".into(), json!(d.consumer));
    body.insert("resource".into(), json!(d.resource));
    body.insert("version".into(), json!(version));
    body.insert("nodes".into(), json!(ranges(&by_version[&version])));
    body.insert("strategy".into(), json!(s.strategy));
    body.insert("min_healthy_ms".into(), json!(s.min_healthy_ms));
    body.insert(
        "max_failures_per_node".into(),
        json!(s.max_failures_per_node),
    );
    if let Some(n) = s.max_failed_nodes {
        body.insert("max_failed_nodes".into(), json!(n));
    }
    body.insert("rollback_on_failure".into(), json!(s.rollback_on_failure));
    if let Some(p) = s.pulse_interval_ms {
        body.insert("pulse_interval_ms".into(), json!(p));
    }
    body.insert("completion".into(), json!(s.completion));
    body.insert(
        "message".into(),
        json!(message.unwrap_or_else(|| format!("undo of {id}"))),
    );
    Ok(Value::Object(body))
}

/// `convoy deploy undo ID`.
pub async fn undo(
    client: &crate::client::ApiClient,
    output: Output,
    id: &str,
    message: Option<String>,
) -> Result<(), CliError> {
    let d: DeploymentView = client
        .get(&format!("/v1/deployments/{}", encode(id)))
        .await?;
    let body = undo_body(&d, message)?;
    let v: Value = client.post("/v1/deployments", &body).await?;
    match output {
        Output::Json | Output::Yaml => super::output::print_document(output, &v),
        Output::Table | Output::Wide => outln!(
            "started deployment {} ({}): {} of {} back to version {} on nodes {}",
            v["id"].as_str().unwrap_or("?"),
            v["status"].as_str().unwrap_or("?"),
            d.consumer,
            d.resource,
            body["version"],
            body["nodes"].as_str().unwrap_or("?"),
        ),
    }
    Ok(())
}

/// A rollback refused because the deployment has ended gets the way back: `deploy undo`.
pub fn suggest_undo(e: CliError, id: &str) -> CliError {
    match e {
        CliError::Client(ClientError::Api {
            status: 409,
            message,
            ..
        }) if message.contains("terminal") => CliError::Refused {
            message,
            hint: format!(
                "to put its nodes back on the versions they ran before, start a new deployment: convoy deploy undo {id}"
            ),
        },
        other => other,
    }
}

#[cfg(test)]
#[path = "undo_test.rs"]
mod tests;
