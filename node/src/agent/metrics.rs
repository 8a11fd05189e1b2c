//! The agent's Prometheus metrics (`GET /metrics` on `--metrics-listen`, off unless set): installs,
//! failures by reason, health-check latency, report round trips and the age of the last successful
//! report, in the text exposition format, as the server's are. The listener serves this one path on
//! a thread of its own (actix-web, as the server's API), so a scrape never waits on the worker.

use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpResponse, HttpServer};
use prometheus::{
    Encoder, Gauge, Histogram, HistogramOpts, IntCounterVec, Opts, Registry, TextEncoder,
};

/// Why a version failed on this node (the `reason` label of `convoy_agent_failures_total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Its artifact could not be fetched or checked.
    Download,
    /// The install command (or the switch of `current`) failed.
    Install,
    /// The run command could not be started.
    Start,
    /// The run command kept exiting, past `--max-restarts`.
    Exited,
    /// Its health checks kept failing, past the restarts.
    Unhealthy,
}

impl Failure {
    const ALL: [Failure; 5] = [
        Failure::Download,
        Failure::Install,
        Failure::Start,
        Failure::Exited,
        Failure::Unhealthy,
    ];

    fn label(self) -> &'static str {
        match self {
            Failure::Download => "download",
            Failure::Install => "install",
            Failure::Start => "start",
            Failure::Exited => "exited",
            Failure::Unhealthy => "unhealthy",
        }
    }
}

/// Health checks and reports: 1 ms to 10 s.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// Every metric the agent exposes.
pub struct AgentMetrics {
    registry: Registry,
    installs: IntCounterVec,
    failures: IntCounterVec,
    health_check: Histogram,
    report: Histogram,
    reports: IntCounterVec,
    last_report_age: Gauge,
    /// The last successful report, else the agent's start.
    last_ok: Mutex<Instant>,
}

/// The agent's metrics, registered on first use.
pub fn metrics() -> &'static AgentMetrics {
    static METRICS: OnceLock<AgentMetrics> = OnceLock::new();
    METRICS.get_or_init(|| AgentMetrics::new().expect("the agent's metrics register"))
}

impl AgentMetrics {
    fn new() -> prometheus::Result<Self> {
        let registry = Registry::new();
        let m = Self {
            installs: IntCounterVec::new(
                Opts::new(
                    "convoy_agent_installs_total",
                    "Installs of a version on this node, by result (ok, failed).",
                ),
                &["result"],
            )?,
            failures: IntCounterVec::new(
                Opts::new(
                    "convoy_agent_failures_total",
                    "Versions reported failed by this node, by reason (download, install, start, exited, unhealthy).",
                ),
                &["reason"],
            )?,
            health_check: Histogram::with_opts(
                HistogramOpts::new(
                    "convoy_agent_health_check_seconds",
                    "Time of one HTTP health check (GET /health), passed or not.",
                )
                .buckets(BUCKETS.to_vec()),
            )?,
            report: Histogram::with_opts(
                HistogramOpts::new(
                    "convoy_agent_report_seconds",
                    "Round trip of one report to the cluster (POST /v1/nodes/{id}/report), taken or not.",
                )
                .buckets(BUCKETS.to_vec()),
            )?,
            reports: IntCounterVec::new(
                Opts::new(
                    "convoy_agent_reports_total",
                    "Reports sent, by result (ok, failed).",
                ),
                &["result"],
            )?,
            last_report_age: Gauge::new(
                "convoy_agent_last_report_age_seconds",
                "Seconds since the last report the cluster took (since the agent started, before the first).",
            )?,
            last_ok: Mutex::new(Instant::now()),
            registry,
        };
        m.registry.register(Box::new(m.installs.clone()))?;
        m.registry.register(Box::new(m.failures.clone()))?;
        m.registry.register(Box::new(m.health_check.clone()))?;
        m.registry.register(Box::new(m.report.clone()))?;
        m.registry.register(Box::new(m.reports.clone()))?;
        m.registry.register(Box::new(m.last_report_age.clone()))?;
        // Every series exists from the start, at 0.
        for result in ["ok", "failed"] {
            m.installs.with_label_values(&[result]);
            m.reports.with_label_values(&[result]);
        }
        for f in Failure::ALL {
            m.failures.with_label_values(&[f.label()]);
        }
        Ok(m)
    }

    /// An install ended: taken or failed.
    pub fn install(&self, ok: bool) {
        let result = if ok { "ok" } else { "failed" };
        self.installs.with_label_values(&[result]).inc();
    }

    /// A version failed for `why`.
    pub fn failure(&self, why: Failure) {
        self.failures.with_label_values(&[why.label()]).inc();
    }

    /// An HTTP health check took `took`.
    pub fn health_check(&self, took: Duration) {
        self.health_check.observe(took.as_secs_f64());
    }

    /// A report's round trip took `took`; `ok` when the cluster took it.
    pub fn report(&self, took: Duration, ok: bool) {
        self.report.observe(took.as_secs_f64());
        let result = if ok { "ok" } else { "failed" };
        self.reports.with_label_values(&[result]).inc();
        if ok {
            *self.last_ok.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        }
    }

    /// The exposition text now.
    pub fn render(&self) -> String {
        let last = *self.last_ok.lock().unwrap_or_else(|e| e.into_inner());
        self.last_report_age.set(last.elapsed().as_secs_f64());
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::warn!(error = %e, "cannot encode the agent's metrics");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

async fn scrape() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(metrics().render())
}

/// Serves `GET /metrics` on `addr` from a thread of its own; bound before it returns, so a taken
/// port is an error at start. Returns the address bound.
pub fn serve(addr: SocketAddr) -> anyhow::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| anyhow::anyhow!("--metrics-listen {addr}: cannot listen: {e}"))?;
    let bound = listener.local_addr()?;
    metrics();
    let server = move || -> std::io::Result<()> {
        actix_web::rt::System::new().block_on(async move {
            HttpServer::new(|| App::new().route("/metrics", web::get().to(scrape)))
                .workers(1)
                .max_connections(64)
                .disable_signals()
                .listen(listener)?
                .run()
                .await
        })
    };
    std::thread::Builder::new()
        .name("agent-metrics".into())
        .spawn(move || {
            if let Err(e) = server() {
                tracing::error!(error = %e, "the metrics listener stopped");
            }
        })?;
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_is_there_from_the_start_and_counts() {
        let m = AgentMetrics::new().unwrap();
        let text = m.render();
        for series in [
            "convoy_agent_installs_total{result=\"ok\"} 0",
            "convoy_agent_failures_total{reason=\"download\"} 0",
            "convoy_agent_failures_total{reason=\"unhealthy\"} 0",
            "convoy_agent_health_check_seconds_count 0",
            "convoy_agent_report_seconds_count 0",
        ] {
            assert!(text.contains(series), "{series} not in\n{text}");
        }
        m.install(true);
        m.failure(Failure::Exited);
        m.report(Duration::from_millis(3), true);
        let text = m.render();
        assert!(
            text.contains("convoy_agent_installs_total{result=\"ok\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("convoy_agent_failures_total{reason=\"exited\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("convoy_agent_reports_total{result=\"ok\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("convoy_agent_report_seconds_count 1"),
            "{text}"
        );
    }
}
