//! One scrape: refresh the gauges from the replica's raft metrics, the applied state and `/proc`, then
//! encode this server's registry and the raft crate's in the Prometheus text format.

use std::time::Instant;

use openraft::async_runtime::WatchReceiver;
use openraft::ServerState;
use prometheus::{Encoder, TextEncoder};

use convoy_actors::domain::DeploymentFilter;

use super::{metrics, process, rollbacks, Metrics};
use crate::replica::Replica;

/// The label of a serde-named enum value (`ROLLING_FORWARD`, `pending`).
fn label<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "unknown".into(),
    }
}

/// Raft gauges from this server's view of the replica.
fn refresh_raft(m: &Metrics, replica: &Replica) {
    let node = replica.node();
    let r = node.raft().metrics().borrow_watched().clone();
    m.term.set(r.current_term as i64);
    m.leader_id.set(r.current_leader.unwrap_or(0) as i64);
    m.is_leader.set(i64::from(r.state == ServerState::Leader));
    m.commit_index
        .set(r.local_committed.as_ref().map_or(0, |l| l.index) as i64);
    m.applied_index.set(node.applied().last_applied() as i64);
    let last = r.last_log_index.unwrap_or(0);
    m.last_log_index.set(last as i64);
    m.replication_lag.reset();
    if let Some(replication) = &r.replication {
        for (follower, matched) in replication {
            if *follower == node.id() {
                continue;
            }
            let matched = matched.as_ref().map_or(0, |l| l.index);
            m.replication_lag
                .with_label_values(&[&follower.to_string()])
                .set(last.saturating_sub(matched) as i64);
        }
    }
}

/// Domain gauges from the applied state at `now`.
fn refresh_domain(m: &Metrics, replica: &Replica, now: u64) {
    let g = replica.node().read(|s| s.state().gauges(now));
    m.deployments.reset();
    for (status, n) in &g.deployments_by_status {
        m.deployments
            .with_label_values(&[&label(status)])
            .set(*n as i64);
    }
    m.deployment_nodes.reset();
    m.pulse_slack.reset();
    for (id, a) in &g.active {
        let id = id.to_string();
        for (phase, n) in &a.phases {
            m.deployment_nodes
                .with_label_values(&[&id, &a.consumer, &a.resource, &label(phase)])
                .set(*n as i64);
        }
        if let Some(slack) = a.pulse_slack_ms {
            m.pulse_slack
                .with_label_values(&[&id])
                .set(slack as f64 / 1000.0);
        }
    }
    m.overdue_pulses.set(g.overdue_pulses as i64);
    let rollbacks = replica
        .node()
        .read(|s| rollbacks::count(&s.state().deployments(&DeploymentFilter::default())));
    m.rollbacks.reset();
    for ((consumer, resource), n) in &rollbacks {
        m.rollbacks
            .with_label_values(&[consumer, resource])
            .inc_by(*n);
    }
    m.nodes.set(g.nodes as i64);
    m.active_nodes.set(g.active_nodes as i64);
}

/// Brings `counter` up to `now` (the actors' process-wide count; it never goes down).
fn catch_up(counter: &prometheus::IntCounter, now: u64) {
    let seen = counter.get();
    if now > seen {
        counter.inc_by(now - seen);
    }
}

/// Report ingestion counters from the leader's actors.
fn refresh_reports(m: &Metrics) {
    let c = convoy_actors::leader::ingest_stats::snapshot();
    catch_up(&m.heartbeats, c.heartbeats);
    catch_up(&m.report_changes, c.changes);
    catch_up(&m.report_batches, c.batches);
    m.report_queue.set(c.queued as i64);
    catch_up(&m.reports_refused, c.refused);
    m.liveness_nodes.set(c.liveness as i64);
}

/// When this process started, for `convoy_uptime_seconds`.
fn started() -> Instant {
    static STARTED: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *STARTED.get_or_init(Instant::now)
}

/// Marks the process start (call once at server start).
pub fn mark_start() {
    started();
}

/// The whole exposition for one scrape at wall time `now_ms`.
pub fn render(replica: &Replica, now_ms: u64) -> String {
    let m = metrics();
    let _one_at_a_time = m.scraping.lock().unwrap_or_else(|p| p.into_inner());
    refresh_raft(m, replica);
    refresh_domain(m, replica, now_ms);
    refresh_reports(m);
    m.rss.set(process::resident_bytes() as i64);
    m.open_fds.set(process::open_fds() as i64);
    m.uptime.set(started().elapsed().as_secs_f64());
    let mut families = m.registry().gather();
    families.extend(convoy_raft::stats::stats().registry().gather());
    let mut out = Vec::new();
    if let Err(e) = TextEncoder::new().encode(&families, &mut out) {
        tracing::warn!(error = %e, "cannot encode metrics");
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Counts term and leader changes seen by this server, from the raft runtime.
pub fn watch_elections(replica: &Replica, rt: &tokio::runtime::Handle) {
    let mut watch = replica.node().metrics();
    rt.spawn(async move {
        let (mut term, mut leader) = {
            let r = watch.borrow_watched();
            (r.current_term, r.current_leader)
        };
        while watch.changed().await.is_ok() {
            let (t, l) = {
                let r = watch.borrow_watched();
                (r.current_term, r.current_leader)
            };
            if t != term {
                metrics().elections.inc_by(t.saturating_sub(term).max(1));
                term = t;
            }
            if l != leader && l.is_some() {
                metrics().leader_changes.inc();
            }
            leader = l;
        }
    });
}
