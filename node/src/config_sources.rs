//! Where a server's configuration comes from, as given: the TOML file's keys ([`FileConfig`]), the
//! `convoy server` flags and their `CONVOY_*` variables ([`ServerArgs`]); `config.rs` merges and checks them.

use std::path::{Path, PathBuf};

use clap::Args;
use convoy_raft::NodeId;
use serde::Deserialize;

use crate::config_error::{invalid, ConfigError};

/// One founding member, as in `[[initial_cluster]]`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct InitialMember {
    /// The member's id.
    pub id: NodeId,
    /// Its transport address.
    pub raft_addr: String,
    /// Its HTTP address.
    pub http_addr: String,
}

/// The config file's keys (all optional here; required ones are checked after merging).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub(crate) id: Option<NodeId>,
    pub(crate) data_dir: Option<PathBuf>,
    pub(crate) http_addr: Option<String>,
    pub(crate) raft_addr: Option<String>,
    pub(crate) cluster_secret_file: Option<PathBuf>,
    pub(crate) initial_cluster_state: Option<String>,
    #[serde(default)]
    pub(crate) initial_cluster: Vec<InitialMember>,
    pub(crate) heartbeat_ms: Option<u64>,
    pub(crate) election_timeout_min_ms: Option<u64>,
    pub(crate) election_timeout_max_ms: Option<u64>,
    pub(crate) snapshot_every: Option<u64>,
    pub(crate) snapshot_max_every: Option<u64>,
    pub(crate) snapshot_chunk_bytes: Option<usize>,
    pub(crate) log_memtable_mb: Option<u64>,
    pub(crate) log_compaction: Option<String>,
    pub(crate) background_io_mb_per_sec: Option<u64>,
    pub(crate) log_wal_dir: Option<PathBuf>,
    pub(crate) node_timeout_ms: Option<u64>,
    pub(crate) deployment_history: Option<u32>,
    pub(crate) forget_nodes_after: Option<String>,
    pub(crate) request_timeout_ms: Option<u64>,
    pub(crate) enable_fault_injection: Option<bool>,
    pub(crate) tls_cert_file: Option<PathBuf>,
    pub(crate) tls_key_file: Option<PathBuf>,
    pub(crate) tls_client_ca_file: Option<PathBuf>,
    pub(crate) tls_ca_file: Option<PathBuf>,
    pub(crate) bootstrap_token_file: Option<PathBuf>,
    pub(crate) insecure_no_auth: Option<bool>,
    pub(crate) allowed_hosts: Option<Vec<String>>,
    pub(crate) agent_report_bytes_per_sec: Option<u64>,
    pub(crate) agent_reports_per_sec: Option<u64>,
    pub(crate) max_concurrent_downloads: Option<u32>,
    pub(crate) max_concurrent_installs: Option<u32>,
    pub(crate) log_format: Option<String>,
    /// `[[analysis_provider]]`: the Prometheus servers analyses may name (file only, never a flag).
    #[serde(default)]
    pub(crate) analysis_provider: Vec<crate::analysis::provider::ProviderFile>,
}

