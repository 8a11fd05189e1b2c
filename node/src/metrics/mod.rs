//! Prometheus metrics of one server (`GET /metrics`): raft, HTTP API, domain and process, encoded in the
//! text exposition format. Counters and histograms are updated where things happen; gauges are read
//! from the replica and the applied state at each scrape (see [`scrape`]).

pub mod analysis;
pub mod http;
pub mod process;
pub mod rollbacks;
pub mod scrape;

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

use prometheus::core::Collector;
use prometheus::proto::MetricType;

use prometheus::{
    Gauge, GaugeVec, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec,
    Opts, Registry,
};

/// Every metric this server exposes besides the raft crate's disk timings
/// ([`convoy_raft::stats`]).
pub struct Metrics {
    registry: Registry,
    /// Serializes scrapes: gauges are reset and refilled, then encoded.
    scraping: Mutex<()>,
    // --- HTTP API ---
    /// Requests by method, route pattern (never a raw path) and status.
    pub http_requests: IntCounterVec,
    /// Request latency by method and route pattern.
    pub http_latency: HistogramVec,
    // --- raft (refreshed at scrape, except the counters) ---
    /// Current term.
    pub term: IntGauge,
    /// The leader this server knows of (0: none).
    pub leader_id: IntGauge,
    /// 1 on the leader.
    pub is_leader: IntGauge,
    /// Last log index known committed here.
    pub commit_index: IntGauge,
    /// Last log index applied to the state here.
    pub applied_index: IntGauge,
    /// Last log index appended here.
    pub last_log_index: IntGauge,
    /// On the leader: entries each follower is behind the leader's last log index.
    pub replication_lag: IntGaugeVec,
    /// Term changes seen by this server (every election, won or not, moves the term).
    pub elections: IntCounter,
    /// Leader changes seen by this server.
    pub leader_changes: IntCounter,
    // --- domain ---
    /// Deployments by status.
    pub deployments: IntGaugeVec,
    /// Nodes by phase in each active deployment.
    pub deployment_nodes: IntGaugeVec,
    /// Coordinated deployments whose pulse deadline has passed.
    pub overdue_pulses: IntGauge,
    /// Seconds until each coordinated rolling deployment's pulse deadline (negative when past).
    pub pulse_slack: GaugeVec,
    /// Deployments that rolled back, by consumer and resource (from the replicated state; see [`rollbacks`]).
    pub rollbacks: IntCounterVec,
    /// Nodes known to the state.
    pub nodes: IntGauge,
    /// Active nodes.
    pub active_nodes: IntGauge,
    /// Node reports taken by the leader's actors on this server (a batch counts each report).
    pub reports: IntCounter,
    /// Reports refused with 503 because the leader's consumer queue was full.
    pub reports_busy: IntCounter,
    /// Reports that changed nothing (heartbeats), coalesced away by the leader's consumer actors.
    pub heartbeats: IntCounter,
    /// Reports whose change was queued for the log.
    pub report_changes: IntCounter,
    /// `ReportNodes` batches proposed.
    pub report_batches: IntCounter,
    /// Node changes waiting in the consumer actors' queues.
    pub report_queue: IntGauge,
    /// Node reports refused as out of bounds (where they arrived, or by a consumer actor), each alone.
    pub reports_refused: IntCounter,
    /// Node reports refused with 429 because their token was over its report budget on this server.
    pub reports_rate_limited: IntCounter,
    /// Entries of the leader's liveness table (nodes of a consumer heard from recently); 0 on a follower.
    pub liveness_nodes: IntGauge,
    /// Requests answered 503 (no leader, not a member, busy), by route pattern.
    pub unavailable: IntCounterVec,
    // --- process ---
    /// Resident set size in bytes.
    pub rss: IntGauge,
    /// Open file descriptors.
    pub open_fds: IntGauge,
    /// Seconds since the process started.
    pub uptime: Gauge,
    /// Always 1, with the server's version as a label.
    pub build_info: IntGaugeVec,
}

fn gauge(name: &str, help: &str) -> IntGauge {
    IntGauge::new(name, help).expect("valid gauge")
}

