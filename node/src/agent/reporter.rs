//! The reporter: a task of its own that sends the node's report every interval (and soon after
//! each change), whatever the worker is doing — downloading, installing, watching — so a long
//! install never makes the node look silent. It hands each answer's targets to the worker and
//! keeps `DIR/status.json`.

use convoy_time::SharedClock;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use convoy_actors::domain::Target;
use tokio::sync::watch;

use super::status::{describe, write_status, Snapshot, Status};
use crate::client::{ApiClient, ClientError};

/// The targets of the last report answer (`None` before the first one).
pub type Targets = Option<BTreeMap<String, Target>>;

/// The soonest a report follows the previous one after a change.
const MIN_SPACING: Duration = Duration::from_millis(50);

/// Sends one report; the targets of the answer.
pub async fn report_once(
    client: &ApiClient,
    node: &str,
    body: &serde_json::Value,
) -> Result<BTreeMap<String, Target>, ClientError> {
    let answer: serde_json::Value = client
        .post(&format!("/v1/nodes/{node}/report"), body)
        .await?;
    Ok(parse_targets(&answer))
}

/// Reports until the task is aborted: each snapshot the worker publishes, at least every `interval`.
pub async fn run(
    client: Arc<ApiClient>,
    node: String,
    interval: Duration,
    mut snapshots: watch::Receiver<Snapshot>,
    targets: watch::Sender<Targets>,
    status_path: PathBuf,
    clock: SharedClock,
) {
    let mut failures = 0u32;
    let (mut ok, mut failed) = (0u64, 0u64);
    let mut last_phases = String::new();
    loop {
        let snapshot = snapshots.borrow_and_update().clone();
        let phases = describe(&snapshot.phases);
        if phases != last_phases {
            tracing::info!(phases = %phases, "phase");
            last_phases = phases;
        }
        let began = std::time::Instant::now();
        let outcome = report_once(&client, &node, &snapshot.body).await;
        super::metrics::metrics().report(began.elapsed(), outcome.is_ok());
        let error = outcome.as_ref().err().map(ToString::to_string);
        let result = outcome.map(|t| {
            tracing::debug!(phases = %last_phases, "reported");
            targets.send_if_modified(|held| {
                let changed = held.as_ref() != Some(&t);
                if changed {
                    *held = Some(t);
                }
                changed
            });
        });
        match result {
            Ok(()) => ok += 1,
            Err(_) => failed += 1,
        }
        let status = Status {
            node: &node,
            phases: &snapshot.phases,
            last_report_ms: clock.wall_ms(),
            last_report_error: error,
            reports_ok: ok,
            reports_failed: failed,
        };
        if let Err(e) = write_status(&status_path, &status) {
            tracing::debug!(path = %status_path.display(), error = %e, "cannot write the status file");
        }
        // Unreachable or over the token's report budget: the whole pause, whatever changes meanwhile.
        let wait_it_out = matches!(
            result,
            Err(ClientError::Unreachable { .. } | ClientError::RateLimited { .. })
        );
        let pause = pause_after(result, interval, &mut failures);
        if !wait_it_out {
            // A change is reported soon; otherwise the interval.
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                changed = snapshots.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    tokio::time::sleep(MIN_SPACING.min(interval)).await;
                }
            }
        } else {
            tokio::time::sleep(pause).await;
        }
    }
}

/// The wait before the next report: the interval normally, a growing backoff (up to 30 s) while no
/// server can be reached, and the server's `Retry-After` (at least the interval) after a 429.
pub fn pause_after(
    outcome: Result<(), ClientError>,
    interval: Duration,
    failures: &mut u32,
) -> Duration {
    match outcome {
        Ok(()) => {
            *failures = 0;
            interval
        }
        Err(e @ ClientError::Unreachable { .. }) => {
            *failures += 1;
            let backoff = interval
                .saturating_mul(1 << (*failures).min(5))
                .min(Duration::from_secs(30));
            tracing::warn!(error = %e, retry_in_ms = backoff.as_millis() as u64, "no server reachable");
            backoff.max(interval)
        }
        Err(ClientError::RateLimited {
            message,
            retry_after,
        }) => {
            // The server's Retry-After (bounded by the client), then report again.
            *failures = 0;
            tracing::warn!(error = %message, retry_in_ms = retry_after.as_millis() as u64, "report over the token's budget");
            retry_after.max(interval)
        }
        Err(e) => {
            *failures = 0;
            tracing::warn!(error = %e, "report refused");
            interval
        }
    }
}

/// The `targets` of a report answer; malformed entries are logged and skipped, never fatal.
pub fn parse_targets(answer: &serde_json::Value) -> BTreeMap<String, Target> {
    let Some(map) = answer.get("targets").and_then(|t| t.as_object()) else {
        tracing::warn!(%answer, "report answer without targets");
        return BTreeMap::new();
    };
    map.iter()
        .filter_map(|(name, t)| match serde_json::from_value::<Target>(t.clone()) {
            Ok(t) => Some((name.clone(), t)),
            Err(e) => {
                tracing::warn!(resource = %name, target = %t, error = %e, "ignoring a malformed target");
                None
            }
        })
        .collect()
}
