//! How a local cluster's servers are configured and placed, and which `convoy` binary runs them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::files::new_admin_token;

/// How long [`super::Cluster::start`] waits for the founders to agree on a leader.
pub const START_PATIENCE: Duration = Duration::from_secs(20);

/// Where each server of a local cluster runs and listens when not on free loopback ports of this
/// host: the lab's network namespaces implement it. The product only ever uses loopback.
pub trait Placement: std::fmt::Debug + Send + Sync {
    /// The highest server id that has a place (founders and the servers that may join).
    fn max_id(&self) -> u64;
    /// Server `id`'s (transport, HTTP) addresses.
    fn addresses(&self, id: u64) -> (String, String);
    /// The command prepended to server `id`'s (e.g. `ip netns exec NS`).
    fn launcher(&self, id: u64) -> Vec<String>;
    /// Host names or addresses the cluster's TLS certificate must cover besides loopback.
    fn hosts(&self) -> Vec<String>;
    /// Lines added to every server's config when it runs without token auth (e.g.
    /// `insecure_no_auth = true` for servers on private, non-loopback addresses).
    fn config_without_auth(&self) -> String;
}

/// How the local servers are configured. `None` leaves a key to the server's own default.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// Founding servers (ids 1..=n).
    pub servers: u64,
    /// Raft heartbeat, ms.
    pub heartbeat_ms: u64,
    /// Election timeout range, ms.
    pub election_ms: (u64, u64),
    /// A node silent this long becomes inactive, ms.
    pub node_timeout_ms: Option<u64>,
    /// How long a write waits for a leader and a quorum, ms.
    pub request_timeout_ms: Option<u64>,
    /// Entries between snapshots while the state is small.
    pub snapshot_every: u64,
    /// The most entries between snapshots; `Some(snapshot_every)` fixes the interval (benchmarks
    /// that need a snapshot of a large state after a known number of writes). `None`: the
    /// server's default.
    pub snapshot_max_every: Option<u64>,
    /// Serve `POST /v1/debug/faults` (the lab's partitions need it).
    pub fault_injection: bool,
    /// The servers' `RUST_LOG`.
    pub log_filter: String,
    /// Where the servers run and listen; `None`: free loopback ports of this host.
    pub placement: Option<Arc<dyn Placement>>,
    /// Lines appended to every server's config file.
    pub extra: String,
    /// Keep each server's write-ahead log in `WAL_ROOT/<id>` (`log_wal_dir`) instead of its data
    /// dir, e.g. on another disk; `None`: in the data dir.
    pub wal_root: Option<PathBuf>,
    /// The `convoy` binary to run; `None`: [`convoy_bin`].
    pub exe: Option<PathBuf>,
    /// Serve the API over HTTPS with a development CA made for the cluster (`dir/tls`).
    pub tls: bool,
    /// With `tls`: servers require client certificates (the harness's clients present one).
    pub tls_client_auth: bool,
    /// Run with token auth: this secret becomes the `bootstrap` admin token (written to
    /// `dir/admin-token`, 0600) and the harness's clients send it.
    pub bootstrap_token: Option<String>,
}

impl Default for ClusterOptions {
    /// What the demo, chaos and the benchmarks run: three servers, quiet logs.
    fn default() -> Self {
        Self {
            servers: 3,
            heartbeat_ms: 50,
            election_ms: (250, 500),
            node_timeout_ms: Some(10_000),
            request_timeout_ms: None,
            snapshot_every: 10_000,
            snapshot_max_every: None,
            fault_injection: false,
            log_filter: "warn".into(),
            placement: None,
            extra: String::new(),
            wal_root: None,
            exe: None,
            tls: false,
            tls_client_auth: false,
            bootstrap_token: None,
        }
    }
}

impl ClusterOptions {
    /// What the multi-process tests run: `n` servers, the server's own node timeout, writes that give
    /// up after 3 s, the fault layer on, logs at `$CONVOY_TEST_LOG` (default: the server's own).
    pub fn for_tests(n: u64) -> Self {
        Self {
            servers: n,
            node_timeout_ms: None,
            request_timeout_ms: Some(3_000),
            fault_injection: true,
            log_filter: std::env::var("CONVOY_TEST_LOG")
                .unwrap_or_else(|_| crate::logging::DEFAULT_FILTER.into()),
            ..Self::default()
        }
    }

    /// Token auth on, as in production: a fresh admin token becomes the bootstrap token (written
    /// to `DIR/admin-token`), and every client the cluster hands out sends it.
    pub fn with_auth(self) -> Self {
        Self {
            bootstrap_token: Some(new_admin_token()),
            ..self
        }
    }
}

/// The `convoy` binary to start servers from: `$CONVOY_BIN`; else this process itself when it is
/// `convoy`; else `target/<profile>/convoy` beside this binary (the lab's `convoy-lab`) or beside a
/// test binary (`target/<profile>/deps/<test>`).
pub fn convoy_bin() -> PathBuf {
    if let Ok(path) = std::env::var("CONVOY_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("current exe");
    if exe.file_name().is_some_and(|n| n == "convoy") {
        return exe;
    }
    let beside = exe.parent().map(|dir| dir.join("convoy"));
    if let Some(bin) = beside.filter(|b| b.exists()) {
        return bin;
    }
    let profile_dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = profile_dir.join("convoy");
    assert!(
        bin.exists(),
        "{} not found: build it first (`cargo build -p convoy-node`) or set CONVOY_BIN",
        bin.display()
    );
    bin
}