/// `convoy server` flags; each has a `CONVOY_*` variable and a config-file key of the same name.
#[derive(Clone, Debug, Default, Args)]
pub struct ServerArgs {
    /// TOML config file; flags and CONVOY_* variables override its keys.
    #[arg(long, env = "CONVOY_CONFIG")]
    pub config: Option<PathBuf>,
    /// This server's id (unique, non-zero).
    #[arg(long, env = "CONVOY_ID")]
    pub id: Option<NodeId>,
    /// Data directory (RocksDB log, vote, snapshots).
    #[arg(long, env = "CONVOY_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// HTTP API address, e.g. 127.0.0.1:8081.
    #[arg(long, env = "CONVOY_HTTP_ADDR")]
    pub http_addr: Option<String>,
    /// Internal transport address, e.g. 127.0.0.1:9081.
    #[arg(long, env = "CONVOY_RAFT_ADDR")]
    pub raft_addr: Option<String>,
    /// File holding the cluster secret peers authenticate with.
    #[arg(long, env = "CONVOY_CLUSTER_SECRET_FILE")]
    pub cluster_secret_file: Option<PathBuf>,
    /// "new" bootstraps from initial_cluster when data_dir is empty; "existing" waits to be added.
    #[arg(long, env = "CONVOY_INITIAL_CLUSTER_STATE")]
    pub initial_cluster_state: Option<String>,
    /// Founding members as `id=raft_addr=http_addr,...` (replaces the file's [[initial_cluster]]).
    #[arg(long, env = "CONVOY_INITIAL_CLUSTER")]
    pub initial_cluster: Option<String>,
    /// Raft heartbeat period in ms (default 50).
    #[arg(long, env = "CONVOY_HEARTBEAT_MS", value_parser = convoy_time::parse_millis)]
    pub heartbeat_ms: Option<u64>,
    /// Lower bound of the election timeout in ms (default 250).
    #[arg(long, env = "CONVOY_ELECTION_TIMEOUT_MIN_MS", value_parser = convoy_time::parse_millis)]
    pub election_timeout_min_ms: Option<u64>,
    /// Upper bound of the election timeout in ms (default 500).
    #[arg(long, env = "CONVOY_ELECTION_TIMEOUT_MAX_MS", value_parser = convoy_time::parse_millis)]
    pub election_timeout_max_ms: Option<u64>,
    /// Build a snapshot after this many log entries, more as the state grows (default 10000).
    #[arg(long, env = "CONVOY_SNAPSHOT_EVERY")]
    pub snapshot_every: Option<u64>,
    /// The most log entries between two snapshots however large the state (default 1000000);
    /// at or below `snapshot_every` the interval is fixed.
    #[arg(long, env = "CONVOY_SNAPSHOT_MAX_EVERY")]
    pub snapshot_max_every: Option<u64>,
    /// Test knob: stream snapshots to followers in chunks of this many bytes (default 4 MiB,
    /// 1..=16 MiB); tests lower it so that a small snapshot is many chunks.
    #[arg(long, env = "CONVOY_SNAPSHOT_CHUNK_BYTES")]
    pub snapshot_chunk_bytes: Option<usize>,
    /// Size of the raft log's RocksDB memtable in MiB (default 8, at most 1024): larger flushes less
    /// often, and a restart after a crash replays more.
    #[arg(long, env = "CONVOY_LOG_MEMTABLE_MB")]
    pub log_memtable_mb: Option<u64>,
    /// Compaction style of the raft log's RocksDB files: "level" (default) or "universal".
    #[arg(long, env = "CONVOY_LOG_COMPACTION")]
    pub log_compaction: Option<String>,
    /// Cap on what RocksDB's flushes and compactions write, MiB/s (default 0: no cap), so that they
    /// leave the disk to the log's fsyncs.
    #[arg(long, env = "CONVOY_BACKGROUND_IO_MB_PER_SEC")]
    pub background_io_mb_per_sec: Option<u64>,
    /// Directory of the raft log's write-ahead log, e.g. on a disk of its own (default: inside the
    /// data dir). Fixed when the data dir is created; a later start with another is refused.
    #[arg(long, env = "CONVOY_LOG_WAL_DIR")]
    pub log_wal_dir: Option<PathBuf>,
    /// A node that stops reporting for this long becomes inactive, in ms (default 30000).
    #[arg(long, env = "CONVOY_NODE_TIMEOUT_MS", value_parser = convoy_time::parse_millis)]
    pub node_timeout_ms: Option<u64>,
    /// Finished deployments that keep their node list and node events (default 1000); older ones
    /// keep only their summary.
    #[arg(long, env = "CONVOY_DEPLOYMENT_HISTORY")]
    pub deployment_history: Option<u32>,
    /// A node in no consumer that stops reporting for this long is forgotten (humantime, e.g. `7d`,
    /// the default; `0s`: never).
    #[arg(long, env = "CONVOY_FORGET_NODES_AFTER")]
    pub forget_nodes_after: Option<String>,
    /// How long a write may wait for a leader (forwarding and retries included), in ms (default 10000).
    #[arg(long, env = "CONVOY_REQUEST_TIMEOUT_MS", value_parser = convoy_time::parse_millis)]
    pub request_timeout_ms: Option<u64>,
    /// Test only: expose `POST /v1/debug/faults` to drop or delay this server's outgoing RPCs.
    #[arg(long, env = "CONVOY_ENABLE_FAULT_INJECTION")]
    pub enable_fault_injection: Option<bool>,
    /// PEM certificate chain of the HTTP API; with `tls_key_file`, the API speaks only HTTPS.
    #[arg(long, env = "CONVOY_TLS_CERT_FILE")]
    pub tls_cert_file: Option<PathBuf>,
    /// PEM private key of `tls_cert_file`.
    #[arg(long, env = "CONVOY_TLS_KEY_FILE")]
    pub tls_key_file: Option<PathBuf>,
    /// With TLS: every client must present a certificate chaining to this PEM CA.
    #[arg(long, env = "CONVOY_TLS_CLIENT_CA_FILE")]
    pub tls_client_ca_file: Option<PathBuf>,
    /// With TLS: the PEM CA this server trusts when it calls another server's API (forwarding).
    #[arg(long, env = "CONVOY_TLS_CA_FILE")]
    pub tls_ca_file: Option<PathBuf>,
    /// File holding the first admin token's secret: turns token auth on; the first leader of a new
    /// cluster creates the admin token `bootstrap` from it (once).
    #[arg(long, env = "CONVOY_BOOTSTRAP_TOKEN_FILE")]
    pub bootstrap_token_file: Option<PathBuf>,
    /// Serve the API without tokens on a non-loopback http_addr (a WARN is logged at start).
    #[arg(long, env = "CONVOY_INSECURE_NO_AUTH")]
    pub insecure_no_auth: Option<bool>,
    /// Host names (`name` or `name:port`, comma-separated) the API answers to besides addresses,
    /// `localhost` and the members' http_addr: the names a proxy or DNS gives the cluster. Any other
    /// `Host` is refused (DNS rebinding).
    #[arg(long, env = "CONVOY_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Option<Vec<String>>,
    /// Report bytes per second one token may send to this server (`POST /v1/nodes/{id}/report` and
    /// `/v1/nodes/reports`, counted from Content-Length), beyond a burst of 4 s of it (at least 4 MiB);
    /// then 429 with Retry-After (default 1048576, 1024..=1073741824).
    #[arg(long, env = "CONVOY_AGENT_REPORT_BYTES_PER_SEC")]
    pub agent_report_bytes_per_sec: Option<u64>,
    /// Report requests per second one token may send to this server, beyond a burst of 4 s of it;
    /// then 429 with Retry-After (default 2000, 1..=1000000).
    #[arg(long, env = "CONVOY_AGENT_REPORTS_PER_SEC")]
    pub agent_reports_per_sec: Option<u64>,
    /// At most this many nodes downloading at once across every deployment of the cluster (default: no
    /// limit, 1..=1000000). The startup value of the replicated limit: a leader proposes it while no one
    /// set the limits with `PUT /v1/cluster/limits` (DEPLOYMENTS.md §16).
    #[arg(long, env = "CONVOY_MAX_CONCURRENT_DOWNLOADS")]
    pub max_concurrent_downloads: Option<u32>,
    /// At most this many nodes installing at once across every deployment of the cluster (default: no
    /// limit, 1..=1000000); proposed like `max_concurrent_downloads`.
    #[arg(long, env = "CONVOY_MAX_CONCURRENT_INSTALLS")]
    pub max_concurrent_installs: Option<u32>,
    /// Development mode: one server on loopback (`--http-addr`, default 127.0.0.1:7700) with a temporary
    /// data dir removed on exit and a printed admin token (see `convoy_node::server::devmode`).
    #[arg(long, env = "CONVOY_DEV", conflicts_with_all = ["config", "initial_cluster", "id", "data_dir"])]
    pub dev: bool,
}

/// The config file at `path`, parsed.
pub(crate) fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    toml::from_str(&text).map_err(|source| ConfigError::Parse {
        path: path.to_path_buf(),
        source: Box::new(source),
    })
}

/// `path`, relative to `base` unless absolute (a config file's paths are relative to its directory).
pub(crate) fn relative_to(base: &Path, path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        path
    } else {
        base.join(path)
    }
}

/// Parses `1=127.0.0.1:9081=127.0.0.1:8081,2=...`.
pub(crate) fn parse_initial_cluster(spec: &str) -> Result<Vec<InitialMember>, ConfigError> {
    spec.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|item| {
            let parts: Vec<&str> = item.trim().split('=').collect();
            match parts.as_slice() {
                [id, raft_addr, http_addr] => Ok(InitialMember {
                    id: id.parse().map_err(|_| {
                        invalid("initial_cluster", item, "member id must be a number")
                    })?,
                    raft_addr: raft_addr.to_string(),
                    http_addr: http_addr.to_string(),
                }),
                _ => Err(invalid(
                    "initial_cluster",
                    item,
                    "expected id=raft_addr=http_addr",
                )),
            }
        })
        .collect()
}
