//! Timings of the replica's disk work (log appends, WAL fsyncs, snapshot builds and installs), kept in a
//! process-wide Prometheus registry that the server's `GET /metrics` encodes with its own.

use std::sync::OnceLock;
use std::time::Duration;

use prometheus::{Gauge, Histogram, HistogramOpts, IntCounter, IntGauge, Registry};

/// The histograms and counters of this module, registered once per process.
pub struct Stats {
    registry: Registry,
    /// Seconds to write one batch of entries to RocksDB (before its fsync).
    pub append: Histogram,
    /// Seconds per WAL fsync (one fsync covers every append queued while the previous one ran).
    pub fsync: Histogram,
    /// Seconds to build a snapshot.
    pub snapshot_build: Histogram,
    /// Seconds to verify and install a snapshot received from the leader.
    pub snapshot_install: Histogram,
    /// Bytes of the last snapshot built or installed here.
    pub snapshot_bytes: IntGauge,
    /// Snapshots built here.
    pub snapshots_built: IntCounter,
    /// Snapshots installed here.
    pub snapshots_installed: IntCounter,
    /// Seconds the apply lock is held per applied chunk of entries (writers and readers wait meanwhile).
    pub apply_pause: Histogram,
    /// The longest apply-lock hold per chunk since the process started, seconds.
    pub apply_pause_max: Gauge,
    /// Seconds the apply lock is held to capture the state for a snapshot (the state machine's `freeze`, or
    /// the whole serialization when it cannot freeze).
    pub snapshot_freeze: Histogram,
    /// The longest such hold since the process started, seconds.
    pub snapshot_freeze_max: Gauge,
    /// On a leader: followers refused because their log went backwards (network `reversion`).
    pub follower_reversions: IntCounter,
    /// Handshakes refused for identity: another cluster, or a replaced data dir (either side).
    pub identity_refusals: IntCounter,
}

/// Buckets for apply-loop pauses: 10 µs to 1 s.
const PAUSE_BUCKETS: &[f64] = &[
    0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25,
    1.0,
];

fn gauge(name: &str, help: &str) -> Gauge {
    Gauge::new(name, help).expect("valid gauge")
}

/// Observes `took` in `histogram` and raises `max` to it if longer.
fn observe_pause(histogram: &Histogram, max: &Gauge, took: Duration) {
    let secs = took.as_secs_f64();
    histogram.observe(secs);
    if secs > max.get() {
        max.set(secs);
    }
}

/// Records how long one applied chunk held the apply lock.
pub fn record_apply_pause(took: Duration) {
    let s = stats();
    observe_pause(&s.apply_pause, &s.apply_pause_max, took);
}

/// Records how long capturing the state for a snapshot held the apply lock.
pub fn record_snapshot_freeze(took: Duration) {
    let s = stats();
    observe_pause(&s.snapshot_freeze, &s.snapshot_freeze_max, took);
}

/// Buckets for disk latencies: 50 µs to 2.5 s.
const DISK_BUCKETS: &[f64] = &[
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5,
];
/// Buckets for snapshots: 1 ms to 5 min.
const SNAPSHOT_BUCKETS: &[f64] = &[
    0.001, 0.01, 0.05, 0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

fn histogram(name: &str, help: &str, buckets: &[f64]) -> Histogram {
    Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets.to_vec()))
        .expect("valid histogram options")
}

impl Stats {
    fn new() -> Self {
        let stats = Self {
            registry: Registry::new(),
            append: histogram(
                "convoy_raft_append_seconds",
                "Time to write a batch of raft log entries to RocksDB, before the fsync.",
                DISK_BUCKETS,
            ),
            fsync: histogram(
                "convoy_raft_fsync_seconds",
                "Time of one raft log WAL fsync (shared by the appends queued behind it).",
                DISK_BUCKETS,
            ),
            snapshot_build: histogram(
                "convoy_raft_snapshot_build_seconds",
                "Time to build a snapshot of the state machine.",
                SNAPSHOT_BUCKETS,
            ),
            snapshot_install: histogram(
                "convoy_raft_snapshot_install_seconds",
                "Time to verify and install a snapshot received from the leader.",
                SNAPSHOT_BUCKETS,
            ),
            snapshot_bytes: IntGauge::new(
                "convoy_raft_snapshot_bytes",
                "Size of the last snapshot built or installed on this server.",
            )
            .expect("valid gauge"),
            snapshots_built: IntCounter::new(
                "convoy_raft_snapshots_built_total",
                "Snapshots built on this server.",
            )
            .expect("valid counter"),
            snapshots_installed: IntCounter::new(
                "convoy_raft_snapshots_installed_total",
                "Snapshots received from the leader and installed on this server.",
            )
            .expect("valid counter"),
            apply_pause: histogram(
                "convoy_apply_pause_seconds",
                "Time the apply lock is held per applied chunk of log entries (writers and reads wait).",
                PAUSE_BUCKETS,
            ),
            apply_pause_max: gauge(
                "convoy_apply_pause_max_seconds",
                "The longest apply-lock hold per applied chunk since this server started.",
            ),
            snapshot_freeze: histogram(
                "convoy_snapshot_freeze_seconds",
                "Time the apply lock is held to capture the state for a snapshot.",
                PAUSE_BUCKETS,
            ),
            snapshot_freeze_max: gauge(
                "convoy_snapshot_freeze_max_seconds",
                "The longest apply-lock hold to capture the state for a snapshot since this server started.",
            ),
            follower_reversions: IntCounter::new(
                "convoy_raft_follower_reversions_total",
                "AppendEntries answers refused on this leader because the follower's log went backwards.",
            )
            .expect("valid counter"),
            identity_refusals: IntCounter::new(
                "convoy_raft_identity_refusals_total",
                "Transport handshakes refused for identity (another cluster, a replaced data dir), either side.",
            )
            .expect("valid counter"),
        };
        let r = &stats.registry;
        for c in [
            Box::new(stats.append.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(stats.fsync.clone()),
            Box::new(stats.snapshot_build.clone()),
            Box::new(stats.snapshot_install.clone()),
            Box::new(stats.snapshot_bytes.clone()),
            Box::new(stats.snapshots_built.clone()),
            Box::new(stats.snapshots_installed.clone()),
            Box::new(stats.apply_pause.clone()),
            Box::new(stats.apply_pause_max.clone()),
            Box::new(stats.snapshot_freeze.clone()),
            Box::new(stats.snapshot_freeze_max.clone()),
            Box::new(stats.follower_reversions.clone()),
            Box::new(stats.identity_refusals.clone()),
        ] {
            r.register(c).expect("names are unique");
        }
        stats
    }

    /// The registry holding these metrics, to encode beside the server's own.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }
}

/// This process's raft statistics.
pub fn stats() -> &'static Stats {
    static STATS: OnceLock<Stats> = OnceLock::new();
    STATS.get_or_init(Stats::new)
}

/// Records a snapshot built (`installed == false`) or installed, its duration and size.
pub fn record_snapshot(installed: bool, took: Duration, bytes: u64) {
    let s = stats();
    if installed {
        s.snapshot_install.observe(took.as_secs_f64());
        s.snapshots_installed.inc();
    } else {
        s.snapshot_build.observe(took.as_secs_f64());
        s.snapshots_built.inc();
    }
    s.snapshot_bytes.set(bytes as i64);
}