fn gauge_vec(name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    IntGaugeVec::new(Opts::new(name, help), labels).expect("valid gauge")
}

fn counter(name: &str, help: &str) -> IntCounter {
    IntCounter::new(name, help).expect("valid counter")
}

/// Latency buckets for API requests: 0.5 ms to 10 s.
const HTTP_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

impl Metrics {
    fn new() -> Self {
        let m = Self {
            registry: Registry::new(),
            scraping: Mutex::new(()),
            http_requests: IntCounterVec::new(
                Opts::new(
                    "convoy_http_requests_total",
                    "HTTP requests by method, route pattern and status.",
                ),
                &["method", "route", "status"],
            )
            .expect("valid counter"),
            http_latency: HistogramVec::new(
                HistogramOpts::new(
                    "convoy_http_request_duration_seconds",
                    "HTTP request latency by method and route pattern.",
                )
                .buckets(HTTP_BUCKETS.to_vec()),
                &["method", "route"],
            )
            .expect("valid histogram"),
            term: gauge("convoy_raft_term", "Current raft term."),
            leader_id: gauge(
                "convoy_raft_leader_id",
                "Id of the leader this server knows of (0: none).",
            ),
            is_leader: gauge("convoy_raft_is_leader", "1 when this server leads."),
            commit_index: gauge(
                "convoy_raft_commit_index",
                "Last log index this server knows is committed.",
            ),
            applied_index: gauge(
                "convoy_raft_applied_index",
                "Last log index applied to the state on this server.",
            ),
            last_log_index: gauge(
                "convoy_raft_last_log_index",
                "Last log index appended on this server.",
            ),
            replication_lag: gauge_vec(
                "convoy_raft_replication_lag_entries",
                "On the leader: log entries each follower is behind the leader's last log index.",
                &["follower"],
            ),
            elections: counter(
                "convoy_raft_elections_total",
                "Term changes seen by this server (each election moves the term).",
            ),
            leader_changes: counter(
                "convoy_raft_leader_changes_total",
                "Changes of the known leader seen by this server.",
            ),
            deployments: gauge_vec(
                "convoy_deployments",
                "Deployments by status (active and terminal).",
                &["status"],
            ),
            deployment_nodes: gauge_vec(
                "convoy_deployment_nodes",
                "Nodes by phase in each active deployment.",
                &["deployment", "consumer", "resource", "phase"],
            ),
            overdue_pulses: gauge(
                "convoy_pulses_overdue",
                "Coordinated rolling deployments whose pulse deadline has passed.",
            ),
            pulse_slack: GaugeVec::new(
                Opts::new(
                    "convoy_pulse_deadline_slack_seconds",
                    "Seconds until a coordinated rolling deployment's pulse deadline (negative once past).",
                ),
                &["deployment"],
            )
            .expect("valid gauge"),
            rollbacks: IntCounterVec::new(
                Opts::new(
                    "convoy_rollbacks_total",
                    "Deployments that rolled back (rolling back or rolled back), by consumer and resource, \
                     from the replicated state; at most 1000 pairs, the rest under \"(other)\".",
                ),
                &["consumer", "resource"],
            )
            .expect("valid counter"),
            nodes: gauge("convoy_nodes", "Nodes known to the replicated state."),
            active_nodes: gauge("convoy_nodes_active", "Active nodes."),
            reports: counter(
                "convoy_reports_total",
                "Node reports taken by the leader's actors on this server (a batch counts each report).",
            ),
            reports_busy: counter(
                "convoy_reports_busy_total",
                "Node reports refused with 503 because the leader's consumer queue was full.",
            ),
            heartbeats: counter(
                "convoy_reports_heartbeats_total",
                "Reports that changed nothing (heartbeats): coalesced on the leader, never proposed.",
            ),
            report_changes: counter(
                "convoy_reports_changes_total",
                "Reports whose change was queued for the raft log on the leader.",
            ),
            report_batches: counter(
                "convoy_report_batches_total",
                "ReportNodes batches of node changes proposed by the leader's consumer actors.",
            ),
            report_queue: gauge(
                "convoy_report_queue_depth",
                "Node changes waiting in the leader's consumer actors' queues.",
            ),
            reports_refused: counter(
                "convoy_reports_refused_total",
                "Node reports refused with 400 as out of bounds (names, resources, versions, byte budget), each alone.",
            ),
            reports_rate_limited: counter(
                "convoy_reports_rate_limited_total",
                "Node reports refused with 429 on this server: their token was over its report budget (bytes or requests per second).",
            ),
            liveness_nodes: gauge(
                "convoy_leader_liveness_nodes",
                "Entries of the leader's liveness table: nodes of a consumer heard from recently.",
            ),
            unavailable: IntCounterVec::new(
                Opts::new(
                    "convoy_http_unavailable_total",
                    "Requests answered 503 (no leader, not a member, busy) by route pattern.",
                ),
                &["route"],
            )
            .expect("valid counter"),
            rss: gauge(
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
            ),
            open_fds: gauge("process_open_fds", "Open file descriptors."),
            uptime: Gauge::new("convoy_uptime_seconds", "Seconds since this server started.")
                .expect("valid gauge"),
            build_info: gauge_vec(
                "convoy_build_info",
                "Always 1; the label says the server's version.",
                &["version"],
            ),
        };
        for c in m.collectors() {
            m.registry.register(c).expect("metric names are unique");
        }
        analysis::register(&m.registry);
        m.build_info.with_label_values(&[crate::VERSION]).set(1);
        m
    }

