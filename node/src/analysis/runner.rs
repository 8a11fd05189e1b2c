//! The leader's measuring task: while this server leads, it asks the applied state which measurements are
//! due (`ClusterState::analysis_due`, derived from replicated times and counts, so a new leader continues
//! where the old one stopped), queries each provider at most once per due measurement, and proposes the
//! result as `RecordMeasurement`. A refused or lost proposal is harmless: `apply` counts a measurement once.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use convoy_actors::domain::analysis::run::Measured;
use convoy_actors::domain::{Command, DeploymentId, DueMeasurement};

use crate::analysis::prometheus;
use crate::analysis::provider::Provider;
use crate::leader::wall_ms;
use crate::replica::Replica;

/// The longest sleep between two looks at the state.
const POLL: Duration = Duration::from_millis(250);
/// How long after a measurement's proposal ended it may be made again if the state still says it is due
/// (the proposal was lost with a leader change).
const RETRY_AFTER: Duration = Duration::from_secs(2);

/// A measurement's identity: what makes its `RecordMeasurement` the one `apply` expects.
type Key = (DeploymentId, String, u32, u32);

/// Measurements being made (`None`) or whose proposal ended at that instant.
type InFlight = Arc<Mutex<BTreeMap<Key, Option<Instant>>>>;

/// Starts the task on `rt`.
pub fn spawn(replica: Replica, rt: &tokio::runtime::Handle, providers: Vec<Provider>) {
    if !providers.is_empty() {
        let names: Vec<&str> = providers.iter().map(|p| p.name.as_str()).collect();
        tracing::info!(providers = ?names, "analysis providers configured");
    }
    rt.spawn(run(replica, Arc::new(providers)));
}

async fn run(replica: Replica, providers: Arc<Vec<Provider>>) {
    let client = match crate::analysis::prometheus::client() {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "analysis: no HTTP client; nothing will be measured");
            return;
        }
    };
    let in_flight: InFlight = Arc::default();
    loop {
        let mut sleep = POLL;
        if replica.node().is_leader() {
            let now = wall_ms();
            let (due, next) = replica.node().read(|m| m.state().analysis_due(now));
            if let Some(next) = next {
                sleep = sleep.min(Duration::from_millis(next.saturating_sub(now).max(10)));
            }
            forget_done(&in_flight, &due);
            for d in due {
                let key: Key = (d.id, d.metric.clone(), d.phase, d.seq);
                {
                    let mut map = in_flight.lock().unwrap_or_else(|e| e.into_inner());
                    match map.get(&key) {
                        Some(None) => continue,
                        Some(Some(ended)) if ended.elapsed() < RETRY_AFTER => continue,
                        _ => {}
                    }
                    map.insert(key.clone(), None);
                }
                tokio::spawn(measure(
                    replica.clone(),
                    client.clone(),
                    providers.clone(),
                    in_flight.clone(),
                    key,
                    d,
                ));
            }
        } else {
            in_flight.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
        tokio::time::sleep(sleep).await;
    }
}

/// Drops the measurements no longer due (recorded, or their deployment moved on).
fn forget_done(in_flight: &InFlight, due: &[DueMeasurement]) {
    let mut map = in_flight.lock().unwrap_or_else(|e| e.into_inner());
    map.retain(|(id, metric, phase, seq), started| {
        started.is_none()
            || due
                .iter()
                .any(|d| d.id == *id && d.metric == *metric && d.phase == *phase && d.seq == *seq)
    });
}

async fn measure(
    replica: Replica,
    client: reqwest::Client,
    providers: Arc<Vec<Provider>>,
    in_flight: InFlight,
    key: Key,
    due: DueMeasurement,
) {
    let measured = match providers.iter().find(|p| p.name == due.provider) {
        Some(p) => prometheus::query(&client, p, &due.query).await,
        None => Measured::Error(format!(
            "no analysis provider named {:?} in this server's config",
            due.provider
        )),
    };
    crate::metrics::analysis::measured(&measured);
    tracing::debug!(deployment = %due.id, metric = %due.metric, phase = due.phase, seq = due.seq, ?measured, "analysis measurement");
    let command = Command::RecordMeasurement {
        id: due.id,
        metric: due.metric,
        phase: due.phase,
        seq: due.seq,
        measured,
    };
    if let Err(e) = replica.propose(command).await {
        tracing::warn!(deployment = %due.id, error = %e, "analysis: measurement not recorded");
    }
    in_flight
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, Some(Instant::now()));
}