    /// Every metric of this server's registry, as the collectors to register.
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        let m = self;
        vec![
            Box::new(m.http_requests.clone()),
            Box::new(m.http_latency.clone()),
            Box::new(m.term.clone()),
            Box::new(m.leader_id.clone()),
            Box::new(m.is_leader.clone()),
            Box::new(m.commit_index.clone()),
            Box::new(m.applied_index.clone()),
            Box::new(m.last_log_index.clone()),
            Box::new(m.replication_lag.clone()),
            Box::new(m.elections.clone()),
            Box::new(m.leader_changes.clone()),
            Box::new(m.deployments.clone()),
            Box::new(m.deployment_nodes.clone()),
            Box::new(m.overdue_pulses.clone()),
            Box::new(m.pulse_slack.clone()),
            Box::new(m.rollbacks.clone()),
            Box::new(m.nodes.clone()),
            Box::new(m.active_nodes.clone()),
            Box::new(m.reports.clone()),
            Box::new(m.reports_busy.clone()),
            Box::new(m.unavailable.clone()),
            Box::new(m.heartbeats.clone()),
            Box::new(m.report_changes.clone()),
            Box::new(m.report_batches.clone()),
            Box::new(m.report_queue.clone()),
            Box::new(m.reports_refused.clone()),
            Box::new(m.reports_rate_limited.clone()),
            Box::new(m.liveness_nodes.clone()),
            Box::new(m.rss.clone()),
            Box::new(m.open_fds.clone()),
            Box::new(m.uptime.clone()),
            Box::new(m.build_info.clone()),
        ]
    }

    /// The name of every series this server can export, whether or not it has a value yet (a labelled
    /// metric shows only once it has one), with a histogram's `_bucket`, `_sum` and `_count`, the raft crate's
    /// included: what a dashboard may query.
    pub fn exported_names(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        let mut histograms: Vec<String> = self
            .http_latency
            .desc()
            .into_iter()
            .map(|d| d.fq_name.clone())
            .collect();
        for c in self.collectors() {
            names.extend(c.desc().into_iter().map(|d| d.fq_name.clone()));
        }
        for family in convoy_raft::stats::stats().registry().gather() {
            if family.get_field_type() == MetricType::HISTOGRAM {
                histograms.push(family.name().to_string());
            }
            names.insert(family.name().to_string());
        }
        for name in histograms {
            for suffix in ["_bucket", "_sum", "_count"] {
                names.insert(format!("{name}{suffix}"));
            }
        }
        names
    }

    /// The registry holding these metrics.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }
}

/// This process's metrics (one server per process).
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

#[cfg(test)]
#[path = "grafana_test.rs"]
mod grafana_test;
